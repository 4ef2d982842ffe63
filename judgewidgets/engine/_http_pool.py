"""judgewidgets' own HTTP/1.1 client for the fast path: keep-alive connections per origin, for one event loop.

aiohttp's ClientSession builds request and response objects, header multidicts and tracing hooks for every call:
on the 2-core benchmark machine it spends 0.36 ms or more of CPU per call on loopback, this pool 0.13-0.2 ms
(`benchmarks/fast_transport.py`, "raw aiohttp" and "HTTPPool alone"). A chat-completions call needs no more than
this: write one POST, read one JSON answer, on `HTTPConnection`s. It keeps every guarantee a judge relies on:

- keep-alive: an answered connection goes back to the pool (last in, first out) unless the server said
  `Connection: close`; one idle longer than `keepalive_s` is closed instead of reused. The pool has no cap of
  its own: the engine's per-model concurrency limit bounds the requests in flight, so the pool holds as many
  connections as that limit (its size is the concurrency the caller allows);
- a reused connection that the server closed before answering (its keep-alive timeout raced our request) is
  retried once on a new connection, as urllib3 and aiohttp do; a new connection is never retried here (the
  engine's retry policy decides about that);
- one deadline per call covers connecting, the TLS handshake, sending and reading: when it passes, the call
  raises TimeoutError and its connection is dropped;
- https through the default TLS context (certifi's CA bundle when installed, as httpx uses; `SSL_CERT_FILE` and
  `SSL_CERT_DIR` win). Proxies are not spoken here: the transport sends proxied requests through aiohttp.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Mapping
from typing import Any, NamedTuple

from ._http_connection import HTTPConnection, HTTPResponse, ServerDisconnected

__all__ = ["HTTPPool", "header_lines", "tls_context"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


class _Target(NamedTuple):
    """Where a URL's requests go and how their heads begin (request line and Host)."""

    origin: tuple[str, str, int]
    tls: bool
    start: bytes


def _target_of(url: Any) -> _Target:
    """The target of a yarl URL (or a URL string)."""
    import yarl

    url = yarl.URL(str(url)) if not isinstance(url, yarl.URL) else url
    scheme = url.scheme
    if scheme not in _DEFAULT_PORTS or not url.host:
        raise ValueError(f"the fast path's HTTP client speaks http and https only, not {str(url)!r}")
    host = url.host
    port = url.port or _DEFAULT_PORTS[scheme]
    host_header = f"[{host}]" if ":" in host else host
    if port != _DEFAULT_PORTS[scheme]:
        host_header += f":{port}"
    path = url.raw_path_qs or "/"
    start = f"POST {path} HTTP/1.1\r\nHost: {host_header}\r\n".encode("ascii")
    return _Target((scheme, host, port), scheme == "https", start)


def header_lines(headers: Mapping[str, str]) -> bytes:
    """`Name: value` lines, each ended by CRLF; a name or value with CR, LF or NUL is refused (it would smuggle
    a header or a second request)."""
    lines = []
    for name, value in headers.items():
        text = f"{name}: {value}"
        if "\r" in text or "\n" in text or "\0" in text:
            raise ValueError(f"header {name!r} contains a line break or NUL")
        lines.append(text)
    return ("\r\n".join(lines) + "\r\n").encode("latin-1") if lines else b""


def tls_context() -> ssl.SSLContext:
    """A verifying TLS client context: `SSL_CERT_FILE`/`SSL_CERT_DIR` when set, else certifi's bundle when
    installed (what httpx, under litellm, trusts), else the system's store."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if not cafile and not capath:
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:
            pass
    context = ssl.create_default_context(cafile=cafile or None, capath=capath or None)
    context.set_alpn_protocols(["http/1.1"])
    return context


class HTTPPool:
    """Keep-alive HTTP/1.1 connections per origin, bound to the event loop that first uses it.

    `default_headers` go with every request unless the request's own headers name them (any case).
    """

    def __init__(self, default_headers: Mapping[str, str] | None = None, *, keepalive_s: float = 30.0) -> None:
        self.keepalive_s = keepalive_s
        self.closed = False
        self._defaults = dict(default_headers or {})
        self._default_lines = header_lines(self._defaults)
        self._default_names = frozenset(name.lower() for name in self._defaults)
        self._idle: dict[tuple[str, str, int], list[HTTPConnection]] = {}
        self._busy: set[HTTPConnection] = set()
        self._targets: dict[Any, _Target] = {}
        self._tls: ssl.SSLContext | None = None

    def __repr__(self) -> str:
        idle = sum(len(stack) for stack in self._idle.values())
        return f"HTTPPool(idle={idle}, busy={len(self._busy)}, closed={self.closed})"

    @property
    def connections(self) -> int:
        """Open connections, idle and busy."""
        return sum(len(stack) for stack in self._idle.values()) + len(self._busy)

    # -- one request ------------------------------------------------------------------------------------------

    async def post(
        self, url: Any, body: bytes, headers: Mapping[str, str] | None = None, *, timeout: float
    ) -> HTTPResponse:
        """POST `body` to `url` and return the whole response; raises TimeoutError when `timeout` seconds pass,
        ConnectionError (or OSError) when the connection fails."""
        if self.closed:
            raise ConnectionError("the HTTP pool is closed")
        target = self._targets.get(url)
        if target is None:
            target = self._targets[url] = _target_of(url)
        lines = self._header_block(headers) if headers else self._default_lines
        data = b"%s%sContent-Length: %d\r\n\r\n%s" % (target.start, lines, len(body), body)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        conn = self._checkout(target.origin, loop.time())
        if conn is None:
            conn = await self._connect(target, deadline)
        while True:
            busy = self._busy
            busy.add(conn)
            timer = loop.call_at(deadline, conn.expire)
            try:
                response = await conn.request(data)
            except ServerDisconnected as exc:
                if not (exc.clean and conn.answered):  # only a reused connection that never answered
                    raise
                conn = await self._connect(target, deadline)  # stale keep-alive: once more on a new one
                continue
            except BaseException:  # a timeout, a cancelled caller: the connection is in an unknown state
                conn.close()
                raise
            finally:
                timer.cancel()
                busy.discard(conn)
            if conn.reusable and not self.closed:
                self._checkin(target.origin, conn, loop.time())
            return response

    def _header_block(self, headers: Mapping[str, str]) -> bytes:
        if self._default_names.isdisjoint(name.lower() for name in headers):
            return self._default_lines + header_lines(headers)
        merged = {k: v for k, v in self._defaults.items() if k.lower() not in {n.lower() for n in headers}}
        merged.update(headers)
        return header_lines(merged)

    def _checkin(self, origin: tuple[str, str, int], conn: HTTPConnection, now: float) -> None:
        """Back on top of the idle stack; the oldest idle connection goes when it has outlived `keepalive_s`
        (after a burst, the connections it opened close one by one instead of lingering)."""
        conn.idle_since = now
        stack = self._idle.get(origin)
        if stack is None:
            stack = self._idle[origin] = []
        stack.append(conn)
        oldest = stack[0]
        if oldest is not conn and (not oldest.usable or now - oldest.idle_since >= self.keepalive_s):
            stack.pop(0).close()

    def _checkout(self, origin: tuple[str, str, int], now: float) -> HTTPConnection | None:
        """The most recently used idle connection to `origin` that is still open and fresh, or None."""
        stack = self._idle.get(origin)
        while stack:
            conn = stack.pop()
            if conn.usable and now - conn.idle_since < self.keepalive_s:
                return conn
            conn.close()
        return None

    async def _connect(self, target: _Target, deadline: float) -> HTTPConnection:
        if self.closed:
            raise ConnectionError("the HTTP pool is closed")
        loop = asyncio.get_running_loop()
        _, host, port = target.origin
        tls: ssl.SSLContext | None = None
        if target.tls:
            tls = self._tls = self._tls or tls_context()
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError()
        connecting = loop.create_connection(HTTPConnection, host, port, ssl=tls, server_hostname=host if tls else None)
        _, conn = await asyncio.wait_for(connecting, remaining)
        if self.closed:  # closed while connecting
            conn.close()
            raise ConnectionError("the HTTP pool is closed")
        return conn

    # -- closing ----------------------------------------------------------------------------------------------

    def close_now(self) -> None:
        """Drop every connection at once; works without a running loop (the loop may be gone)."""
        self.closed = True
        for stack in self._idle.values():
            for conn in stack:
                conn.close()
        self._idle.clear()
        for conn in list(self._busy):
            conn.close()
        self._busy.clear()

    async def aclose(self) -> None:
        """Close every connection (a request in flight fails with ServerDisconnected)."""
        self.close_now()
        await asyncio.sleep(0)  # let the transports run their connection_lost callbacks
