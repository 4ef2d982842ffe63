"""The batch routes of `BatchTestServer`: OpenAI's Batch API and Anthropic's Message Batches API, as documented.

OpenAI: `POST /v1/files` (multipart, purpose "batch") → a file object; `POST /v1/batches` (input_file_id,
endpoint, completion_window) → a batch object whose `status` goes validating → in_progress → finalizing →
completed (or expired, cancelling → cancelled, failed) with `request_counts` {total, completed, failed};
`GET /v1/files/{id}/content` → the output file (one line per answered request: `custom_id` and `response`
{status_code, request_id, body}) or the error file (failed and expired requests: `response` with an error
body, or `error` {code, message}). Anthropic: `POST /v1/messages/batches` (requests: custom_id, params) → a
`message_batch` whose `processing_status` goes in_progress → ended (canceling on the way when cancelled),
`request_counts` {processing, succeeded, errored, canceled, expired}, and `results_url` → JSONL lines of
`custom_id` and `result` {type: succeeded (message) / errored (error) / canceled / expired}.

A batch ends `delay` seconds after it is created (read when it is asked about, so nothing runs between
requests). The first `expire` batches expire instead, with `expire_answered` of their requests answered. The
test directives of `OpenAITestServer` work per request: `[[reply:TEXT]]`, `[[fault:KIND]]` (the request fails
in the batch), `[[fault-once:KIND]]` (fails the first time it is seen, here or on the chat route).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from aiohttp import web

from ._chat_billing import ChatMeter
from ._faults import parse_directives
from ._openai import completion_body, error_body, word_count
from ._responders import Responder, content_text, last_user_text

__all__ = ["BatchPlan", "BatchService", "anthropic_message", "chat_view"]

_JSON = "application/json"
_EXPIRES_S = 24 * 3600
# The HTTP status and error type each directive fault has inside a batch (there is no timeout or malformed body
# in a results file: those are server errors there).
_STATUS = {
    "rate_limit": (429, "rate_limit_error"),
    "context_exceeded": (400, "invalid_request_error"),
    "content_policy": (400, "invalid_request_error"),
    "invalid_request": (400, "invalid_request_error"),
    "overloaded": (529, "overloaded_error"),
}


@dataclass
class BatchPlan:
    """How batches behave: `delay` seconds from creation to the end; the first `expire` batches expire with
    `expire_answered` (a share) of their requests answered; `missing` makes every batch route answer 404 (a
    server without a batch API); `shuffle` lists a batch's results in another order than its requests (both
    providers say they may: a result is matched to its request by `custom_id`, never by position)."""

    delay: float = 0.2
    expire: int = 0
    expire_answered: float = 0.5
    missing: bool = False
    shuffle: bool = False


@dataclass
class _Batch:
    id: str
    protocol: str  # "openai" | "anthropic"
    requests: list[dict[str, Any]]
    created: float
    expires: bool
    input_file_id: str | None = None
    endpoint: str = "/v1/chat/completions"
    metadata: dict[str, Any] | None = None
    cancelled_at: float | None = None
    ended_at: float | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    status: str = "validating"


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, timezone.utc).isoformat().replace("+00:00", "Z")


def chat_view(params: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages body as the OpenAI chat body a responder reads (system first, text content)."""
    messages: list[dict[str, Any]] = []
    system = params.get("system")
    if system:
        messages.append({"role": "system", "content": system if isinstance(system, str) else content_text(system)})
    for message in params.get("messages") or []:
        if isinstance(message, dict):
            messages.append({"role": message.get("role"), "content": content_text(message.get("content"))})
    return {**params, "messages": messages}


def anthropic_message(params: dict[str, Any], content: str, message_id: str, billing: Any = None) -> dict[str, Any]:
    """The Messages API answer to `params` with `content`, billed at the batch price to `billing` when given: the
    test server's own Messages answer (`testing/_anthropic.py`) where it exists, else a minimal one (a forced tool
    answered as that tool's input, parsed from `content`; anything else one text block; tokens are words)."""
    try:
        from ._anthropic import anthropic_message_body
    except ImportError:  # pragma: no cover - the minimal answer below, until the Messages route lands
        pass
    else:
        return anthropic_message_body(params, content, message_id=message_id, billing=billing, batch=True)
    view = chat_view(params)
    tool = (params.get("tool_choice") or {}).get("name") if isinstance(params.get("tool_choice"), dict) else None
    block: dict[str, Any]
    stop = "end_turn"
    if tool:
        try:
            block = {"type": "tool_use", "id": f"toolu_{message_id}", "name": tool, "input": json.loads(content)}
            stop = "tool_use"
        except ValueError:
            block = {"type": "text", "text": content}
    else:
        block = {"type": "text", "text": content}
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": params.get("model", "test"),
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": word_count(view), "output_tokens": len(content.split())},
    }


def _anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


class BatchService:
    """Files and batches of one running server, their routes, and `counts` of the requests each route got."""

    def __init__(self, responder: Responder, plan: BatchPlan, billing: Any = None) -> None:
        self.responder = responder
        self.plan = plan
        self.billing = billing  # the server's bill (its stats'), charged at the batch price
        self.counts: Counter[str] = Counter()
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.batches: dict[str, _Batch] = {}
        self.seen: set[str] = set()  # the requests a fault-once directive has failed already
        self._next = 0
        self._expired = 0

    def add_routes(self, app: web.Application) -> None:
        """Serve both providers' batch routes (and Anthropic's live Messages route) from `app`."""
        for prefix in ("/v1", ""):
            app.router.add_post(f"{prefix}/files", self.create_file)
            app.router.add_get(f"{prefix}/files/{{id}}", self.get_file)
            app.router.add_delete(f"{prefix}/files/{{id}}", self.delete_file)
            app.router.add_get(f"{prefix}/files/{{id}}/content", self.file_content)
            app.router.add_post(f"{prefix}/batches", self.create_batch)
            app.router.add_get(f"{prefix}/batches", self.list_batches)
            app.router.add_get(f"{prefix}/batches/{{id}}", self.get_batch)
            app.router.add_post(f"{prefix}/batches/{{id}}/cancel", self.cancel_batch)
        app.router.add_post("/v1/messages/batches", self.create_message_batch)
        app.router.add_get("/v1/messages/batches", self.list_message_batches)
        app.router.add_get("/v1/messages/batches/{id}", self.get_message_batch)
        app.router.add_get("/v1/messages/batches/{id}/results", self.message_batch_results)
        app.router.add_post("/v1/messages/batches/{id}/cancel", self.cancel_message_batch)
        app.router.add_delete("/v1/messages/batches/{id}", self.delete_message_batch)
        if not any(getattr(r, "canonical", None) == "/v1/messages" for r in app.router.resources()):
            app.router.add_post("/v1/messages", self.messages)  # a server without its own Messages route

    # -- shared -----------------------------------------------------------------------------------------------

    def _id(self, prefix: str) -> str:
        self._next += 1
        return f"{prefix}{self._next:024d}"

    def _count(self, request: web.Request, route: str) -> web.Response | None:
        self.counts[route] += 1
        if self.plan.missing:
            return web.Response(status=404, body=error_body("Not Found", "invalid_request_error"), content_type=_JSON)
        return None

    def _answer(self, protocol: str, body: dict[str, Any]) -> tuple[str | None, int, str, str]:
        """What one request gets: (content, status, error type, message); content None when it fails."""
        text = last_user_text(body)
        reply, sticky, once = parse_directives(text) if "[[" in text else (None, None, None)
        fault = sticky
        if fault is None and once is not None:
            key = json.dumps(body.get("messages"), sort_keys=True)
            if key not in self.seen:
                self.seen.add(key)
                fault = once
        if fault is not None:
            status, kind = _STATUS.get(fault, (500, "api_error" if protocol == "anthropic" else "server_error"))
            return None, status, kind, f"injected {fault} fault ({status})"
        try:
            return (reply if reply is not None else self.responder(body)), 200, "", ""
        except Exception as exc:
            return None, 500, "api_error", f"the test server's responder raised {exc!r}"

    def _settle(self, batch: _Batch, now: float) -> None:
        """Bring `batch` up to date: answer its requests once it is due (or cut short by cancel / expiry)."""
        if batch.ended_at is not None:
            return
        due = batch.created + self.plan.delay
        if batch.cancelled_at is None and now < due:
            if batch.protocol == "openai":
                batch.status = "validating" if now < batch.created + self.plan.delay / 4 else "in_progress"
            return
        if batch.cancelled_at is not None:
            answered = 0
        elif batch.expires:
            answered = int(len(batch.requests) * self.plan.expire_answered)
        else:
            answered = len(batch.requests)
        for i, line in enumerate(batch.requests):
            if i < answered:
                batch.results.append(self._result(batch, line))
            else:
                outcome = "canceled" if batch.cancelled_at is not None else "expired"
                batch.results.append({"custom_id": line.get("custom_id"), "outcome": outcome})
        if self.plan.shuffle:
            random.Random(batch.id).shuffle(batch.results)
        batch.ended_at = now
        if batch.protocol == "openai":
            batch.status = (
                "cancelled" if batch.cancelled_at is not None else "expired" if batch.expires else "completed"
            )
            self._write_openai_files(batch)

    def _result(self, batch: _Batch, line: dict[str, Any]) -> dict[str, Any]:
        custom_id = line.get("custom_id")
        if batch.protocol == "openai":
            body = line.get("body") or {}
            content, status, kind, message = self._answer("openai", body)
            if content is None:
                return {
                    "custom_id": custom_id,
                    "outcome": "errored",
                    "status": status,
                    "type": kind,
                    "message": message,
                }
            if self.billing is not None:  # billed at the batch price, through OpenAI's prompt cache
                meter = ChatMeter.arrive(self.billing, body)
                answer = json.loads(meter.answer(content, self._id("chatcmpl-batch-"), batch=True))
            else:
                answer = json.loads(completion_body(body, content, self._id("chatcmpl-batch-")))
            return {"custom_id": custom_id, "outcome": "succeeded", "body": answer}
        params = line.get("params") or {}
        content, status, kind, message = self._answer("anthropic", chat_view(params))
        if content is None:
            return {"custom_id": custom_id, "outcome": "errored", "status": status, "type": kind, "message": message}
        return {
            "custom_id": custom_id,
            "outcome": "succeeded",
            "message": anthropic_message(params, content, self._id("msg_"), self.billing),
        }

    # -- OpenAI: files --------------------------------------------------------------------------------------

    def _file_object(self, file_id: str, data: bytes, filename: str, purpose: str, created: float) -> dict[str, Any]:
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(created),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }

    async def create_file(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "files.create")) is not None:
            return missing
        form = await request.post()
        upload = form.get("file")
        purpose = str(form.get("purpose") or "")
        if not isinstance(upload, web.FileField):
            return _bad("the request needs a `file` part")
        if purpose != "batch":
            return _bad(f"purpose must be 'batch' here, got {purpose!r}")
        data = upload.file.read()
        for n, raw in enumerate(data.splitlines(), 1):
            try:
                line = json.loads(raw)
            except ValueError:
                return _bad(f"line {n} of the file is not JSON")
            if not isinstance(line, dict) or not {"custom_id", "method", "url", "body"} <= line.keys():
                return _bad(f"line {n} needs custom_id, method, url and body")
        file_id = self._id("file-")
        meta = self._file_object(file_id, data, upload.filename or "batch.jsonl", purpose, time.time())
        self.files[file_id] = (meta, data)
        return web.json_response(meta)

    async def get_file(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "files.retrieve")) is not None:
            return missing
        found = self.files.get(request.match_info["id"])
        return web.json_response(found[0]) if found else _not_found("file")

    async def delete_file(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "files.delete")) is not None:
            return missing
        file_id = request.match_info["id"]
        if self.files.pop(file_id, None) is None:
            return _not_found("file")
        return web.json_response({"id": file_id, "object": "file", "deleted": True})

    async def file_content(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "files.content")) is not None:
            return missing
        found = self.files.get(request.match_info["id"])
        if found is None:
            return _not_found("file")
        return web.Response(body=found[1], content_type="application/octet-stream")

    def _write_openai_files(self, batch: _Batch) -> None:
        output, errors = [], []
        for result in batch.results:
            line: dict[str, Any] = {"id": self._id("batch_req_"), "custom_id": result["custom_id"]}
            if result["outcome"] == "succeeded":
                body = result["body"]
                line |= {"response": {"status_code": 200, "request_id": self._id("req_"), "body": body}, "error": None}
                output.append(line)
            elif result["outcome"] == "errored":
                body = json.loads(error_body(result["message"], result["type"]))
                line |= {"response": {"status_code": result["status"], "request_id": self._id("req_"), "body": body}}
                errors.append(line | {"error": None})
            else:
                code = "batch_expired" if result["outcome"] == "expired" else "batch_cancelled"
                message = "This request could not be executed before the completion window expired."
                if code == "batch_cancelled":
                    message = "This request was not executed because the batch was cancelled."
                errors.append(line | {"response": None, "error": {"code": code, "message": message}})
        now = time.time()
        for lines, attr in ((output, "output_file_id"), (errors, "error_file_id")):
            if lines:
                data = "".join(json.dumps(line) + "\n" for line in lines).encode()
                file_id = self._id("file-")
                self.files[file_id] = (
                    self._file_object(file_id, data, f"{batch.id}_{attr}.jsonl", "batch_output", now),
                    data,
                )
                setattr(batch, attr, file_id)

    # -- OpenAI: batches ------------------------------------------------------------------------------------

    def _openai_batch(self, batch: _Batch) -> dict[str, Any]:
        self._settle(batch, time.time())
        done = [r for r in batch.results if r["outcome"] == "succeeded"]
        failed = [r for r in batch.results if r["outcome"] != "succeeded"]
        ended = batch.ended_at
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "errors": None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": int(batch.created),
            "in_progress_at": int(batch.created),
            "expires_at": int(batch.created + _EXPIRES_S),
            "finalizing_at": int(ended) if ended and batch.status == "completed" else None,
            "completed_at": int(ended) if ended and batch.status == "completed" else None,
            "failed_at": None,
            "expired_at": int(ended) if ended and batch.status == "expired" else None,
            "cancelling_at": int(batch.cancelled_at) if batch.cancelled_at else None,
            "cancelled_at": int(ended) if ended and batch.status == "cancelled" else None,
            "request_counts": {"total": len(batch.requests), "completed": len(done), "failed": len(failed)},
            "metadata": batch.metadata,
        }

    async def create_batch(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "batches.create")) is not None:
            return missing
        body = await request.json()
        file_id = body.get("input_file_id")
        found = self.files.get(file_id or "")
        if found is None:
            return _bad(f"no file with id {file_id!r}")
        if body.get("endpoint") not in ("/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions"):
            return _bad(f"unsupported endpoint {body.get('endpoint')!r}")
        if body.get("completion_window") != "24h":
            return _bad("completion_window must be '24h'")
        lines = [json.loads(raw) for raw in found[1].splitlines() if raw.strip()]
        batch = _Batch(
            self._id("batch_"),
            "openai",
            lines,
            time.time(),
            self._expires(),
            file_id,
            body["endpoint"],
            body.get("metadata"),
        )
        self.batches[batch.id] = batch
        return web.json_response(self._openai_batch(batch))

    def _expires(self) -> bool:
        if self._expired < self.plan.expire:
            self._expired += 1
            return True
        return False

    async def get_batch(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "batches.retrieve")) is not None:
            return missing
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.protocol != "openai":
            return _not_found("batch")
        return web.json_response(self._openai_batch(batch))

    async def list_batches(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "batches.list")) is not None:
            return missing
        limit = int(request.query.get("limit", "20"))
        found = [b for b in reversed(self.batches.values()) if b.protocol == "openai"]
        after = request.query.get("after")
        if after:
            ids = [b.id for b in found]
            found = found[ids.index(after) + 1 :] if after in ids else []
        page = [self._openai_batch(b) for b in found[:limit]]
        first, last = (page[0]["id"], page[-1]["id"]) if page else (None, None)
        return web.json_response(
            {"object": "list", "data": page, "first_id": first, "last_id": last, "has_more": len(found) > limit}
        )

    async def cancel_batch(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "batches.cancel")) is not None:
            return missing
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.protocol != "openai":
            return _not_found("batch")
        self._settle(batch, time.time())
        if batch.ended_at is None:
            batch.cancelled_at = time.time()
            shown = self._openai_batch_cancelling(batch)
            return web.json_response(shown)
        return web.json_response(self._openai_batch(batch))

    def _openai_batch_cancelling(self, batch: _Batch) -> dict[str, Any]:
        """As OpenAI answers a cancel: `cancelling` now; the batch is `cancelled` when next asked about."""
        shown = self._openai_batch(batch)
        return shown | {"status": "cancelling", "cancelled_at": None}

    # -- Anthropic ------------------------------------------------------------------------------------------

    def _message_batch(self, batch: _Batch, base: str) -> dict[str, Any]:
        self._settle(batch, time.time())
        counts = Counter(r["outcome"] for r in batch.results)
        ended = batch.ended_at is not None
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "canceling" if batch.cancelled_at else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(batch.requests),
                "succeeded": counts["succeeded"],
                "errored": counts["errored"],
                "canceled": counts["canceled"],
                "expired": counts["expired"],
            },
            "ended_at": _iso(batch.ended_at),
            "created_at": _iso(batch.created),
            "expires_at": _iso(batch.created + _EXPIRES_S),
            "archived_at": None,
            "cancel_initiated_at": _iso(batch.cancelled_at),
            "results_url": f"{base}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    async def create_message_batch(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "messages.batches.create")) is not None:
            return missing
        body = await request.json()
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return _anthropic_bad("requests: a non-empty list is required")
        ids = [r.get("custom_id") if isinstance(r, dict) else None for r in requests]
        if any(not isinstance(i, str) or not i for i in ids) or len(set(ids)) != len(ids):
            return _anthropic_bad("requests: every request needs a unique custom_id")
        for r in requests:
            params = r.get("params")
            if not isinstance(params, dict) or "max_tokens" not in params or "messages" not in params:
                return _anthropic_bad(f"requests.{r['custom_id']}.params: model, messages and max_tokens are required")
        batch = _Batch(self._id("msgbatch_"), "anthropic", requests, time.time(), self._expires())
        self.batches[batch.id] = batch
        return web.json_response(self._message_batch(batch, _root(request)))

    def _find_message_batch(self, request: web.Request) -> _Batch | None:
        batch = self.batches.get(request.match_info["id"])
        return batch if batch is not None and batch.protocol == "anthropic" else None

    async def get_message_batch(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "messages.batches.retrieve")) is not None:
            return missing
        batch = self._find_message_batch(request)
        return web.json_response(self._message_batch(batch, _root(request))) if batch else _anthropic_not_found()

    async def list_message_batches(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "messages.batches.list")) is not None:
            return missing
        limit = int(request.query.get("limit", "20"))
        found = [b for b in reversed(self.batches.values()) if b.protocol == "anthropic"]
        page = [self._message_batch(b, _root(request)) for b in found[:limit]]
        first, last = (page[0]["id"], page[-1]["id"]) if page else (None, None)
        return web.json_response({"data": page, "has_more": len(found) > limit, "first_id": first, "last_id": last})

    async def message_batch_results(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "messages.batches.results")) is not None:
            return missing
        batch = self._find_message_batch(request)
        if batch is None:
            return _anthropic_not_found()
        self._settle(batch, time.time())
        if batch.ended_at is None:
            return _anthropic_bad(f"Message Batch {batch.id} has not yet ended.")
        lines = []
        for r in batch.results:
            result: dict[str, Any] = {"type": r["outcome"]}
            if r["outcome"] == "succeeded":
                result["message"] = r["message"]
            elif r["outcome"] == "errored":
                result["error"] = _anthropic_error(r["type"], r["message"]) | {"request_id": self._id("req_")}
            lines.append(json.dumps({"custom_id": r["custom_id"], "result": result}))
        return web.Response(body="".join(line + "\n" for line in lines).encode(), content_type="application/binary")

    async def cancel_message_batch(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "messages.batches.cancel")) is not None:
            return missing
        batch = self._find_message_batch(request)
        if batch is None:
            return _anthropic_not_found()
        self._settle(batch, time.time())
        if batch.ended_at is None:
            batch.cancelled_at = time.time()
            shown = self._message_batch(batch, _root(request))
            return web.json_response(shown | {"processing_status": "canceling"})
        return web.json_response(self._message_batch(batch, _root(request)))

    async def delete_message_batch(self, request: web.Request) -> web.Response:
        if (missing := self._count(request, "messages.batches.delete")) is not None:
            return missing
        batch = self._find_message_batch(request)
        if batch is None:
            return _anthropic_not_found()
        if batch.ended_at is None:
            return _anthropic_bad("a batch that is still processing cannot be deleted; cancel it first")
        del self.batches[batch.id]
        return web.json_response({"id": batch.id, "type": "message_batch_deleted"})

    async def messages(self, request: web.Request) -> web.Response:
        """Anthropic's live Messages route (what a request a batch left unanswered is resent through)."""
        self.counts["messages.create"] += 1
        params = await request.json()
        content, status, kind, message = self._answer("anthropic", chat_view(params))
        if content is None:
            return web.json_response(_anthropic_error(kind, message), status=status)
        return web.json_response(anthropic_message(params, content, self._id("msg_"), self.billing))


def _root(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


def _bad(message: str) -> web.Response:
    return web.Response(status=400, body=error_body(message, "invalid_request_error"), content_type=_JSON)


def _not_found(what: str) -> web.Response:
    return web.Response(status=404, body=error_body(f"No such {what}", "invalid_request_error"), content_type=_JSON)


def _anthropic_bad(message: str) -> web.Response:
    return web.json_response(_anthropic_error("invalid_request_error", message), status=400)


def _anthropic_not_found() -> web.Response:
    return web.json_response(_anthropic_error("not_found_error", "No such message batch"), status=404)
