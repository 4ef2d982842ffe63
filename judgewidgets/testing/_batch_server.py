"""`BatchTestServer`: the loopback test server with both providers' batch APIs beside its chat route."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import Counter
from typing import Any

from aiohttp import web

from ._app import ChatService, ServerConfig
from ._batch import BatchPlan, BatchService
from ._responders import Responder
from ._server import OpenAITestServer

__all__ = ["BatchTestServer"]


class _BatchChatService(ChatService):
    """The chat service with the batch routes added to its application."""

    def __init__(self, config: ServerConfig, batches: BatchService) -> None:
        super().__init__(config)
        self.batches = batches
        batches.billing = getattr(self.stats, "billing", None)

    def app(self) -> web.Application:
        app = super().app()
        self.batches.add_routes(app)
        return app


class BatchTestServer(OpenAITestServer):
    """An `OpenAITestServer` that also speaks OpenAI's Batch API (`/v1/files`, `/v1/batches`) and Anthropic's
    Message Batches API (`/v1/messages/batches`, and the live `/v1/messages`), in a background thread.

    ```python
    with BatchTestServer(json_score(4), delay=0.2) as server:
        jw.LLMJudge("openai/test", api_base=server.base_url, api_key="sk-test").score(p, r, batch=True)
        jw.LLMJudge("anthropic/claude-3-5-haiku-latest", api_base=server.url, api_key="sk-test").score(...)
        server.batch_counts["batches.create"]   # requests each batch route got
    ```
    `delay`: seconds from a batch's creation to its end. `expire`: how many of the first batches expire, with
    `expire_answered` of their requests answered. `missing=True`: every batch route answers 404 (a server
    without a batch API). `shuffle=True`: results come in another order than the requests (as the providers say
    they may). `plan` can be changed while the server runs. Other arguments: as `OpenAITestServer`'s.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        delay: float = 0.2,
        expire: int = 0,
        expire_answered: float = 0.5,
        missing: bool = False,
        shuffle: bool = False,
        **options: Any,
    ) -> None:
        if options.get("spawn"):
            raise ValueError("BatchTestServer runs in a background thread only (spawn=False)")
        super().__init__(responder, **options)
        self.plan = BatchPlan(
            delay=delay, expire=expire, expire_answered=expire_answered, missing=missing, shuffle=shuffle
        )
        self.batch_service = BatchService(self.config.responder, self.plan)

    @property
    def batch_counts(self) -> Counter[str]:
        """Requests each batch route got, by route name ('files.create', 'batches.retrieve',
        'messages.batches.create', 'messages.create', ...)."""
        return Counter(self.batch_service.counts)

    def __repr__(self) -> str:
        return f"BatchTestServer({self.base_url if self.running else 'not running'})"

    def _start_thread(self) -> None:
        service = _BatchChatService(self.config, self.batch_service)
        ready: queue.Queue[int | BaseException] = queue.Queue()
        loop = asyncio.new_event_loop()
        thread = threading.Thread(
            target=self._run_loop, args=(loop, service, ready), name="BatchTestServer", daemon=True
        )
        thread.start()
        outcome = ready.get(timeout=self._startup_timeout)
        if isinstance(outcome, BaseException):
            thread.join()
            raise RuntimeError(f"the BatchTestServer could not start: {outcome!r}") from outcome
        self._service, self._loop, self._thread, self._port = service, loop, thread, outcome
