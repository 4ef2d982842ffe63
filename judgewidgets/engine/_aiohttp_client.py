"""The fast path's other HTTP client: one pooled aiohttp session, for proxies and as a choice (`client="aiohttp"`).

It answers the same `post(url, body, headers, timeout=...)` as `HTTPPool` and returns the same `HTTPResponse`,
so the transport treats both alike. aiohttp speaks what the lean pool does not: HTTP(S) proxies from the
environment, and every corner of HTTP a server might need.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._http_connection import HTTPResponse

__all__ = ["AiohttpClient"]


class AiohttpClient:
    """An aiohttp ClientSession with no connection cap of its own (the engine's concurrency limit is the cap)."""

    def __init__(self, default_headers: Mapping[str, str] | None = None, *, keepalive_s: float = 30.0) -> None:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=keepalive_s, ttl_dns_cache=300)
        self._session = aiohttp.ClientSession(
            connector=connector, cookie_jar=aiohttp.DummyCookieJar(), headers=dict(default_headers or {})
        )
        self._timeouts: dict[float, Any] = {}

    def __repr__(self) -> str:
        return f"AiohttpClient(closed={self.closed})"

    @property
    def closed(self) -> bool:
        return bool(self._session.closed)

    async def post(
        self,
        url: Any,
        body: bytes,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float,
        proxy: str | None = None,
    ) -> HTTPResponse:
        """POST `body` to `url` (through `proxy` when given); raises TimeoutError after `timeout` seconds,
        aiohttp.ClientError or OSError when the connection fails."""
        response = await self._session.post(
            url, data=body, headers=headers, timeout=self._timeout(timeout), proxy=proxy
        )
        try:
            raw = await response.read()
        finally:
            response.release()
        return HTTPResponse(response.status, raw, response.headers)  # case-insensitive, like ours

    def _timeout(self, seconds: float) -> Any:
        timeout = self._timeouts.get(seconds)
        if timeout is None:
            import aiohttp

            timeout = self._timeouts[seconds] = aiohttp.ClientTimeout(total=seconds)
        return timeout

    async def aclose(self) -> None:
        await self._session.close()

    def close_now(self) -> None:
        """Drop the session's sockets at once, without a loop (its loop may be gone)."""
        if not self._session.closed and self._session.connector is not None:
            self._session.connector.close()
