"""Batch judging through both providers' batch protocols, on the loopback batch server: the same votes as a live
run at half the price, resumed after a restart without paying twice, expired and failed requests resent."""

from __future__ import annotations

import asyncio

import pytest

import judgewidgets as jw
from judgewidgets._errors import ConfigurationError
from judgewidgets.engine import CallCache
from judgewidgets.testing import BatchTestServer, hashed_score, json_score

PROMPTS = ["What is 2+2?", "Capital of France?", "Boiling point of water?", "Largest planet?"]
RESPONSES = ["4", "Paris", "100 C", "Jupiter"]


def _judge(server: BatchTestServer, protocol: str, cache: object, model: str | None = None, **options: object):
    if protocol == "openai":
        return jw.LLMJudge(
            model or "openai/test",
            template="likert",
            api_base=server.base_url,
            api_key="sk-test",
            cache=cache,
            **options,
        )
    return jw.LLMJudge(
        model or "anthropic/claude-3-5-haiku-latest",
        template="likert",
        api_base=server.url,
        api_key="sk-test",
        cache=cache,
        **options,
    )


def _created(server: BatchTestServer, protocol: str) -> int:
    return server.batch_counts["batches.create" if protocol == "openai" else "messages.batches.create"]


def _live_calls(server: BatchTestServer, protocol: str) -> int:
    return server.stats.total + server.batch_counts["messages.create"]


def _cut_off_once_submitted(server: BatchTestServer, judge: object, batch: object = True) -> None:
    """Run `judge.ascore(..., batch=True)` and cut it off (as Ctrl-C or a dead kernel would) once its batch is
    created at the server and written down."""

    def created() -> int:
        return server.batch_counts["batches.create"] + server.batch_counts["messages.batches.create"]

    before = created()

    async def run() -> None:
        task = asyncio.get_running_loop().create_task(
            judge.ascore(PROMPTS, RESPONSES, batch=batch, progress=False)  # type: ignore[attr-defined]
        )
        for _ in range(600):
            if created() > before or task.done():
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # the provider's answer read and its id written down
        assert not task.done(), "the run ended before it could be cut off"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())


PROTOCOLS = ["openai", "anthropic"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_batch_run_gives_the_live_runs_votes_and_is_never_paid_twice(protocol, tmp_path):
    with BatchTestServer(json_score(4), delay=0.1) as server:
        cache = CallCache(tmp_path / "calls.sqlite")
        res = _judge(server, protocol, cache).score(PROMPTS, RESPONSES, batch=True, progress=False)
        votes = res.votes
        assert votes["score"].notna().all() and votes["error"].isna().all()
        assert votes["batch_id"].nunique() == 1 and votes["batch_id"].iloc[0].startswith(("batch_", "msgbatch_"))
        assert not votes["cached"].any()
        assert _created(server, protocol) == 1 and _live_calls(server, protocol) == 0
        live = _judge(server, protocol, False).score(PROMPTS, RESPONSES, progress=False)
        assert live.votes["score"].tolist() == votes["score"].tolist()  # logprobs too, where the protocol has them
        again = _judge(server, protocol, CallCache(tmp_path / "calls.sqlite")).score(
            PROMPTS, RESPONSES, batch=True, progress=False
        )
        assert again.votes["cached"].all() and again.votes["batch_id"].tolist() == votes["batch_id"].tolist()
        assert _created(server, protocol) == 1  # the rerun paid for nothing


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_results_in_another_order_than_the_requests_land_on_their_own_rows(protocol):
    prompts = [f"Question number {n}?" for n in range(12)]
    responses = [f"Answer number {n}." for n in range(12)]
    with BatchTestServer(hashed_score(), delay=0.05, shuffle=True) as server:
        batched = _judge(server, protocol, False).score(prompts, responses, batch=True, progress=False)
        (batch,) = server.batch_service.batches.values()
        live = _judge(server, protocol, False).score(prompts, responses, progress=False)
    sent = [r["custom_id"] for r in batch.requests]
    assert [r["custom_id"] for r in batch.results] != sent and sorted(r["custom_id"] for r in batch.results) == sorted(
        sent
    )
    assert live.votes["score"].nunique() > 1  # the scores tell the rows apart
    assert batched.votes["score"].tolist() == live.votes["score"].tolist()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_batch_cost_is_half_the_live_cost(protocol, tmp_path):
    model = "openai/gpt-4o-mini" if protocol == "openai" else "anthropic/claude-3-5-haiku-latest"
    with BatchTestServer(json_score(4), delay=0.05) as server:
        batched = _judge(server, protocol, False, model).score(PROMPTS, RESPONSES, batch=True, progress=False)
        live = _judge(server, protocol, False, model).score(PROMPTS, RESPONSES, progress=False)
    batch_cost, live_cost = batched.votes["cost_usd"].sum(), live.votes["cost_usd"].sum()
    assert live_cost > 0 and batch_cost == pytest.approx(live_cost * 0.5)
    assert (batched.votes["prompt_tokens"] == live.votes["prompt_tokens"]).all()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_expired_batch_keeps_its_answers_and_resends_the_rest_live(protocol, tmp_path):
    with BatchTestServer(json_score(4), delay=0.05, expire=1, expire_answered=0.5) as server:
        res = _judge(server, protocol, tmp_path / "c.sqlite").score(PROMPTS, RESPONSES, batch=True, progress=False)
        votes = res.votes
        assert votes["error"].isna().all() and votes["score"].notna().all()
        assert votes["batch_id"].notna().sum() == 2 and votes["batch_id"].isna().sum() == 2  # two resent live
        assert _created(server, protocol) == 1 and _live_calls(server, protocol) == 2


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_batch_retry_batch_sends_what_expired_as_a_new_batch(protocol, tmp_path):
    with BatchTestServer(json_score(4), delay=0.05, expire=1, expire_answered=0.5) as server:
        res = _judge(server, protocol, tmp_path / "c.sqlite").score(
            PROMPTS, RESPONSES, batch=True, batch_retry="batch", progress=False
        )
        votes = res.votes
        assert votes["error"].isna().all() and votes["batch_id"].notna().all()
        assert votes["batch_id"].nunique() == 2
        assert _created(server, protocol) == 2 and _live_calls(server, protocol) == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_request_that_failed_in_the_batch_is_resent_live(protocol, tmp_path):
    prompts = [*PROMPTS[:3], "Largest planet? [[fault-once:500]]"]
    with BatchTestServer(json_score(4), delay=0.05) as server:
        res = _judge(server, protocol, tmp_path / "c.sqlite").score(prompts, RESPONSES, batch=True, progress=False)
    votes = res.votes
    assert votes["error"].isna().all()
    assert votes["batch_id"].isna().tolist() == [False, False, False, True]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_restart_mid_batch_resumes_the_recorded_batch(protocol, tmp_path):
    """The run is cut off while its batch is processing (Ctrl-C, a dead kernel); a fresh cache and session run the
    same cell again: it waits for the batch written down, creates none, and pays for nothing twice."""
    path = tmp_path / "calls.sqlite"
    with BatchTestServer(json_score(4), delay=30.0) as server:
        judge = _judge(server, protocol, CallCache(path))

        _cut_off_once_submitted(server, judge)
        assert _created(server, protocol) == 1
        listed = jw.batches(tmp_path)
        assert listed["status"].iloc[0] in ("validating", "in_progress")
        assert listed["n_requests"].tolist() == [4]
        server.plan.delay = 0.0  # the batch has ended at the provider meanwhile
        fresh = _judge(server, protocol, CallCache(path))
        res = fresh.score(PROMPTS, RESPONSES, batch=True, progress=False)
        assert res.votes["error"].isna().all() and res.votes["score"].notna().all()
        assert res.votes["batch_id"].tolist() == [listed["batch_id"].iloc[0]] * 4
        assert _created(server, protocol) == 1 and _live_calls(server, protocol) == 0
        assert jw.batches(tmp_path)["collected"].tolist() == [True]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("twin", ["resume_batch", "aresume_batch"])
def test_resume_batch_rebuilds_the_result_after_a_restart(protocol, twin, tmp_path, monkeypatch):
    """The key from the environment (never written down): resume_batch (or its async twin, awaited in a running
    loop) makes the submitting call again."""
    monkeypatch.setenv("OPENAI_API_KEY" if protocol == "openai" else "ANTHROPIC_API_KEY", "sk-test-env")
    path = tmp_path / "calls.sqlite"
    with BatchTestServer(json_score(4), delay=30.0) as server:
        base = server.base_url if protocol == "openai" else server.url
        model = "openai/test" if protocol == "openai" else "anthropic/claude-3-5-haiku-latest"
        judge = jw.LLMJudge(model, template="likert", api_base=base, cache=str(path))

        _cut_off_once_submitted(server, judge)
        batch_id = jw.batches(tmp_path)["batch_id"].iloc[0]
        assert b"sk-test-env" not in (tmp_path / "batches.sqlite").read_bytes()
        server.plan.delay = 0.0
        if twin == "resume_batch":
            res = jw.resume_batch(batch_id, tmp_path)
        else:
            res = asyncio.run(jw.aresume_batch(batch_id, tmp_path))
        assert isinstance(res, type(judge.score(PROMPTS[:1], RESPONSES[:1], progress=False)))
        assert res.votes["batch_id"].tolist()[:4] == [batch_id] * 4
        assert _created(server, protocol) == 1


def test_a_run_whose_arguments_hold_a_key_is_resumed_by_running_it_again(tmp_path):
    with BatchTestServer(json_score(4), delay=30.0) as server:
        judge = _judge(server, "openai", str(tmp_path / "calls.sqlite"))

        _cut_off_once_submitted(server, judge)
        assert b"sk-test" not in (tmp_path / "batches.sqlite").read_bytes()
        with pytest.raises(ConfigurationError, match="run the same cell again"):
            jw.resume_batch(jw.batches(tmp_path)["batch_id"].iloc[0], tmp_path)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cancel_batch_cancels_at_the_provider_and_the_rows_record_it(protocol, tmp_path):
    path = tmp_path / "calls.sqlite"
    with BatchTestServer(json_score(4), delay=30.0) as server:
        judge = _judge(server, protocol, CallCache(path))

        _cut_off_once_submitted(server, judge)
        batch_id = jw.batches(tmp_path)["batch_id"].iloc[0]
        status = jw.cancel_batch(batch_id, tmp_path, api_key="sk-test")
        assert status in ("cancelling", "canceling")
        res = _judge(server, protocol, CallCache(path)).score(PROMPTS, RESPONSES, batch=True, progress=False)
        assert res.votes["error"].str.contains("cancelled").all()
        assert _created(server, protocol) == 1 and _live_calls(server, protocol) == 0


def test_a_server_without_a_batch_api_is_a_configuration_error_and_nothing_is_judged(tmp_path):
    with BatchTestServer(json_score(4), missing=True) as server:
        with pytest.raises(ConfigurationError, match="404"):
            _judge(server, "openai", False).score(PROMPTS, RESPONSES, batch=True, progress=False)
        assert server.stats.total == 0


def test_a_provider_without_a_batch_api_is_refused_before_anything_is_sent():
    judge = jw.LLMJudge("ollama/llama3", template="likert", api_base="http://127.0.0.1:9")
    with pytest.raises(ConfigurationError, match="no batch API"):
        judge.score(PROMPTS, RESPONSES, batch=True, progress=False)


def test_the_openai_sdk_reads_the_batch_the_engine_made(tmp_path):
    openai = pytest.importorskip("openai")
    with BatchTestServer(json_score(4), delay=0.05) as server:
        res = _judge(server, "openai", False).score(PROMPTS, RESPONSES, batch=True, progress=False)
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")
        batch = client.batches.retrieve(res.votes["batch_id"].iloc[0])
        assert batch.status == "completed" and batch.request_counts.completed == 4
        sent = client.files.content(batch.input_file_id).text.splitlines()
        assert len(sent) == 4 and all('"url":"/v1/chat/completions"' in line for line in sent)


def test_estimate_cost_at_the_batch_price():
    judge = jw.LLMJudge("openai/gpt-4o-mini", template="likert")
    live = judge.estimate_cost(PROMPTS, RESPONSES)
    batched = judge.estimate_cost(PROMPTS, RESPONSES, batch=True)
    assert batched.batch and batched.total_usd == pytest.approx(live.total_usd * 0.5)


def test_a_run_that_died_as_openai_named_its_batch_finds_it_by_its_file(tmp_path, monkeypatch):
    """The process dies after the batch was created but before its id was written down: the next run looks the
    batch up by the uploaded file it was made from, and creates none."""
    from judgewidgets.engine._batch_api import BatchAPI

    real_create = BatchAPI.create

    async def created_then_killed(self, **kwargs):  # type: ignore[no-untyped-def]
        await real_create(self, **kwargs)
        raise asyncio.CancelledError  # as if the kernel died with the answer in flight

    path = tmp_path / "calls.sqlite"
    with BatchTestServer(json_score(4), delay=0.05) as server:
        monkeypatch.setattr(BatchAPI, "create", created_then_killed)

        async def cut_off() -> None:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(
                    _judge(server, "openai", CallCache(path)).ascore(PROMPTS, RESPONSES, batch=True, progress=False),
                    1.0,
                )

        asyncio.run(cut_off())
        listed = jw.batches(tmp_path)
        assert listed["batch_id"].isna().all() and listed["status"].tolist() == ["uploaded"]
        monkeypatch.setattr(BatchAPI, "create", real_create)
        res = _judge(server, "openai", CallCache(path)).score(PROMPTS, RESPONSES, batch=True, progress=False)
        assert res.votes["error"].isna().all() and res.votes["batch_id"].notna().all()
        assert server.batch_counts["batches.create"] == 1 and server.batch_counts["batches.list"] == 1
        assert server.batch_counts["files.create"] == 1 and server.stats.total == 0


_SUBMITTER = """
import sys
import judgewidgets as jw
base, cache = sys.argv[1], sys.argv[2]
judge = jw.LLMJudge("openai/test", template="likert", api_base=base, api_key="sk-test", cache=cache)
judge.score({prompts!r}, {responses!r}, batch=True, progress=False)
"""


def test_a_process_killed_mid_batch_is_resumed_by_the_next_without_paying_twice(tmp_path):
    """A real restart: the process that submitted the batch is killed (SIGKILL: no clean-up runs) while the batch
    is processing; this process runs the same judge on the same items and gets every answer from that batch."""
    import subprocess
    import sys
    import time

    path = tmp_path / "calls.sqlite"
    script = tmp_path / "submit.py"
    script.write_text(_SUBMITTER.format(prompts=PROMPTS, responses=RESPONSES))
    with BatchTestServer(json_score(4), delay=60.0) as server:
        child = subprocess.Popen([sys.executable, str(script), server.base_url, str(path)])
        try:
            deadline = time.monotonic() + 120
            while server.batch_counts["batches.retrieve"] == 0 and time.monotonic() < deadline:
                time.sleep(0.05)  # polled once: the batch id is written down
            assert server.batch_counts["batches.retrieve"] >= 1, "the child never polled its batch"
        finally:
            child.kill()
            child.wait()
        server.plan.delay = 0.0
        res = _judge(server, "openai", CallCache(path)).score(PROMPTS, RESPONSES, batch=True, progress=False)
        assert res.votes["error"].isna().all() and res.votes["batch_id"].nunique() == 1
        assert server.batch_counts["batches.create"] == 1 and server.batch_counts["files.create"] == 1
        assert server.stats.total == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_interrupted_run_cancels_its_batches_only_when_asked(protocol, tmp_path):
    with BatchTestServer(json_score(4), delay=60.0) as server:
        _cut_off_once_submitted(server, _judge(server, protocol, tmp_path / "a" / "calls.sqlite"))
        _cut_off_once_submitted(
            server, _judge(server, protocol, tmp_path / "b" / "calls.sqlite"), jw.Batching(cancel_on_interrupt=True)
        )
        kept, cancelled = server.batch_service.batches.values()
        assert kept.cancelled_at is None and cancelled.cancelled_at is not None
        assert server.batch_counts["batches.cancel" if protocol == "openai" else "messages.batches.cancel"] == 1
        assert jw.batches(tmp_path / "b")["status"].tolist() in (["cancelling"], ["canceling"])
        assert jw.batches(tmp_path / "a")["status"].tolist() in (["validating"], ["in_progress"])


def test_a_budget_holds_batched_calls_back_until_their_batch_settles():
    """Reserved at the live price before they are collected: what does not fit waits for the batch in flight to be
    billed (at half that), then goes in the next batch; what can never fit is recorded as not run."""
    prompts = [f"q{i}" for i in range(6)]
    with BatchTestServer(json_score(4), delay=0.02) as server:
        judge = _judge(server, "openai", False, "openai/gpt-4o-mini")
        budget = judge.estimate_cost(prompts, ["a"] * 6).total_usd / 2
        res = judge.score(prompts, ["a"] * 6, batch=True, progress=False, max_cost_usd=budget)
    judged = res.votes["error"].isna()
    assert 1 <= judged.sum() < 6 and res.votes.loc[judged, "batch_id"].notna().all()
    assert res.votes.loc[~judged, "error"].str.startswith("budget:").all()
    assert res.votes["cost_usd"].sum() <= budget


def test_a_judge_with_a_transport_of_its_own_is_refused_before_anything_is_sent():
    from judgewidgets.testing import ScriptedTransport

    scripted = ScriptedTransport(lambda request, attempt: '{"score": 4}')
    judge = jw.LLMJudge("openai/test", template="likert", transport=scripted, cache=False)
    with pytest.raises(ConfigurationError, match="transport"):
        judge.score(PROMPTS, RESPONSES, batch=True, progress=False)
    assert scripted.requests == []
