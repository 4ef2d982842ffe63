import threading
from pathlib import Path

from judgewidgets.engine import CallCache, ChatRequest, Completion

MESSAGES = ({"role": "user", "content": "hi"},)


def test_roundtrip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = CallCache(path)
    request = ChatRequest("openai/x", MESSAGES, {"temperature": 0.0})
    assert cache.get(request) is None
    cache.put(request, Completion(content="4", prompt_tokens=3, completion_tokens=1, cost_usd=0.1, latency_s=0.2))
    hit = cache.get(request)
    assert hit is not None and hit.content == "4" and hit.cached
    cache.close()
    again = CallCache(path).get(request)
    assert again is not None and again.content == "4" and again.prompt_tokens == 3


def test_key_covers_what_determines_the_answer_and_nothing_secret() -> None:
    base = ChatRequest("openai/x", MESSAGES, {"temperature": 0.0, "api_key": "sk-secret-123"})
    assert base.cache_key() == ChatRequest("openai/x", MESSAGES, {"temperature": 0.0, "api_key": "other"}).cache_key()
    assert base.cache_key() != ChatRequest("openai/y", MESSAGES, {"temperature": 0.0}).cache_key()
    assert base.cache_key() != ChatRequest("openai/x", MESSAGES, {"temperature": 0.5}).cache_key()
    assert base.cache_key() != ChatRequest("openai/x", MESSAGES, {"temperature": 0.0}, sample=1).cache_key()
    other = ({"role": "user", "content": "hello"},)
    assert base.cache_key() != ChatRequest("openai/x", other, {"temperature": 0.0}).cache_key()


def test_file_holds_no_api_key(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "c.sqlite")
    request = ChatRequest("openai/x", MESSAGES, {"api_key": "sk-secret-123"})
    cache.put(request, Completion(content="ok"))
    cache.close()
    assert b"sk-secret-123" not in (tmp_path / "c.sqlite").read_bytes()


def test_two_caches_share_one_file_from_threads(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    caches = [CallCache(path), CallCache(path)]

    def write(cache: CallCache, offset: int) -> None:
        for i in range(200):
            cache.put(ChatRequest("m", ({"role": "user", "content": str(offset + i)},)), Completion(content=str(i)))
        cache.flush()

    threads = [threading.Thread(target=write, args=(c, k * 1000)) for k, c in enumerate(caches)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(CallCache(path)) == 400


def test_caches_opening_a_new_file_together_wait_for_each_other(tmp_path: Path) -> None:
    """Switching a new file to WAL is refused at once ("database is locked") while another connection does it;
    a cache opening then must wait, not die (a CI run lost a whole writer thread to it),
    nor see another cache's journal before it is locked and take it for a dead one."""
    for attempt in range(10):
        path = tmp_path / f"{attempt}.sqlite"
        barrier = threading.Barrier(6)
        errors: list[BaseException] = []

        def open_and_write(
            k: int, path: Path = path, barrier: threading.Barrier = barrier, errors: list[BaseException] = errors
        ) -> None:
            cache = CallCache(path)
            barrier.wait()
            try:
                cache.put(ChatRequest("m", ({"role": "user", "content": str(k)},)), Completion(content="x"))
                cache.flush()
            except BaseException as error:
                errors.append(error)

        threads = [threading.Thread(target=open_and_write, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(CallCache(path)) == 6


def test_key_is_the_digest_of_the_whole_request_so_old_caches_keep_working() -> None:
    """The key is computed piece by piece with shared parts encoded once; it must stay the digest that earlier
    versions stored answers under, the SHA-256 of the request's sorted JSON."""
    import hashlib
    import json

    from judgewidgets.engine._request import SECRET_KWARGS, TRANSPORT_KWARGS

    def reference(request: ChatRequest) -> str:
        params = {k: v for k, v in request.params.items() if k not in TRANSPORT_KWARGS | SECRET_KWARGS}
        material = {"model": request.model, "messages": request.messages, "params": params, "sample": request.sample}
        return hashlib.sha256(
            json.dumps(material, sort_keys=True, default=str, ensure_ascii=False).encode()
        ).hexdigest()

    system = {"role": "system", "content": "Judge strictly. " * 40 + "é ✓"}
    params = {"temperature": 0.0, "api_key": "sk-x", "response_format": {"type": "json_schema", "b": [1, 2.5, None]}}
    requests = [
        ChatRequest("openai/x", (system, {"role": "user", "content": f"question {i} — ünïcode"}), params, i)
        for i in range(5)
    ]
    requests.append(ChatRequest("m", ({"role": "user", "content": [{"type": "text", "text": "parts"}]},)))
    requests.append(ChatRequest("m", ({"role": "user", "content": "x" * 300, "name": "n"},), {"seed": 3}))
    for request in requests:
        assert request.cache_key() == reference(request)


async def test_identical_requests_in_flight_are_answered_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    import judgewidgets as jw
    from judgewidgets.engine import CallSession
    from judgewidgets.testing import ScriptedTransport

    transport = ScriptedTransport(lambda r, a: '{"score": 4}', delay=0.05)
    judge = jw.LLMJudge("openai/m", transport=transport, cache=jw.CallCache(tmp_path / "c.sqlite"))
    items = jw._records.build_items(["q"] * 3, ["a"] * 3)
    session = CallSession()
    from judgewidgets._progress import make_progress

    votes = await judge.ajudge(items, session, make_progress(False, 3, ""))
    assert len(transport.requests) == 1  # three identical requests at once: one call
    assert [v.cached for v in votes].count(False) == 1 and all(v.score == 0.75 for v in votes)
    uncached = jw.LLMJudge("openai/m", transport=transport, cache=False)
    await asyncio.gather(uncached.ajudge(items, CallSession(), make_progress(False, 3, "")))
    assert len(transport.requests) == 4  # without a cache every request is made
