"""The providers' batch endpoints, spoken over HTTP: OpenAI's Batch API and Anthropic's Message Batches API.

OpenAI (and any OpenAI-compatible server): the requests go up as a JSONL file (`POST {base}/files`, purpose
"batch"), a batch is created from it (`POST {base}/batches`), polled (`GET {base}/batches/{id}`) and its output
and error files read (`GET {base}/files/{id}/content`). Anthropic: `POST /v1/messages/batches` with the requests
inline, polled at `/v1/messages/batches/{id}`, results read from its `results_url`. Each answer line is handed
back as the chat completion or Messages body it holds, for the same parsing as a live call's answer.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .._errors import ConfigurationError, JudgeCallError
from .._version import __version__
from ._litellm import is_local_model
from ._openai_http import BODY_KWARGS, ROUTING_KWARGS, auth_headers, openai_endpoint, provider_of

__all__ = ["BatchAPI", "BatchState", "Outcome", "Target", "batch_target"]

Protocol = Literal["openai", "anthropic"]
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
_TRIES = 4  # per HTTP request to the batch API: 429, 5xx and dropped connections are tried again
_BACKOFF_S = 1.0
_OPENAI_ENDED = frozenset({"completed", "expired", "cancelled", "failed"})


@dataclass(frozen=True)
class Target:
    """Where a request's batch goes: protocol, base URL, the model (litellm's string and the server's name) and
    the headers that authorise it (never written down: `key_env` names where a resumed run finds the key)."""

    provider: Protocol
    base_url: str
    model: str
    api_model: str
    key_env: str | None
    headers: tuple[tuple[str, str], ...]

    def group(self) -> tuple[Any, ...]:
        """Requests that can share one batch: one protocol, server and key; for OpenAI also one model."""
        return (self.provider, self.base_url, self.model if self.provider == "openai" else "", self.headers)


def batch_target(model: str, params: Mapping[str, Any]) -> Target:
    """The batch endpoint of a request; ConfigurationError when its provider has no batch API (or the request
    carries arguments a batch file cannot hold), before anything is sent."""
    provider = provider_of(model)
    if provider == "anthropic":
        base = str(params.get("api_base") or params.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or "")
        base = (base or ANTHROPIC_BASE_URL).rstrip("/")
        for suffix in ("/v1/messages", "/v1"):
            base = base.removesuffix(suffix)
        key = params.get("api_key") or os.environ.get("ANTHROPIC_API_KEY")
        headers = {"anthropic-version": ANTHROPIC_VERSION, **({"x-api-key": str(key)} if key else {})}
        extra = params.get("extra_headers") or params.get("headers") or {}
        headers.update({str(k): str(v) for k, v in extra.items()})
        name = model.partition("/")[2]
        return Target("anthropic", base, model, name, "ANTHROPIC_API_KEY", tuple(sorted(headers.items())))
    endpoint = None if is_local_model(model) else openai_endpoint(model, params)
    if endpoint is None:
        raise ConfigurationError(
            f"model {model!r} has no batch API that judgewidgets speaks: batch=True takes OpenAI's Batch API "
            "('openai/...', or any OpenAI-compatible server named by api_base) and Anthropic's Message Batches API "
            "('anthropic/...'); judge it without batch=True"
        )
    unknown = sorted(set(params) - BODY_KWARGS - ROUTING_KWARGS)
    if unknown:
        raise ConfigurationError(
            f"a batch file holds the chat API's own parameters only; {model!r} is given {', '.join(unknown)} "
            "(litellm's to interpret): judge it without batch=True or leave them out"
        )
    base = str(endpoint.url).removesuffix("/chat/completions")
    headers = auth_headers(params, endpoint) or {}
    return Target("openai", base, model, endpoint.model, endpoint.key_env, tuple(sorted(headers.items())))


@dataclass(frozen=True)
class BatchState:
    """A batch as the provider reports it, read the same way for both protocols."""

    batch_id: str
    status: str  # the provider's own word (OpenAI's status, Anthropic's processing_status)
    ended: bool
    total: int
    completed: int
    failed: int
    output_file_id: str | None = None
    error_file_id: str | None = None
    results_url: str | None = None
    raw: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Outcome:
    """One request's line in the results: the answer's body (`body`: a chat completion or a Messages message), or
    why there is none (`kind`: "error", "expired" or "canceled", and the provider's message)."""

    body: Mapping[str, Any] | None
    kind: str = "succeeded"
    message: str = ""
    status_code: int | None = None


class BatchAPI:
    """The batch endpoints of one `Target`; every method is one step of a batch's life."""

    def __init__(self, provider: Protocol, base_url: str, headers: Mapping[str, str]) -> None:
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self.headers = {"User-Agent": f"judgewidgets/{__version__}", **headers}

    @classmethod
    def of(cls, target: Target) -> BatchAPI:
        return cls(target.provider, target.base_url, dict(target.headers))

    def _url(self, path: str) -> str:
        return f"{self.base_url}{'/v1/messages/batches' if self.provider == 'anthropic' else '/batches'}{path}"

    async def _call(
        self, method: str, url: str, *, payload: Any = None, form: Any = None, creating: bool = False
    ) -> bytes:
        """One HTTP request, tried again on 429, 5xx and dropped connections; a 404 when creating is a
        ConfigurationError (the server has no batch API), any other refusal a JudgeCallError."""
        import aiohttp

        last = ""
        for attempt in range(_TRIES):
            if attempt:
                await asyncio.sleep(_BACKOFF_S * 2 ** (attempt - 1))
            try:
                async with aiohttp.ClientSession(headers=self.headers, trust_env=True) as session:
                    data = form() if form is not None else None
                    async with session.request(method, url, json=payload, data=data) as response:
                        body = await response.read()
                        status = response.status
            except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
                last = f"APIConnectionError: {type(exc).__name__}: {exc}"
                continue
            if status < 400:
                return body
            message = _error_message(body)
            if status == 404 and creating:
                raise ConfigurationError(
                    f"{url} answered 404 ({message}): this server has no {self._api_name()}; judge without batch=True"
                )
            last = f"HTTP {status} from {url}: {message}"
            if status != 429 and status < 500:
                break
        raise JudgeCallError(f"the {self._api_name()} failed: {last}"[:2000], status_code=None, attempts=_TRIES)

    def _api_name(self) -> str:
        return "Message Batches API" if self.provider == "anthropic" else "Batch API"

    # -- submitting ---------------------------------------------------------------------------------------------

    async def upload(self, jsonl: bytes, filename: str) -> str:
        """OpenAI: upload the batch's input file; its file id."""
        import aiohttp

        def form() -> aiohttp.FormData:
            data = aiohttp.FormData()
            data.add_field("purpose", "batch")
            data.add_field("file", jsonl, filename=filename, content_type="application/jsonl")
            return data

        body = await self._call("POST", f"{self.base_url}/files", form=form, creating=True)
        return str(json.loads(body)["id"])

    async def create(
        self,
        *,
        file_id: str | None = None,
        requests: list[dict[str, Any]] | None = None,
        metadata: dict[str, str] | None = None,
    ) -> BatchState:
        """Create the batch: OpenAI's from an uploaded file, Anthropic's from the requests themselves."""
        if self.provider == "anthropic":
            payload: dict[str, Any] = {"requests": requests}
        else:
            payload = {"input_file_id": file_id, "endpoint": "/v1/chat/completions", "completion_window": "24h"}
            if metadata:
                payload["metadata"] = metadata
        return self._state(json.loads(await self._call("POST", self._url(""), payload=payload, creating=True)))

    async def find(self, file_id: str) -> BatchState | None:
        """OpenAI: the batch made from `file_id`, when one was (a process that died as it created the batch)."""
        body = await self._call("GET", self._url("?limit=100"))
        for batch in json.loads(body).get("data") or []:
            if batch.get("input_file_id") == file_id:
                return self._state(batch)
        return None

    # -- following ----------------------------------------------------------------------------------------------

    async def retrieve(self, batch_id: str) -> BatchState:
        return self._state(json.loads(await self._call("GET", self._url(f"/{batch_id}"))))

    async def cancel(self, batch_id: str) -> BatchState:
        return self._state(json.loads(await self._call("POST", self._url(f"/{batch_id}/cancel"))))

    def _state(self, data: Mapping[str, Any]) -> BatchState:
        counts = data.get("request_counts") or {}
        if self.provider == "anthropic":
            status = str(data.get("processing_status"))
            failed = sum(int(counts.get(k) or 0) for k in ("errored", "canceled", "expired"))
            succeeded = int(counts.get("succeeded") or 0)
            total = succeeded + failed + int(counts.get("processing") or 0)
            return BatchState(
                str(data["id"]),
                status,
                status == "ended",
                total,
                succeeded,
                failed,
                results_url=data.get("results_url"),
                raw=data,
            )
        status = str(data.get("status"))
        return BatchState(
            str(data["id"]),
            status,
            status in _OPENAI_ENDED,
            int(counts.get("total") or 0),
            int(counts.get("completed") or 0),
            int(counts.get("failed") or 0),
            output_file_id=data.get("output_file_id"),
            error_file_id=data.get("error_file_id"),
            raw=data,
        )

    async def results(self, state: BatchState) -> dict[str, Outcome]:
        """custom_id → outcome of every request the ended batch reports on."""
        found: dict[str, Outcome] = {}
        if self.provider == "anthropic":
            url = state.results_url or self._url(f"/{state.batch_id}/results")
            for line in _lines(await self._call("GET", url)):
                found[str(line.get("custom_id"))] = _anthropic_outcome(line.get("result") or {})
            return found
        for file_id in (state.output_file_id, state.error_file_id):
            if file_id:
                for line in _lines(await self._call("GET", f"{self.base_url}/files/{file_id}/content")):
                    found[str(line.get("custom_id"))] = _openai_outcome(line)
        return found


def _lines(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def _openai_outcome(line: Mapping[str, Any]) -> Outcome:
    response = line.get("response") or {}
    error = line.get("error") or {}
    status = response.get("status_code")
    body = response.get("body")
    if status == 200 and isinstance(body, Mapping):
        return Outcome(body)
    if error:
        code = str(error.get("code") or "")
        kind = "expired" if code == "batch_expired" else "canceled" if code == "batch_cancelled" else "error"
        return Outcome(None, kind, f"{code}: {error.get('message') or ''}".strip(": "), status)
    return Outcome(None, "error", f"HTTP {status}: {_error_message(json.dumps(body).encode())}", status)


def _anthropic_outcome(result: Mapping[str, Any]) -> Outcome:
    kind = str(result.get("type"))
    if kind == "succeeded" and isinstance(result.get("message"), Mapping):
        return Outcome(result["message"])
    if kind == "errored":
        error = (result.get("error") or {}).get("error") or {}
        return Outcome(None, "error", f"{error.get('type')}: {error.get('message')}")
    return Outcome(None, kind, f"the request {kind} in its batch")


def _error_message(raw: bytes) -> str:
    try:
        data = json.loads(raw)
        error = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(error, dict):
            return str(error.get("message") or error)[:500]
        return str(error)[:500]
    except ValueError:
        return raw[:500].decode(errors="replace") or "(empty body)"
