"""One HTTP/1.1 client connection: it writes a request and parses the response the server sends back.

An asyncio Protocol rather than streams: a response costs a few method calls and one future, which is what lets
one core keep thousands of calls per second going. The parser reads what RFC 9112 lets a server send: interim
1xx answers are skipped; `Transfer-Encoding: chunked` wins over `Content-Length`; a body with neither runs to the
end of the connection; `Connection: close` (or an HTTP/1.0 answer without keep-alive) ends the connection once
the body is read. Bodies sent with `Content-Encoding: gzip` or `deflate` are decoded.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Mapping

__all__ = ["HTTPConnection", "HTTPResponse", "ProtocolError", "ServerDisconnected"]

MAX_HEAD_BYTES = 64 * 1024  # status line and headers; a longer head is not an HTTP answer we can use
_HEAD_END = b"\r\n\r\n"
_NO_BODY = frozenset({204, 304})

# What the parser waits for next.
_HEAD, _LENGTH, _CHUNKED, _UNTIL_CLOSE = range(4)


class HTTPResponse:
    """A complete response: status code, body, and headers (lower-case names; repeated ones joined by ', ').

    The headers are parsed from the raw head only when asked for (an error answer's `retry-after`): a
    successful call never needs them, so it does not pay for them.
    """

    __slots__ = ("_head", "_headers", "body", "status")

    def __init__(self, status: int, body: bytes, headers: Mapping[str, str] | None = None, head: bytes = b"") -> None:
        self.status = status
        self.body = body
        self._headers = headers
        self._head = head

    def __repr__(self) -> str:
        return f"HTTPResponse(status={self.status}, body=<{len(self.body)} bytes>)"

    @property
    def headers(self) -> Mapping[str, str]:
        if self._headers is None:
            self._headers = parse_headers(self._head)
        return self._headers

    def mentions(self, fragment: bytes) -> bool:
        """Whether a header may hold `fragment` (lower case): a cheap look at the raw head before parsing it
        (a successful answer's rate-limit headers); True when the headers came parsed."""
        return self._headers is not None or fragment in self._head.lower()


def parse_headers(head: bytes) -> dict[str, str]:
    """The header fields of a response head (status line first, CRLF between lines, no final blank line)."""
    headers: dict[str, str] = {}
    for line in head.split(b"\r\n")[1:]:
        name, colon, value = line.partition(b":")
        if colon:
            key = name.strip().lower().decode("latin-1")
            text = value.strip().decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


def _field(lower: bytes, name: bytes) -> bytes | None:
    """The value of header `name` (given as b"\\r\\nname:") in a lower-cased head; repeats joined by ', '."""
    at = lower.find(name)
    if at < 0:
        return None
    start = at + len(name)
    stop = lower.find(b"\r\n", start)
    if lower.find(name, start) < 0:  # the usual case: the field is there once
        return lower[start : stop if stop >= 0 else None].strip()
    values = []
    while at >= 0:
        start = at + len(name)
        stop = lower.find(b"\r\n", start)
        values.append(lower[start : stop if stop >= 0 else None].strip())
        at = lower.find(name, start)
    return values[0] if len(values) == 1 else b", ".join(values)


class ProtocolError(ConnectionError):
    """The server's answer is not HTTP/1.1 we can read (a malformed head, chunk or content encoding)."""


class ServerDisconnected(ConnectionError):
    """The connection closed before the response was complete; `clean` when no byte of it had arrived."""

    def __init__(self, message: str, *, clean: bool) -> None:
        super().__init__(message)
        self.clean = clean


class HTTPConnection(asyncio.Protocol):
    """A keep-alive connection carrying one request at a time (no pipelining).

    `request(data)` writes a complete request and returns a future of its `HTTPResponse`. After the response,
    `reusable` says whether the connection may carry another request; `expire()` fails the pending request
    with TimeoutError and drops the connection.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reusable = True
        self.answered = 0  # responses completed on this connection
        self.idle_since = 0.0  # loop time when it last went back to its pool
        self._waiter: asyncio.Future[HTTPResponse] | None = None
        self._buffer = bytearray()
        self._state = _HEAD
        self._scanned = 0  # bytes of the buffer already searched for the end of the head
        self._status = 0
        self._head = b""
        self._coding: bytes | None = None
        self._body_at = 0
        self._end = 0  # _LENGTH: where the body ends; _CHUNKED: where the next chunk's size line starts
        self._chunks: list[bytes] = []

    # -- the caller's side ------------------------------------------------------------------------------------

    def request(self, data: bytes) -> asyncio.Future[HTTPResponse]:
        """Write one whole request (head and body) and return the future of its response."""
        assert self.transport is not None and self._waiter is None
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return waiter

    @property
    def usable(self) -> bool:
        """Open, and not being closed (the server's FIN may be in but not yet handled)."""
        return not self.closed and self.transport is not None and not self.transport.is_closing()

    @property
    def received(self) -> bool:
        """Whether any byte of the current response has arrived."""
        return bool(self._buffer) or self._state != _HEAD

    def expire(self) -> None:
        """The deadline passed: fail the pending request with TimeoutError and drop the connection."""
        self._fail(TimeoutError())
        self.close()

    def close(self) -> None:
        """Drop the connection now (no graceful TLS shutdown: nothing is left to say on it)."""
        self._fail(ConnectionError("the connection was closed by the client"))
        self.reusable = False
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    # -- asyncio.Protocol -------------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # typeshed: create_connection gives a Transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:  # the server spoke out of turn (an idle-timeout 408, say): do not reuse
            self.close()
            return
        self._buffer += data
        try:
            self._parse()
        except (ProtocolError, ValueError, zlib.error) as exc:
            self._fail(exc if isinstance(exc, ProtocolError) else ProtocolError(f"unreadable response: {exc}"))
            self.close()

    def eof_received(self) -> bool:
        if self._state == _UNTIL_CLOSE and self._waiter is not None:
            self.reusable = False
            self._finish(bytes(self._buffer[self._body_at :]))
        return False  # let the transport close; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.reusable = False
        if self._waiter is None or self._waiter.done():
            return
        if self._state == _UNTIL_CLOSE and exc is None:
            self._finish(bytes(self._buffer[self._body_at :]))
            return
        clean = not self.received
        what = "before answering" if clean else "in the middle of its answer"
        detail = f": {exc}" if exc else ""
        self._fail(ServerDisconnected(f"the server closed the connection {what}{detail}", clean=clean))

    # -- parsing ----------------------------------------------------------------------------------------------

    def _parse(self) -> None:
        while True:
            state = self._state
            if state == _HEAD:
                if not self._parse_head():
                    return
                continue
            if state == _LENGTH:
                if len(self._buffer) >= self._end:
                    self._finish(bytes(self._buffer[self._body_at : self._end]), self._end)
                return
            if state == _CHUNKED:
                self._parse_chunks()
            return  # _UNTIL_CLOSE waits for the end of the connection

    def _parse_head(self) -> bool:
        """Parse the status line and the framing headers once the head is complete; False while more bytes are
        needed. The other headers stay raw until someone asks for them."""
        buffer = self._buffer
        end = buffer.find(_HEAD_END, max(0, self._scanned - 3))
        if end < 0:
            self._scanned = len(buffer)
            if len(buffer) > MAX_HEAD_BYTES:
                raise ProtocolError(f"response head longer than {MAX_HEAD_BYTES} bytes")
            return False
        head = bytes(buffer[:end])
        if not head.startswith(b"HTTP/1.") or head[8:9] != b" ":
            raise ProtocolError(f"not an HTTP/1.x status line: {head[:80]!r}")
        status = int(head[9:12])
        body_at = end + 4
        if 100 <= status < 200:  # an interim answer (100 Continue, 103 Early Hints): the real one follows
            del buffer[:body_at]
            self._scanned = 0
            return True
        lower = head.lower()
        connection = _field(lower, b"\r\nconnection:") or b""
        if b"close" in connection or (head[7:8] == b"0" and b"keep-alive" not in connection):
            self.reusable = False
        self._status, self._head, self._body_at = status, head, body_at
        self._coding = _field(lower, b"\r\ncontent-encoding:")
        coding = _field(lower, b"\r\ntransfer-encoding:")
        length = _field(lower, b"\r\ncontent-length:")
        if status in _NO_BODY:
            self._state, self._end = _LENGTH, body_at
        elif coding is not None and coding.rstrip().endswith(b"chunked"):
            self._state, self._end, self._chunks = _CHUNKED, body_at, []
        elif length is not None:
            lengths = {part.strip() for part in length.split(b",")}
            if len(lengths) != 1 or not next(iter(lengths)).isdigit():
                raise ProtocolError(f"invalid Content-Length: {length!r}")
            self._state, self._end = _LENGTH, body_at + int(lengths.pop())
        else:
            self._state, self.reusable = _UNTIL_CLOSE, False
        return True

    def _parse_chunks(self) -> None:
        """Collect the chunks that have arrived; finish the response after the last one and the trailers."""
        buffer = self._buffer
        at = self._end
        while True:
            line_end = buffer.find(b"\r\n", at)
            if line_end < 0:
                break
            size_text = bytes(buffer[at:line_end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ProtocolError(f"invalid chunk size line: {size_text[:40]!r}") from None
            if size == 0:  # the last chunk; trailers (ignored) end with an empty line
                if buffer.startswith(b"\r\n", line_end + 2):
                    done = line_end + 4
                else:
                    trailers_end = buffer.find(_HEAD_END, line_end)
                    if trailers_end < 0:
                        break
                    done = trailers_end + 4
                self._finish(b"".join(self._chunks), done)
                return
            data_end = line_end + 2 + size
            if len(buffer) < data_end + 2:
                break
            if buffer[data_end : data_end + 2] != b"\r\n":
                raise ProtocolError("chunk data not followed by CRLF")
            self._chunks.append(bytes(buffer[line_end + 2 : data_end]))
            at = data_end + 2
        # Keep what is left; the chunks read so far are already copied out.
        del buffer[:at]
        self._end = 0
        if buffer.find(b"\r\n", 0, MAX_HEAD_BYTES) < 0 and len(buffer) > MAX_HEAD_BYTES:
            raise ProtocolError("chunk size line or trailers too long")

    def _finish(self, body: bytes, consumed: int | None = None) -> None:
        """Hand the complete response to the waiting caller and get ready for the next one."""
        coding = self._coding
        if coding is not None:
            try:
                body = _decode(body, coding.decode("latin-1"))
            except (ProtocolError, zlib.error) as exc:
                self._fail(exc if isinstance(exc, ProtocolError) else ProtocolError(f"undecodable body: {exc}"))
                self.close()
                return
        response = HTTPResponse(self._status, body, head=self._head)
        if consumed is None:
            self._buffer.clear()
        else:
            del self._buffer[:consumed]
        if self._buffer:  # bytes beyond the response: the server is out of step with us
            self.reusable = False
            self._buffer.clear()
        self._state, self._scanned, self._chunks, self._coding = _HEAD, 0, [], None
        self.answered += 1
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(response)
        if not self.reusable and not self.closed:
            self.close()

    def _fail(self, exc: BaseException) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)


def _decode(body: bytes, coding: str) -> bytes:
    """The body without its content coding (the request offers gzip and deflate only)."""
    if coding in ("gzip", "x-gzip"):
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if coding == "deflate":
        try:
            return zlib.decompress(body)
        except zlib.error:  # raw deflate, as some servers send it
            return zlib.decompress(body, -zlib.MAX_WBITS)
    if coding in ("", "identity"):
        return body
    raise ProtocolError(f"unsupported Content-Encoding {coding!r}")
