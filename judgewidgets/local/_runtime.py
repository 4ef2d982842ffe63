"""Run the embedded judge in-process with llama.cpp (xllamacpp), speaking OpenAI chat-completions dicts.

A `LocalModel` is a light handle; the loaded model behind it is shared. The process-wide `_LOADER` below is the
only process-wide resource of judgewidgets.local: a table of loaded models keyed by GGUF path (one llama.cpp
model per path per process, however many handles or providers point at it), filled under a lock.

Concurrency: each loaded model has one llama.cpp slot (`n_parallel=1`) and a private pool of
`_WORKERS` threads that hand it requests, so calls are serialised in the model and never block an event loop.
On 2 cores one slot was as fast or faster than 2 or 4 parallel slots in every paired run (throughput of 1.7 s
vs 5-10 s per likert judgment; 5.4 s vs 7.0 s on a loaded machine): prompt processing is compute-bound, and a
single slot keeps reusing the shared prompt prefix in its KV cache. Two workers keep the next request queued in
llama.cpp while one runs; the rest wait in the pool's queue, where a cancelled call is dropped before it starts
(a call already running finishes in the background).

Loading the first model sets `OMP_WAIT_POLICY=PASSIVE` in the process environment unless it is set (see
`_Engine`), because llama.cpp's spinning OpenMP workers collapse when another process shares the cores.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigurationError, InputError, LocalModelError
from ._weights import DEFAULT_MODEL_NAME, INSTALL_HINT, resolve_model_path

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_N_CTX", "LocalModel", "available_cores"]

logger = logging.getLogger(__name__)

DEFAULT_N_CTX = 4096  # tokens of context: a judge prompt plus its answer; the KV cache costs ~28 KB a token
DEFAULT_MAX_TOKENS = 1024  # cap when a request names none, so a runaway answer cannot hold the model for minutes
_CACHE_RAM_MIB = 256  # llama.cpp's host-memory prompt cache (its default of 8 GiB is far more than a judge needs)
_WORKERS = 2

# Request keys handed to llama.cpp; everything else litellm may forward (user, metadata, ...) is ignored.
_PASSED_KEYS = frozenset(
    {
        "messages",
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "seed",
        "stop",
        "response_format",
        "logprobs",
        "top_logprobs",
        "frequency_penalty",
        "presence_penalty",
        "repeat_penalty",
        "logit_bias",
        "grammar",
    }
)


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class _Settings:
    n_ctx: int
    n_threads: int


class _Engine:
    """One loaded llama.cpp model with its worker pool."""

    def __init__(self, path: Path, settings: _Settings) -> None:
        if "xllamacpp" not in sys.modules:
            # llama.cpp's OpenMP workers spin while they wait. On 2 cores with one held by another process that
            # spinning made a likert judgment 12 s instead of 6 s; on an idle machine passive waiting costs ~5%
            # (2.08 s vs 1.97 s). libgomp reads this once, when xllamacpp loads it; a value the user set is kept.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import xllamacpp
        except ImportError as exc:
            raise LocalModelError(
                f"The embedded judge's runtime (xllamacpp) is not installed: `{INSTALL_HINT}`."
            ) from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = settings.n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = settings.n_threads
        params.cpuparams_batch.n_threads = settings.n_threads
        params.cache_ram_mib = _CACHE_RAM_MIB
        params.verbosity = -1  # silences llama.cpp's console log
        self.socket_dir, self._listener_key = _private_listener(params)
        started = time.perf_counter()
        try:
            self.server = xllamacpp.Server(params)
        except Exception as exc:
            raise LocalModelError(f"llama.cpp could not load the model {path}: {exc}") from exc
        self.load_seconds = time.perf_counter() - started
        self.path = path
        self.settings = settings
        self.executor = concurrent.futures.ThreadPoolExecutor(_WORKERS, thread_name_prefix="judgewidgets-local")

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one translated request (blocking; llama.cpp releases the GIL while it works)."""
        try:
            raw = self.server.handle_chat_completions(request)
        except ValueError as exc:  # bad request detected before generation, e.g. an unusable JSON schema
            raise ConfigurationError(f"The local model rejected the request: {exc}") from exc
        except Exception as exc:
            raise LocalModelError(f"The local model failed: {exc}") from exc
        error = raw.get("error") if isinstance(raw, dict) else None
        if error is None and isinstance(raw, dict) and "code" in raw and "choices" not in raw:
            error = raw
        if error is not None:
            message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
            code = error.get("code", 500) if isinstance(error, dict) else 500
            kind = error.get("type", "") if isinstance(error, dict) else ""
            if kind == "exceed_context_size_error":
                raise InputError(f"The prompt is too long for the local model: {message}")
            if isinstance(code, int) and 400 <= code < 500:
                raise ConfigurationError(f"The local model rejected the request: {message}")
            raise LocalModelError(f"The local model failed: {message}")
        return raw

    def tokenize(self, text: str) -> list[int]:
        """llama.cpp's own tokens of `text` (no special tokens added or parsed), asked of the model's private
        listener: the in-process API has no tokenizer, and the likelihood method needs the model's tokens."""
        import httpx

        transport = httpx.HTTPTransport(uds=str(self.socket_dir / "llama.sock"))
        try:
            with httpx.Client(transport=transport, timeout=60) as client:
                answer = client.post(
                    "http://localhost/tokenize",
                    json=tokenize_body(text),
                    headers={"Authorization": f"Bearer {self._listener_key}"},
                )
                answer.raise_for_status()
                return token_ids(answer.json())
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise LocalModelError(f"The local model could not tokenize the text: {type(exc).__name__}") from None


def tokenize_body(text: str) -> dict[str, Any]:
    """llama.cpp's `/tokenize` request for `text` as a message's content: no special tokens added or parsed."""
    return {"content": text, "add_special": False, "parse_special": False}


def token_ids(answer: dict[str, Any]) -> list[int]:
    """The token ids of a `/tokenize` answer (plain ids, or pieces with their `id`)."""
    return [int(t["id"]) if isinstance(t, dict) else int(t) for t in answer["tokens"]]


def _private_listener(params: Any) -> tuple[Path, str]:
    """Keep llama.cpp's HTTP listener off the network; the folder holding its socket is returned.

    `xllamacpp.Server` always starts llama.cpp's HTTP server (it has no switch to leave it out), by default on a
    TCP port of 127.0.0.1 with no key, which any user of a shared machine could drive. judgewidgets calls the
    model in-process (`handle_chat_completions`), and over HTTP only to tokenize (which the in-process API lacks),
    so the listener is bound to a Unix socket in a fresh folder only this user can enter (mode 0700), demands an
    unguessable API key that lives only in this process's memory (returned with the folder; never written or
    logged), and serves neither the web UI nor the slots endpoint. No TCP or UDP port is opened.
    """
    folder = Path(tempfile.mkdtemp(prefix="judgewidgets-llama-"))  # 0700: other users cannot reach the socket
    params.hostnames = [str(folder / "llama.sock")]  # a name ending in .sock binds AF_UNIX, no port
    key = secrets.token_urlsafe(32)
    params.api_keys = [key]
    params.ui = False
    params.endpoint_slots = False
    params.endpoint_metrics = False
    params.n_threads_http = 1
    atexit.register(shutil.rmtree, folder, True)
    return folder, key


class _Loader:
    """Process-wide table of loaded models: one per GGUF path, loaded on a thread of its own.

    Each name (with its cache folder) gets one `concurrent.futures.Future`, shared by every caller, so async
    callers wait without holding a thread and a failed load is retried by the next call.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._by_name: dict[tuple[str, str], concurrent.futures.Future[_Engine]] = {}
        self._by_path: dict[Path, _Engine] = {}

    def future(self, name: str, cache_dir: Path | None, settings: _Settings) -> concurrent.futures.Future[_Engine]:
        key = (name, str(cache_dir))
        with self._lock:
            future = self._by_name.get(key)
            if future is None or (future.done() and future.exception() is not None):
                future = concurrent.futures.Future()
                future.set_running_or_notify_cancel()  # running: a waiter's cancellation cannot cancel it
                self._by_name[key] = future
                thread = threading.Thread(
                    target=self._load,
                    args=(future, name, cache_dir, settings),
                    name="judgewidgets-local-load",
                    daemon=True,
                )
                thread.start()
        return future

    def _load(
        self, future: concurrent.futures.Future[_Engine], name: str, cache_dir: Path | None, settings: _Settings
    ) -> None:
        try:
            with self._load_lock:  # one load at a time: they compete for the same cores and memory
                path = resolve_model_path(name, cache_dir)
                engine = self._by_path.get(path)
                if engine is None:
                    engine = _Engine(path, settings)
                    self._by_path[path] = engine
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(engine)


_LOADER = _Loader()


class LocalModel:
    """A handle on an embedded llama.cpp model; loads it on first use and shares it process-wide.

    `name` is `"default"` (the pinned Qwen2.5-Coder-1.5B-Instruct, assembled and hash-checked by
    `ensure_weights`) or the path of a GGUF file, used as is. `n_threads` defaults to every available core.
    A path is loaded once per process, with the settings of the first handle that loads it.
    """

    def __init__(
        self,
        name: str = DEFAULT_MODEL_NAME,
        *,
        cache_dir: Path | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
    ) -> None:
        if n_ctx < 256:
            raise ConfigurationError(f"n_ctx must be at least 256 tokens, got {n_ctx}")
        if n_threads is not None and n_threads < 1:
            raise ConfigurationError(f"n_threads must be >= 1, got {n_threads}")
        self.name = name or DEFAULT_MODEL_NAME
        self.cache_dir = cache_dir
        self._settings = _Settings(n_ctx=n_ctx, n_threads=n_threads or available_cores())
        self._engine: _Engine | None = None

    def __repr__(self) -> str:
        return f"LocalModel({self.name!r}, n_ctx={self._settings.n_ctx}, n_threads={self._settings.n_threads})"

    def _future(self) -> concurrent.futures.Future[_Engine]:
        return _LOADER.future(self.name, self.cache_dir, self._settings)

    def _checked(self, engine: _Engine) -> _Engine:
        if engine.settings != self._settings:
            raise ConfigurationError(
                f"{engine.path} is already loaded in this process with {engine.settings}; a model is loaded "
                f"once per process, so {self!r} cannot change its settings"
            )
        self._engine = engine
        return engine

    def load(self) -> Path:
        """Load the model now (blocking: verifying and loading take seconds) and return its GGUF path."""
        return self._checked(self._future().result()).path

    async def aload(self) -> Path:
        """Load the model without blocking the event loop; concurrent callers share one load."""
        return self._checked(await asyncio.wrap_future(self._future())).path

    @property
    def load_seconds(self) -> float | None:
        """How long llama.cpp took to load the model (None until this handle has loaded it)."""
        return self._engine.load_seconds if self._engine is not None else None

    def chat(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer an OpenAI chat-completions request body with an OpenAI `chat.completion` dict (blocking)."""
        translated = self._translate(request)
        engine = self._engine or self._checked(self._future().result())
        return self._finish(engine.executor.submit(engine.complete, translated).result())

    async def achat(self, request: dict[str, Any]) -> dict[str, Any]:
        """Async twin of `chat`: the model runs on a worker thread, so the event loop stays free."""
        translated = self._translate(request)
        engine = self._engine or self._checked(await asyncio.wrap_future(self._future()))
        raw = await asyncio.wrap_future(engine.executor.submit(engine.complete, translated))
        return self._finish(raw)

    def tokenize(self, text: str) -> list[int]:
        """The model's own token ids of `text`, as llama.cpp reads it in a message (blocking)."""
        engine = self._engine or self._checked(self._future().result())
        return engine.tokenize(text)

    async def atokenize(self, text: str) -> list[int]:
        """Async twin of `tokenize` (instant next to a judgment; run on a thread so the loop stays free)."""
        engine = self._engine or self._checked(await asyncio.wrap_future(self._future()))
        return await asyncio.to_thread(engine.tokenize, text)

    def _translate(self, request: dict[str, Any]) -> dict[str, Any]:
        """The llama.cpp request for an OpenAI one: supported keys kept, unsupported features refused."""
        if not isinstance(request.get("messages"), list) or not request["messages"]:
            raise InputError("a chat request needs a non-empty list of messages")
        if request.get("stream"):
            raise ConfigurationError("the local model does not stream; call it with stream=False")
        if (request.get("n") or 1) != 1:
            raise ConfigurationError(f"the local model returns one choice per call, got n={request['n']}")
        if request.get("tools") or request.get("functions"):
            raise ConfigurationError("the local model does not support tool calls")
        # llama.cpp's own fields (`grammar`) may ride in extra_body, as the OpenAI SDK sends them to a server
        extra = request.get("extra_body")
        merged = {**request, **extra} if isinstance(extra, dict) else request
        out = {key: value for key, value in merged.items() if key in _PASSED_KEYS and value is not None}
        ignored = sorted(set(merged) - _PASSED_KEYS - {"model", "stream", "n", "tools", "functions", "extra_body"})
        if ignored:
            logger.debug("local model ignores request keys %s", ignored)
        if out.get("max_tokens") is None:
            out["max_tokens"] = request.get("max_completion_tokens") or DEFAULT_MAX_TOKENS
        if isinstance(out.get("stop"), str):
            out["stop"] = [out["stop"]]
        if out.get("top_logprobs") and "logprobs" not in out:
            out["logprobs"] = True
        return out

    def _finish(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Shape llama.cpp's answer as OpenAI's: our model name, token ids dropped from the logprobs."""
        raw["model"] = f"local/{self.name}"
        for choice in raw.get("choices", []):
            logprobs = choice.get("logprobs")
            if not logprobs:
                continue
            for token in logprobs.get("content") or []:
                token.pop("id", None)
                for alternative in token.get("top_logprobs") or []:
                    alternative.pop("id", None)
        usage = raw.setdefault("usage", {})
        usage.setdefault("prompt_tokens", 0)
        usage.setdefault("completion_tokens", 0)
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        return raw
