"""The fast path's own HTTP/1.1 client against scripted loopback servers: framing, keep-alive, closes, timeouts."""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from judgewidgets.engine._http_connection import ProtocolError, ServerDisconnected
from judgewidgets.engine._http_pool import HTTPPool, header_lines

DEFAULTS = {"User-Agent": "judgewidgets-test", "Accept": "application/json"}


@dataclass
class Seen:
    """One request as the scripted server read it."""

    connection: int  # which accepted connection carried it (0, 1, ...)
    index: int  # its place on that connection
    head: bytes
    body: bytes


Reply = Callable[["Seen", asyncio.StreamWriter], Awaitable[bool]]  # True: keep the connection open


@dataclass
class Scripted:
    """A loopback HTTP/1.1 server whose answers a test writes by hand."""

    reply: Reply
    seen: list[Seen] = field(default_factory=list)
    connections: int = 0
    url: str = ""
    writers: list[asyncio.StreamWriter] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        number = self.connections
        self.connections += 1
        self.writers.append(writer)
        try:
            for index in range(10_000):
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
                    return
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                seen = Seen(number, index, head, await reader.readexactly(length))
                self.seen.append(seen)
                if not await self.reply(seen, writer):
                    return
        finally:
            writer.close()


Serve = Callable[[Reply], Awaitable["Scripted"]]  # starts a scripted server
Scenario = Callable[[Serve], Awaitable[None]]


@pytest.fixture(params=["asyncio", "uvloop"])
def run(request: pytest.FixtureRequest) -> Callable[[Scenario], None]:
    """Runs a scenario on asyncio's loop, then on uvloop (the sync facade's loop when it is installed); the
    scenario gets `serve(reply)`, which starts a scripted server that is closed afterwards."""
    if request.param == "uvloop":
        runner: Callable[[Awaitable[None]], None] = pytest.importorskip("uvloop").run
    else:
        runner = asyncio.run

    def go(scenario: Scenario) -> None:
        async def main() -> None:
            servers: list[asyncio.Server] = []

            async def serve(reply: Reply) -> Scripted:
                scripted = Scripted(reply)
                server = await asyncio.start_server(scripted.handle, "127.0.0.1", 0)
                servers.append(server)
                scripted.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
                return scripted

            try:
                await scenario(serve)
            finally:
                for server in servers:
                    server.close()
                for scripted_server in servers:
                    await scripted_server.wait_closed()

        runner(main())

    return go


def answer(body: bytes, *extra: str, status: str = "200 OK") -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", "Content-Type: application/json", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def chunked(body: bytes, size: int, trailers: str = "") -> bytes:
    parts = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"]
    for at in range(0, len(body), size):
        piece = body[at : at + size]
        parts.append(f"{len(piece):X};ext=1\r\n".encode() + piece + b"\r\n")
    parts.append(b"0\r\n" + trailers.encode() + b"\r\n")
    return b"".join(parts)


async def dribble(writer: asyncio.StreamWriter, data: bytes, step: int) -> None:
    """Send `data` in pieces of `step` bytes, each flushed on its own."""
    for at in range(0, len(data), step):
        writer.write(data[at : at + step])
        await writer.drain()
        await asyncio.sleep(0)


def echo(seen: Seen) -> bytes:
    return b'{"n": %d, "body": "%s"}' % (seen.index, seen.body)


# --- framing -------------------------------------------------------------------------------------------------


def test_content_length_answer_and_request_head(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(answer(echo(seen), "X-Twice: a", "x-twice: b", "Retry-After: 3"))
            return True

        server = await serve(reply)
        pool = HTTPPool(DEFAULTS)
        response = await pool.post(server.url, b"hello", {"Authorization": "Bearer sk-x"}, timeout=5)
        assert response.status == 200 and response.body == b'{"n": 0, "body": "hello"}'
        assert response.headers["x-twice"] == "a, b" and response.headers["retry-after"] == "3"
        head = server.seen[0].head.decode()
        assert head.startswith("POST /v1/chat/completions HTTP/1.1\r\n")
        assert f"Host: 127.0.0.1:{server.url.split(':')[2].split('/')[0]}\r\n" in head
        assert "User-Agent: judgewidgets-test\r\n" in head and "Authorization: Bearer sk-x\r\n" in head
        assert "Content-Length: 5\r\n" in head
        await pool.aclose()

    run(scenario)


def test_request_headers_replace_defaults_of_the_same_name(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(answer(b"{}"))
            return True

        server = await serve(reply)
        pool = HTTPPool(DEFAULTS)
        await pool.post(server.url, b"x", {"user-agent": "mine/1"}, timeout=5)
        head = server.seen[0].head.decode().lower()
        assert head.count("user-agent:") == 1 and "user-agent: mine/1" in head
        assert "accept: application/json" in head
        await pool.aclose()

    run(scenario)


@pytest.mark.parametrize("step", [1, 7, 100_000])
def test_chunked_answer_in_pieces(run: Callable[[Scenario], None], step: int) -> None:
    async def scenario(serve: Serve) -> None:
        payload = b'{"content": "' + b"x" * 5000 + b'"}'

        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            await dribble(writer, chunked(payload, 333, trailers="X-Trailer: 1\r\n"), step)
            return True

        server = await serve(reply)
        pool = HTTPPool()
        for _ in range(2):  # and the connection is reused after a chunked answer
            assert (await pool.post(server.url, b"x", timeout=5)).body == payload
        assert server.connections == 1
        await pool.aclose()

    run(scenario)


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_large_bodies_both_ways(run: Callable[[Scenario], None], framing: str) -> None:
    async def scenario(serve: Serve) -> None:
        sent = bytes(range(256)) * 40_000  # 10 MB out
        back = b"y" * 8_000_000  # 8 MB back

        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            assert seen.body == sent
            data = answer(back) if framing == "length" else chunked(back, 1 << 16)
            await dribble(writer, data, 1 << 20)
            return True

        server = await serve(reply)
        pool = HTTPPool()
        response = await pool.post(server.url, sent, timeout=30)
        assert response.body == back
        await pool.aclose()

    run(scenario)


def test_gzip_body_is_decoded(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        payload = b'{"ok": true}' * 100

        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(answer(gzip.compress(payload), "Content-Encoding: gzip"))
            return True

        server = await serve(reply)
        pool = HTTPPool({"Accept-Encoding": "gzip, deflate"})
        assert (await pool.post(server.url, b"x", timeout=5)).body == payload
        await pool.aclose()

    run(scenario)


def test_interim_answer_is_skipped_and_no_body_statuses(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if seen.index == 0:
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + answer(b"final"))
            else:
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            return True

        server = await serve(reply)
        pool = HTTPPool()
        assert (await pool.post(server.url, b"x", timeout=5)).body == b"final"
        empty = await pool.post(server.url, b"x", timeout=5)
        assert empty.status == 204 and empty.body == b""
        assert server.connections == 1
        await pool.aclose()

    run(scenario)


def test_body_until_close(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
            await dribble(writer, b'{"to": "the end"}', 4)
            return False  # the end of the connection ends the body

        server = await serve(reply)
        pool = HTTPPool()
        for _ in range(2):
            assert (await pool.post(server.url, b"x", timeout=5)).body == b'{"to": "the end"}'
        assert server.connections == 2 and pool.connections == 0
        await pool.aclose()

    run(scenario)


def test_error_status_is_a_response_not_an_exception(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(
                answer(b'{"error": {"message": "slow down"}}', "retry-after: 1", status="429 Too Many Requests")
            )
            return True

        server = await serve(reply)
        pool = HTTPPool()
        response = await pool.post(server.url, b"x", timeout=5)
        assert response.status == 429 and response.headers["retry-after"] == "1"
        await pool.aclose()

    run(scenario)


@pytest.mark.parametrize(
    "garbage",
    [
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Encoding: br\r\n\r\nabc",
    ],
)
def test_unreadable_answers_are_protocol_errors(run: Callable[[Scenario], None], garbage: bytes) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(garbage)
            return True

        server = await serve(reply)
        pool = HTTPPool()
        with pytest.raises(ProtocolError):
            await pool.post(server.url, b"x", timeout=5)
        assert pool.connections == 0
        await pool.aclose()

    run(scenario)


def test_header_injection_is_refused() -> None:
    assert header_lines({"A": "1", "B": "2"}) == b"A: 1\r\nB: 2\r\n"
    with pytest.raises(ValueError, match="line break"):
        header_lines({"Authorization": "Bearer x\r\nX-Evil: 1"})


def test_only_http_and_https(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        with pytest.raises(ValueError, match="http and https only"):
            await HTTPPool().post("ftp://127.0.0.1/x", b"", timeout=1)

    run(scenario)


# --- keep-alive ----------------------------------------------------------------------------------------------


def test_connections_are_reused_and_the_pool_is_as_large_as_the_concurrency(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            await asyncio.sleep(0.02)
            writer.write(answer(echo(seen)))
            return True

        server = await serve(reply)
        pool = HTTPPool()
        for _ in range(5):
            await pool.post(server.url, b"x", timeout=5)
        assert server.connections == 1
        limit = asyncio.Semaphore(8)  # what the engine's per-model concurrency limit does

        async def call(i: int) -> bytes:
            async with limit:
                return (await pool.post(server.url, str(i).encode(), timeout=5)).body

        bodies = await asyncio.gather(*(call(i) for i in range(80)))
        assert [b.split(b'"body": "')[1].rstrip(b'"}') for b in bodies] == [str(i).encode() for i in range(80)]
        assert server.connections <= 8 and pool.connections == server.connections
        await pool.aclose()
        assert pool.connections == 0 and pool.closed

    run(scenario)


def test_connection_close_answer_is_not_reused(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(answer(b"{}", "Connection: close"))
            return False

        server = await serve(reply)
        pool = HTTPPool()
        for _ in range(3):
            assert (await pool.post(server.url, b"x", timeout=5)).status == 200
        assert server.connections == 3 and pool.connections == 0
        await pool.aclose()

    run(scenario)


def test_http10_answer_without_keep_alive_is_not_reused(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            return False

        server = await serve(reply)
        pool = HTTPPool()
        for _ in range(2):
            assert (await pool.post(server.url, b"x", timeout=5)).body == b"{}"
        assert server.connections == 2
        await pool.aclose()

    run(scenario)


def test_idle_connection_closed_by_the_server_is_replaced(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(answer(b"{}"))
            return False  # answer, then close the kept-alive connection (a server's idle timeout)

        server = await serve(reply)
        pool = HTTPPool()
        await pool.post(server.url, b"x", timeout=5)
        for _ in range(200):  # the close reaches the pool while the connection is idle
            if all(c.closed for stack in pool._idle.values() for c in stack):
                break
            await asyncio.sleep(0.01)
        assert all(c.closed for stack in pool._idle.values() for c in stack)
        assert (await pool.post(server.url, b"x", timeout=5)).status == 200
        assert server.connections == 2 and len(server.seen) == 2
        await pool.aclose()

    run(scenario)


def test_stale_reused_connection_is_retried_once_on_a_new_one(run: Callable[[Scenario], None]) -> None:
    """The race a keep-alive timeout causes: the server closes a reused connection as our request arrives."""

    async def scenario(serve: Serve) -> None:

        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if seen.connection == 0 and seen.index == 1:
                return False  # read the request, close without a word
            writer.write(answer(echo(seen)))
            return True

        server = await serve(reply)
        pool = HTTPPool()
        await pool.post(server.url, b"first", timeout=5)
        response = await pool.post(server.url, b"second", timeout=5)
        assert response.body == b'{"n": 0, "body": "second"}'  # answered on connection 1
        assert [(s.connection, s.body) for s in server.seen] == [(0, b"first"), (0, b"second"), (1, b"second")]
        await pool.aclose()

    run(scenario)


def test_a_new_connection_closed_before_answering_is_not_retried(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            return False

        server = await serve(reply)
        pool = HTTPPool()
        with pytest.raises(ServerDisconnected) as caught:
            await pool.post(server.url, b"x", timeout=5)
        assert caught.value.clean and len(server.seen) == 1  # the engine's retry policy decides, not the pool
        await pool.aclose()

    run(scenario)


def test_stale_retry_happens_once_only(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if len(server.seen) == 1:
                writer.write(answer(b"{}"))
                return True
            return False  # every later request: closed unanswered

        server = await serve(reply)
        pool = HTTPPool()
        await pool.post(server.url, b"x", timeout=5)
        with pytest.raises(ServerDisconnected):
            await pool.post(server.url, b"y", timeout=5)
        assert len(server.seen) == 3  # the first, the stale attempt, and one retry
        await pool.aclose()

    run(scenario)


def test_close_in_the_middle_of_an_answer_is_not_retried(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if seen.index == 0:
                writer.write(answer(b"{}"))
                return True
            writer.write(answer(b"0123456789")[:-4])
            await writer.drain()
            return False

        server = await serve(reply)
        pool = HTTPPool()
        await pool.post(server.url, b"x", timeout=5)
        with pytest.raises(ServerDisconnected) as caught:
            await pool.post(server.url, b"x", timeout=5)
        assert not caught.value.clean and len(server.seen) == 2
        await pool.aclose()

    run(scenario)


def test_idle_connections_older_than_keepalive_are_not_used(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(answer(b"{}"))
            return True

        server = await serve(reply)
        pool = HTTPPool(keepalive_s=1.0)
        await pool.post(server.url, b"x", timeout=5)
        await pool.post(server.url, b"x", timeout=5)
        assert server.connections == 1
        await asyncio.sleep(1.2)
        await pool.post(server.url, b"x", timeout=5)
        assert server.connections == 2 and pool.connections == 1
        await pool.aclose()

    run(scenario)


def test_connections_a_burst_opened_close_once_idle_too_long(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            await asyncio.sleep(0.02)
            writer.write(answer(b"{}"))
            return True

        server = await serve(reply)
        pool = HTTPPool(keepalive_s=0.2)
        await asyncio.gather(*(pool.post(server.url, b"x", timeout=5) for _ in range(8)))
        assert pool.connections == 8
        for _ in range(14):  # a trickle keeps the newest connection fresh; the others outlive keepalive_s
            await pool.post(server.url, b"x", timeout=5)
            await asyncio.sleep(0.03)
        assert pool.connections == 1
        await pool.aclose()

    run(scenario)


# --- timeouts and cancellation ---------------------------------------------------------------------------------


def test_timeout_drops_the_connection(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            if seen.index == 0:
                writer.write(answer(b"{}"))
                return True
            await asyncio.sleep(5)  # never in time
            return False

        server = await serve(reply)
        pool = HTTPPool()
        await pool.post(server.url, b"x", timeout=5)
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(TimeoutError):
            await pool.post(server.url, b"x", timeout=0.2)
        assert 0.15 < loop.time() - started < 3.0
        assert pool.connections == 0  # a late answer can never be read as the next request's

    run(scenario)


def test_slow_dribbled_answer_times_out_as_a_whole(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            data = answer(b"x" * 40)
            for byte in data:
                writer.write(bytes([byte]))
                await asyncio.sleep(0.02)  # every byte in time, the whole answer not
            return True

        server = await serve(reply)
        pool = HTTPPool()
        with pytest.raises(TimeoutError):
            await pool.post(server.url, b"x", timeout=0.3)

    run(scenario)


def test_cancelled_caller_does_not_return_the_connection(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            await asyncio.sleep(0.3)
            writer.write(answer(b"{}"))
            return True

        server = await serve(reply)
        pool = HTTPPool()
        task = asyncio.ensure_future(pool.post(server.url, b"x", timeout=5))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert pool.connections == 0
        assert (await pool.post(server.url, b"y", timeout=5)).status == 200
        await pool.aclose()

    run(scenario)


def test_closed_pool_refuses_requests(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        async def reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
            writer.write(answer(b"{}"))
            return True

        server = await serve(reply)
        pool = HTTPPool()
        await pool.post(server.url, b"x", timeout=5)
        await pool.aclose()
        with pytest.raises(ConnectionError, match="closed"):
            await pool.post(server.url, b"x", timeout=5)

    run(scenario)


def test_refused_connection_is_an_oserror(run: Callable[[Scenario], None]) -> None:
    async def scenario(serve: Serve) -> None:
        with pytest.raises(OSError):
            await HTTPPool().post("http://127.0.0.1:9/v1/chat/completions", b"x", timeout=5)

    run(scenario)


# --- https ---------------------------------------------------------------------------------------------------


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made with `cryptography`."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    import ipaddress

    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def test_https_with_a_trusted_certificate(
    run: Callable[[Scenario], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario(serve: Serve) -> None:
        cert, key = _self_signed(tmp_path)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        scripted = Scripted(lambda seen, writer: _tls_reply(seen, writer))
        server = await asyncio.start_server(scripted.handle, "127.0.0.1", 0, ssl=context)
        url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
        try:
            untrusting = HTTPPool()
            with pytest.raises(ssl.SSLError):  # the certificate is not in certifi's bundle
                await untrusting.post(url, b"x", timeout=5)
            await untrusting.aclose()
            monkeypatch.setenv("SSL_CERT_FILE", str(cert))
            pool = HTTPPool()
            for _ in range(3):
                assert (await pool.post(url, b"secret", timeout=5)).body == b'{"tls": true}'
            assert scripted.connections == 1  # one kept alive for three requests (the refused one never got here)
            assert b"Host: 127.0.0.1:" in scripted.seen[0].head and scripted.seen[0].body == b"secret"
            await pool.aclose()
        finally:
            server.close()
            await server.wait_closed()

    run(scenario)


async def _tls_reply(seen: Seen, writer: asyncio.StreamWriter) -> bool:
    writer.write(answer(b'{"tls": true}'))
    return True


def test_unverified_certificate_is_a_connection_failure_on_the_transport(
    run: Callable[[Scenario], None], tmp_path: Path
) -> None:
    """As httpx under litellm reports it: no status, so the engine's retry policy treats it as a dropped call."""
    from judgewidgets.engine import ChatRequest, OpenAIHTTPTransport
    from judgewidgets.engine._litellm import CallFailure

    async def scenario(serve: Serve) -> None:
        cert, key = _self_signed(tmp_path)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        server = await asyncio.start_server(Scripted(_tls_reply).handle, "127.0.0.1", 0, ssl=context)
        base = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        request = ChatRequest("openai/m", ({"role": "user", "content": "x"},), {"api_base": base})
        transport = OpenAIHTTPTransport()
        try:
            with pytest.raises(CallFailure) as caught:
                await transport.complete(request, 5.0)
            assert caught.value.status_code is None and str(caught.value).startswith("APIConnectionError: SSL")
        finally:
            await transport.aclose()
            server.close()
            await server.wait_closed()

    run(scenario)


def test_endpoints_the_own_client_carries() -> None:
    from judgewidgets.engine._openai_http import openai_endpoint

    def direct(base: str) -> bool:
        endpoint = openai_endpoint("openai/m", {"api_base": base})
        assert endpoint is not None
        return endpoint.direct

    assert direct("http://127.0.0.1:8000/v1") and direct("https://api.example.com/v1")
    assert not direct("http://user:secret@127.0.0.1:8000/v1")  # credentials in the URL: aiohttp sends them
