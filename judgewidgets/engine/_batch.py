"""Batch judging: the calls a run would send, collected into the providers' batch APIs at half the price.

`CallSession.complete` hands every request that missed the call cache to the run's `Batcher` instead of the
per-model limit and the transport. The batcher collects requests until the run goes quiet (no new request for
`Batching.quiet_s`: later calls depend on earlier answers, re-asks and commit-first's shared answer among them,
so a batch is sent when the run waits, not when the input ends), groups them by protocol, server, key (and
model, for OpenAI), writes each batch down (`BatchStore`, beside the call cache) before uploading it, polls it,
and reads every answer back with the same parsing as a live call's, into the call cache. custom_id is the
request's `cache_key()`: a rerun of the same cell, or `resume_batch` after a restart, finds its requests in the
recorded batch and waits for that batch instead of paying again. Requests the batch did not answer (expired,
failed) are resent live, or once more as a batch with `retry="batch"`; a cancelled batch's are recorded failed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._errors import ConfigurationError, JudgeCallError
from ._batch_api import BatchAPI, BatchState, Outcome, Target, batch_target
from ._batch_store import BATCHES_FILE, BatchRecord, BatchStore, default_batch_store
from ._cache import CallCache
from ._litellm import import_litellm, routed_model
from ._openai_http import ROUTING_KWARGS, OpenAIHTTPTransport, chat_body, openai_endpoint, parse_completion
from ._request import ChatRequest, Completion, compact_json

if TYPE_CHECKING:
    from ._client import CallSession, CallSettings

__all__ = [
    "BatchRetry",
    "Batcher",
    "Batching",
    "anthropic_body",
    "batching_of",
    "check_batchable",
    "recipe_bytes",
]

logger = logging.getLogger("judgewidgets.engine")

MAX_BATCH_REQUESTS = 50_000  # OpenAI's limit per batch file (Anthropic's is 100,000)
MAX_BATCH_BYTES = 190 * 1024**2  # under OpenAI's 200 MB file and Anthropic's 256 MB batch
CANCEL_TIMEOUT_S = 10.0  # for each batch cancelled when an interrupted run asks for it
BatchRetry = Literal["live", "batch"]


@dataclass(frozen=True)
class Batching:
    """How a run judges through the batch APIs (`batch=True` is `Batching()`).

    `retry`: what becomes of requests a batch did not answer (expired, failed): "live" resends them as live
    calls, "batch" once more as a new batch. `quiet_s`: how long the run must send nothing before what it
    collected is sent as a batch. `poll_s`: the first wait between polls, growing by half each time up to
    `max_poll_s`. `store`: the batches file (default: beside the judge's call cache, else in
    JUDGEWIDGETS_CACHE_DIR). `cancel_on_interrupt`: Ctrl-C or the stop button cancels the run's unfinished batches
    at the provider (default: they run on, for a rerun to pick up; what they answered before is billed either way).
    """

    retry: BatchRetry = "live"
    quiet_s: float = 0.2
    poll_s: float = 0.25
    max_poll_s: float = 60.0
    store: str | Path | None = None
    cancel_on_interrupt: bool = False

    def __post_init__(self) -> None:
        if self.retry not in ("live", "batch"):
            raise ConfigurationError(f"batch_retry must be 'live' or 'batch', got {self.retry!r}")
        if not (self.quiet_s >= 0 and self.poll_s > 0 and self.max_poll_s >= self.poll_s):
            raise ConfigurationError("Batching needs quiet_s >= 0 and 0 < poll_s <= max_poll_s")


def batching_of(batch: bool | Batching | None, batch_retry: BatchRetry | None = None) -> Batching | None:
    """The Batching a run method's `batch=` and `batch_retry=` arguments ask for (None: live calls)."""
    if batch is None or batch is False:
        return None
    if batch is True:
        return Batching(retry=batch_retry or "live")
    if isinstance(batch, Batching):
        return replace(batch, retry=batch_retry) if batch_retry is not None else batch
    raise ConfigurationError(f"batch must be True, False or a jw.Batching, got {batch!r}")


class _Unanswered(Exception):
    """A request the batch did not answer: resent (live or batched) unless `final`."""

    def __init__(self, message: str, final: bool = False) -> None:
        super().__init__(message)
        self.final = final


@dataclass
class _Waiting:
    request: ChatRequest
    settings: CallSettings
    target: Target
    future: asyncio.Future[Completion]
    tries: int = 0  # batches it was sent in by this run


@dataclass
class _Watch:
    record: BatchRecord
    store: BatchStore
    target: Target
    state: BatchState | None = None
    started: float = field(default_factory=time.monotonic)


class Batcher:
    """Collects a run's requests into provider batches and hands each caller its answer (see the module)."""

    def __init__(self, options: Batching, recipe: bytes | None = None) -> None:
        self.options = options
        self.run_id = uuid.uuid4().hex
        self.recipe = recipe
        self._waiting: dict[str, _Waiting] = {}  # custom_id → the request this run waits on
        self._pending: list[str] = []  # custom_ids collected, not yet sent
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watches: dict[str, asyncio.Task[None]] = {}  # local id → the task following that batch
        self._followed: dict[str, _Watch] = {}
        self._stores: dict[Path, BatchStore] = {}
        self._runs_recorded: set[Path] = set()
        self.batch_ids: list[str] = []

    # -- what the session calls ---------------------------------------------------------------------------------

    def check(self, request: ChatRequest, settings: CallSettings) -> Target:
        """The request's batch target; ConfigurationError when it cannot go into a batch: its provider has no batch
        API, or its judge sends through a transport of its own (a script, a fake), which a batch would bypass."""
        from ._litellm import LiteLLMTransport
        from ._routing import AutoTransport

        if not isinstance(settings.transport, (AutoTransport, OpenAIHTTPTransport, LiteLLMTransport)):
            raise ConfigurationError(
                f"batch=True sends the calls to the provider's batch API itself, so this judge's transport "
                f"{settings.transport!r} would not be used: judge it without batch=True"
            )
        return batch_target(request.model, request.params)

    async def complete(
        self, request: ChatRequest, settings: CallSettings, secrets: list[str], session: CallSession
    ) -> Completion:
        """The request's answer from a batch (or, for what a batch left unanswered, a live call)."""
        key = request.cache_key()
        waiting = self._waiting.get(key)
        if waiting is not None:  # the same request twice in one run: one custom_id, one answer
            return replace(await asyncio.shield(waiting.future), cached=True)
        target = self.check(request, settings)
        budget = session.budget
        reservation = await budget.reserve(request) if budget is not None else None
        cost: float | None = 0.0
        try:
            for tries in range(2):
                future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
                future.add_done_callback(lambda f: f.cancelled() or f.exception())
                self._waiting[key] = _Waiting(request, settings, target, future, tries)
                self._collect(key)
                try:
                    completion = await asyncio.shield(future)
                    cost = completion.cost_usd
                    return completion
                except _Unanswered as unanswered:
                    if unanswered.final or (self.options.retry == "batch" and tries == 1):
                        raise JudgeCallError(str(unanswered), status_code=None, attempts=tries + 1) from None
                    if self.options.retry == "live":
                        break
                finally:
                    if key in self._waiting and self._waiting[key].future is future:
                        del self._waiting[key]
        except asyncio.CancelledError:
            cost = None
            raise
        finally:
            if budget is not None and reservation is not None:
                budget.settle(reservation, cost)
        logger.info("resending live a request its batch did not answer")
        return await session.live(request, settings, secrets)

    async def aclose(self, interrupted: bool = False) -> None:
        """Stop collecting and following. The batches stay at the provider, written down, for a rerun or
        `resume_batch` to pick up; unless the run was `interrupted` (Ctrl-C, the stop button) and
        `Batching.cancel_on_interrupt` asks for its unfinished batches to be cancelled there."""
        if interrupted and self.options.cancel_on_interrupt:
            for watch in list(self._followed.values()):
                batch_id = watch.record.batch_id
                if batch_id is None or (watch.state is not None and watch.state.ended):
                    continue
                try:
                    state = await asyncio.wait_for(BatchAPI.of(watch.target).cancel(batch_id), CANCEL_TIMEOUT_S)
                    watch.store.update(watch.record.local_id, status=state.status)
                except Exception as exc:  # the batch runs on: jw.cancel_batch(batch_id) can still stop it
                    logger.warning("batch %s could not be cancelled: %r", batch_id, exc)
        self.close()

    def close(self) -> None:
        """Stop collecting and following (the run ended or was interrupted): the batches stay at the provider,
        written down, for a rerun or `resume_batch` to pick up."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for task in list(self._tasks):
            task.cancel()
        for store in self._stores.values():
            store.close()
        self._stores.clear()
        self._runs_recorded.clear()

    def describe(self) -> str | None:
        """The batches' own counts, for the progress bar: status, completed / total, failed, elapsed."""
        parts = []
        for watch in list(self._followed.values()):
            state = watch.state
            if state is None or state.ended:
                continue
            elapsed = time.monotonic() - watch.started
            parts.append(
                f"batch {state.batch_id}: {state.status}, {state.completed}/{state.total} done, "
                f"{state.failed} failed, {elapsed:.0f} s"
            )
        return "; ".join(parts) or None

    # -- collecting ---------------------------------------------------------------------------------------------

    def _collect(self, key: str) -> None:
        self._pending.append(key)
        loop = asyncio.get_running_loop()
        if self._timer is not None:
            self._timer.cancel()
        if len(self._pending) >= MAX_BATCH_REQUESTS:
            self._flush()
        else:
            self._timer = loop.call_later(self.options.quiet_s, self._flush)

    def _flush(self) -> None:
        self._timer = None
        keys, self._pending = self._pending, []
        if keys:
            self._spawn(self._send(keys))

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _fail(self, keys: Iterable[str], error: BaseException) -> None:
        for key in keys:
            waiting = self._waiting.get(key)
            if waiting is not None and not waiting.future.done():
                waiting.future.set_exception(error)

    def store(self, settings: CallSettings) -> BatchStore:
        """The batches file of a request's settings: `Batching.store`, else beside its call cache."""
        if self.options.store is not None:
            path = Path(self.options.store)
        elif settings.cache is not None:
            path = settings.cache.path.parent / BATCHES_FILE
        else:
            path = default_batch_store().path
        store = self._stores.get(path)
        if store is None:
            store = self._stores[path] = BatchStore(path)
        if path not in self._runs_recorded:
            store.add_run(self.run_id, self.recipe)
            self._runs_recorded.add(path)
        return store

    async def _send(self, keys: list[str]) -> None:
        """Send what was collected: each request to the recorded batch that already carries it, else in a new one."""
        groups: dict[tuple[Any, ...], dict[str, _Waiting]] = {}
        for key in keys:
            waiting = self._waiting.get(key)
            if waiting is not None and not waiting.future.done():
                store = self.store(waiting.settings)
                groups.setdefault((store.path, *waiting.target.group()), {})[key] = waiting
        for group in groups.values():
            first = next(iter(group.values()))
            store = self.store(first.settings)
            try:
                known = store.pending(k for k, w in group.items() if w.tries == 0)
                for local_id in dict.fromkeys(known.values()):
                    self._follow(store, local_id, first.target)
                fresh = {k: w for k, w in group.items() if k not in known}
                for chunk in await self._chunks(fresh):
                    await self._submit(store, first, chunk)
            except (ConfigurationError, JudgeCallError) as exc:
                self._fail(group, exc)
            except Exception as exc:  # a bug or an unreadable answer: every request of the group records it
                self._fail(group, JudgeCallError(f"batch submission failed: {exc!r}"[:2000], status_code=None))

    async def _chunks(self, group: dict[str, _Waiting]) -> list[list[tuple[str, dict[str, Any]]]]:
        """The requests' batch lines, in chunks within the providers' limits."""
        if not group:
            return []
        keys = list(group)
        requests = [w.request for w in group.values()]
        if next(iter(group.values())).target.provider == "anthropic":  # litellm builds each body: off the loop
            bodies = await asyncio.to_thread(lambda: [anthropic_body(r) for r in requests])
            lines = [{"custom_id": k, "params": b} for k, b in zip(keys, bodies, strict=True)]
        else:
            lines = [
                {"custom_id": k, "method": "POST", "url": "/v1/chat/completions", "body": openai_body(r)}
                for k, r in zip(keys, requests, strict=True)
            ]
        chunks: list[list[tuple[str, dict[str, Any]]]] = [[]]
        size = 0
        for key, line in zip(keys, lines, strict=True):
            length = len(compact_json(line)) + 1
            if chunks[-1] and (len(chunks[-1]) >= MAX_BATCH_REQUESTS or size + length > MAX_BATCH_BYTES):
                chunks.append([])
                size = 0
            chunks[-1].append((key, line))
            size += length
        return chunks

    async def _submit(self, store: BatchStore, first: _Waiting, chunk: list[tuple[str, dict[str, Any]]]) -> None:
        """Write the batch down, upload it, create it, write its id down, and follow it."""
        target, cache = first.target, first.settings.cache
        record = BatchRecord(
            local_id=uuid.uuid4().hex,
            run_id=self.run_id,
            provider=target.provider,
            base_url=target.base_url,
            model=target.model,
            key_env=target.key_env,
            cache_path=str(cache.path) if cache is not None else None,
            file_id=None,
            batch_id=None,
            status="preparing",
            n_requests=len(chunk),
            n_completed=0,
            n_failed=0,
            created_at=time.time(),
            collected=False,
        )
        store.add_batch(record, [key for key, _ in chunk])
        api = BatchAPI.of(target)
        metadata = {"judgewidgets_run": self.run_id, "judgewidgets_batch": record.local_id}
        # Interrupted on the way (Ctrl-C, a dead kernel), the record stays open: the next run finds the batch by its
        # file (OpenAI) or, when the provider never named one, sends its requests again.
        try:
            if target.provider == "openai":
                jsonl = b"".join(compact_json(line) + b"\n" for _, line in chunk)
                file_id = await api.upload(jsonl, f"judgewidgets-{record.local_id}.jsonl")
                store.update(record.local_id, file_id=file_id, status="uploaded")
                state = await api.create(file_id=file_id, metadata=metadata)
            else:
                state = await api.create(requests=[line for _, line in chunk])
        except (ConfigurationError, JudgeCallError):  # refused: nothing to resume
            store.update(record.local_id, status="not submitted", collected=1)
            raise
        store.update(record.local_id, batch_id=state.batch_id, status=state.status)
        self._follow(store, record.local_id, target)

    # -- following a batch --------------------------------------------------------------------------------------

    def _follow(self, store: BatchStore, local_id: str, target: Target) -> None:
        if local_id in self._watches:
            return
        task = asyncio.get_running_loop().create_task(self._watch(store, local_id, target))
        self._watches[local_id] = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch(self, store: BatchStore, local_id: str, target: Target) -> None:
        keys = store.custom_ids(local_id)
        try:
            await self._await_batch(store, local_id, target, keys)
        except (ConfigurationError, JudgeCallError) as exc:
            self._fail(keys, exc)
        except Exception as exc:
            self._fail(keys, JudgeCallError(f"following the batch failed: {exc!r}"[:2000], status_code=None))
        finally:
            self._watches.pop(local_id, None)

    async def _await_batch(self, store: BatchStore, local_id: str, target: Target, keys: list[str]) -> None:
        record = store.get(local_id)
        assert record is not None
        api = BatchAPI.of(target)
        if record.batch_id is None:  # the process that made it died before the provider named it
            state = await api.find(record.file_id) if record.file_id and target.provider == "openai" else None
            if state is None and record.file_id:
                state = await api.create(file_id=record.file_id, metadata={"judgewidgets_run": record.run_id})
            if state is None:  # never submitted: send its requests again
                store.update(local_id, status="not submitted", collected=1)
                self._resend(keys)
                return
            store.update(local_id, batch_id=state.batch_id, status=state.status)
            record = replace(record, batch_id=state.batch_id)
        assert record.batch_id is not None
        self.batch_ids.append(record.batch_id)
        watch = self._followed.setdefault(local_id, _Watch(record, store, target))
        wait = self.options.poll_s
        while True:
            state = await api.retrieve(record.batch_id)
            watch.state = state
            store.update(local_id, status=state.status, n_completed=state.completed, n_failed=state.failed)
            if state.ended:
                break
            await asyncio.sleep(wait)
            wait = min(wait * 1.5, self.options.max_poll_s)
        outcomes = await api.results(state)
        self._deliver(store, record, keys, outcomes, state)

    def _resend(self, keys: list[str]) -> None:
        for key in keys:
            if key in self._waiting and not self._waiting[key].future.done():
                self._collect(key)

    def _deliver(
        self, store: BatchStore, record: BatchRecord, keys: list[str], outcomes: dict[str, Outcome], state: BatchState
    ) -> None:
        """Put every answer in the call cache, then hand each waiting caller its answer or why there is none."""
        cache = self._cache_of(record, keys)
        answers: dict[str, Completion] = {}
        for key in keys:
            outcome = outcomes.get(key)
            if outcome is None or outcome.body is None:
                continue
            try:
                completion = batch_completion(record.provider, record.model, outcome.body, state.batch_id)
            except Exception:
                continue  # unreadable: treated as unanswered below
            answers[key] = completion
            if cache is not None:
                try:
                    cache.put(_Keyed(key), completion)  # type: ignore[arg-type]
                except Exception as exc:
                    logger.warning("the call cache %s could not keep a batch answer: %r", cache.path, exc)
        if cache is not None:
            cache.flush()
        store.update(record.local_id, collected=1, status=state.status)
        cancelled = state.status in ("cancelled", "cancelling", "canceling") or any(
            o.kind == "canceled" for o in outcomes.values()
        )
        for key in keys:
            waiting = self._waiting.get(key)
            if waiting is None or waiting.future.done():
                continue
            if key in answers:
                waiting.future.set_result(answers[key])
                continue
            outcome = outcomes.get(key)
            why = outcome.message if outcome is not None else "no result line"
            if cancelled and (outcome is None or outcome.kind == "canceled"):
                waiting.future.set_exception(_Unanswered(f"batch {state.batch_id} was cancelled: {why}", final=True))
            else:
                waiting.future.set_exception(_Unanswered(f"batch {state.batch_id} left it unanswered: {why}"))

    def _cache_of(self, record: BatchRecord, keys: list[str]) -> CallCache | None:
        for key in keys:
            waiting = self._waiting.get(key)
            if waiting is not None and waiting.settings.cache is not None:
                return waiting.settings.cache
        return CallCache(record.cache_path) if record.cache_path else None


@dataclass(frozen=True)
class _Keyed:
    """A stand-in request for the call cache: an answer the batch holds for a request this run did not make."""

    key: str

    def cache_key(self) -> str:
        return self.key


def openai_body(request: ChatRequest) -> dict[str, Any]:
    """The body of the request's batch line: the very body the fast path sends live."""
    endpoint = openai_endpoint(request.model, request.params)
    if endpoint is None:
        raise ConfigurationError(f"no OpenAI-compatible endpoint for model {request.model!r}")
    return chat_body(request, endpoint)


def anthropic_body(request: ChatRequest) -> dict[str, Any]:
    """The Messages body litellm sends for the request live, for an Anthropic batch's `params`: litellm's own
    mapping of the parameters (`get_optional_params`) and its Anthropic transformation (system blocks, the response
    schema as a forced tool, the prefill), less the flags it keeps for itself. The same body as litellm's
    `return_raw_request` gives (tests/engine/test_batch_bodies.py), at a thirtieth of its cost."""
    import_litellm()
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig
    from litellm.utils import get_optional_params

    params = {k: v for k, v in request.params.items() if k not in ROUTING_KWARGS}
    model = routed_model(request.model).partition("/")[2]
    try:
        optional = get_optional_params(model=model, custom_llm_provider="anthropic", **params)
        messages: list[Any] = [dict(m) for m in request.messages]
        body = AnthropicConfig().transform_request(model, messages, dict(optional), {}, {})
    except Exception as exc:
        raise ConfigurationError(f"litellm could not build the Messages body of {request.model!r}: {exc}") from exc
    for internal in _LITELLM_ONLY:
        body.pop(internal, None)
    return body


# Keys litellm's transformation leaves in the body for its own use and removes before sending it.
_LITELLM_ONLY = ("json_mode", "stream")


def batch_completion(provider: str, model: str, body: Any, batch_id: str) -> Completion:
    """A batch's answer read as a live call's is: a chat completion by the fast path's parser, a Messages message
    as litellm reads one (text, or the forced tool's arguments for a response schema); priced by kind of token at
    the batch price (`call_cost(batch=True)`), its list price beside it."""
    if provider == "openai":
        completion = parse_completion(model, compact_json(body), 0.0, batch=True)
    else:
        completion = anthropic_completion(model, body, batch=True)
    return replace(completion, batch_id=batch_id)


# Anthropic's stop reasons as litellm names them (OpenAI's finish reasons).
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


def anthropic_completion(model: str, message: Any, *, batch: bool = False) -> Completion:
    """A Completion from an Anthropic Messages `message` (a batch result's): its text (or, with no text, the forced
    tool's arguments, litellm's stand-in for a response schema), thinking apart, and its usage priced by kind
    (cache reads and writes in the prompt tokens, as litellm counts them)."""
    from ._prices import call_cost, list_cost

    blocks = message.get("content") or []
    text = "".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
    if not text:
        tool = next((b for b in blocks if b.get("type") == "tool_use"), None)
        if tool is not None:
            text = json.dumps(tool.get("input"))
    thinking = "".join(str(b.get("thinking") or "") for b in blocks if b.get("type") == "thinking") or None
    usage = message.get("usage") or {}
    read = usage.get("cache_read_input_tokens")
    write = usage.get("cache_creation_input_tokens")
    write_1h = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens")
    prompt = usage.get("input_tokens")
    if prompt is not None:
        prompt += int(read or 0) + int(write or 0)
    output = usage.get("output_tokens")
    cost = call_cost(
        model,
        prompt,
        output,
        cache_read_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=write_1h,
        batch=batch,
    )
    return Completion(
        content=text,
        prompt_tokens=prompt,
        completion_tokens=output,
        cost_usd=cost,
        prompt_cache_read_tokens=read,
        prompt_cache_write_tokens=write,
        list_cost_usd=list_cost(model, prompt, output),
        finish_reason=_FINISH.get(str(message.get("stop_reason")), message.get("stop_reason")),
        reasoning=thinking,
    )


def recipe_bytes(owner: Any, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
    """The pickled call `owner.method(*args, **kwargs)` for `resume_batch` to make again; None when it holds an
    API key (never written to disk: such a run resumes by running its cell again) or does not pickle."""
    import io

    from ._caller import Caller

    class _NoSecrets(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, Caller) and obj.secrets:
                raise _HoldsSecret
            return NotImplemented

    buffer = io.BytesIO()
    try:
        _NoSecrets(buffer).dump((owner, method, args, kwargs))
    except Exception:
        return None
    return buffer.getvalue()


class _HoldsSecret(Exception):
    pass


BATCH_PROVIDERS = frozenset({"openai", "anthropic", "hosted_vllm"})


def check_batchable(models: Iterable[str]) -> None:
    """ConfigurationError, before anything is sent, for a model whose provider has no batch API we speak."""
    from ._openai_http import provider_of

    for model in models:
        if provider_of(model) not in BATCH_PROVIDERS:
            raise ConfigurationError(
                f"model {model!r} has no batch API that judgewidgets speaks: batch=True takes OpenAI's Batch API "
                "('openai/...', or any OpenAI-compatible server named by api_base) and Anthropic's Message Batches "
                "API ('anthropic/...'); judge it without batch=True"
            )
