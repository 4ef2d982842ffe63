"""SequentialRater against fake transports: sync/async twins, live updates, failures, mixed panels, batches."""

import asyncio

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.engine import RetryPolicy
from judgewidgets.engine._litellm import CallFailure
from judgewidgets.sequential import SEED_DISTRIBUTION, SequentialFrame, SequentialRater, SequentialResult
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text

POINTS = np.arange(1, 11)
NO_RETRY = RetryPolicy(max_retries=0)
TRACE_COLUMNS = ["draw", "judge", "variant", "value", "counted", "n", "mean", "low", "high", "half_width", "error"]


def seeded_rating(request, attempt) -> str:  # type: ignore[no-untyped-def]
    """A judge whose k-th rating is a draw from the seed's distribution, keyed on the request's sample index."""
    rng = np.random.default_rng(request.sample)
    return f'{{"score": {rng.choice(POINTS, p=SEED_DISTRIBUTION)}}}'


def rater(reply=seeded_rating, judges=("openai/judge",), delay: float = 0.0, **kwargs) -> SequentialRater:  # type: ignore[no-untyped-def]
    transport = ScriptedTransport(reply, delay=delay)
    kwargs.setdefault("retry", NO_RETRY)
    return SequentialRater(list(judges), transport=transport, **kwargs)


def test_rate_converges_to_the_target() -> None:
    sr = rater().rate("What is 2+2?", "4")
    assert isinstance(sr, SequentialResult)
    assert sr.status == "converged" and sr.converged
    assert sr.half_width <= sr.target_half_width + 1e-9 and sr.target_half_width == pytest.approx(0.3)
    assert sr.low <= sr.mean <= sr.high and 20 <= sr.n <= 200
    assert sr.method == "t" and sr.failures == 0
    assert list(sr.trace.columns)[: len(TRACE_COLUMNS)] == TRACE_COLUMNS
    assert len(sr.trace) == sr.n and sr.trace["n"].tolist() == list(range(1, sr.n + 1))
    assert sr.trace["draw"].tolist() == list(range(sr.n))
    assert sr.trace["value"].between(1, 10).all()
    assert sr.mean == pytest.approx(sr.trace["value"].mean())
    assert sr.trace["half_width"].iloc[-1] == pytest.approx(sr.half_width)
    assert "judgments" in str(sr) and "<table>" in sr._repr_html_()


async def test_rate_and_arate_are_twins() -> None:
    sync = rater(cache=False).rate("q", "a")
    async_ = await rater(cache=False).arate("q", "a")
    assert sync.summary() == async_.summary()
    pd.testing.assert_frame_equal(sync.trace, async_.trace)


def test_every_draw_is_a_fresh_sample() -> None:
    transport = ScriptedTransport(seeded_rating)
    sr = SequentialRater(["openai/judge"], transport=transport).rate("q", "a")
    samples = [r.sample for r in transport.requests]
    assert len(samples) == len(set(samples)) == sr.n
    again = SequentialRater(["openai/judge"], transport=transport).rate("q", "a")  # replayed from the cache
    assert again.mean == sr.mean and len(transport.requests) == sr.n
    fresh = SequentialRater(["openai/judge"], transport=transport, seed=1).rate("q", "a")
    assert len(transport.requests) == sr.n + fresh.n


def test_seed_method_reproduces_the_seed_loop() -> None:
    sr = rater(method="seed").rate("q", "a")
    assert sr.method == "seed"
    assert sr.trace["draw"].max() + 1 == sr.n
    assert sr.n >= 5


def test_on_update_sees_every_judgment() -> None:
    seen: list[tuple[str, int, int]] = []

    def hook(snapshot: SequentialResult) -> None:
        seen.append((snapshot.status, snapshot.n, len(snapshot.trace)))

    sr = rater().rate("q", "a", on_update=hook)
    assert [s[1] for s in seen[:-1]] == list(range(1, sr.n + 1))  # after every judgment, with the growing trace
    assert all(status == "running" for status, _, _ in seen[:-1])
    assert seen[-1] == ("converged", sr.n, sr.n)


async def test_async_on_update_is_awaited() -> None:
    calls = []

    async def hook(snapshot: SequentialResult) -> None:
        await asyncio.sleep(0)
        calls.append(snapshot.n)

    sr = await rater().arate("q", "a", on_update=hook)
    assert len(calls) == sr.n + 1


def test_failed_calls_are_not_counted() -> None:
    def flaky(request, attempt):  # type: ignore[no-untyped-def]
        if request.sample % 4 == 3:  # a failure of that call alone (a 401 would end every call of the run)
            raise CallFailure("NotFoundError: nope", 404)
        return seeded_rating(request, attempt)

    sr = rater(flaky).rate("q", "a")
    assert sr.status == "converged"
    failed = sr.trace[~sr.trace["counted"]]
    assert len(failed) == sr.failures > 0
    assert failed["value"].isna().all() and failed["error"].str.startswith("infrastructure:").all()
    counted = sr.trace[sr.trace["counted"]]
    assert len(counted) == sr.n and sr.mean == pytest.approx(counted["value"].mean())
    assert sr.trace["n"].iloc[-1] == sr.n


def test_too_many_consecutive_failures_stop_with_a_status() -> None:
    def broken(request, attempt):  # type: ignore[no-untyped-def]
        raise CallFailure("AuthenticationError: bad key", 401)

    sr = rater(broken, max_consecutive_failures=3).rate("q", "a")
    assert sr.status == "failed" and sr.n == 0 and np.isnan(sr.mean)
    assert sr.failures >= 3 and len(sr.trace) == sr.failures
    assert "bad key" in sr.error and "rating failed" in str(sr)


def test_max_samples_caps_the_run() -> None:
    wide = SequentialRater(
        ["openai/j"], K=30, max_samples=12, transport=ScriptedTransport(seeded_rating), retry=NO_RETRY
    )
    sr = wide.rate("q", "a")
    assert sr.status == "max_samples" and sr.n == 12 and sr.half_width > sr.target_half_width


def test_mixed_panel_and_meta_prompts_rotate_every_pair() -> None:
    prompts = ["Judge this answer to {prompt}: {response}", "Be a strict grader of factual accuracy."]
    transport = ScriptedTransport(seeded_rating)
    panel = SequentialRater(["openai/a", "openai/b"], meta_prompts=prompts, transport=transport, retry=NO_RETRY)
    sr = panel.rate("Capital of France?", "Paris")
    pairs = sr.trace.groupby(["judge", "variant"]).size()
    assert len(pairs) == 4 and pairs.max() - pairs.min() <= 1
    first_four = sr.trace.sort_values("draw").head(4)
    assert set(zip(first_four["judge"], first_four["variant"])) == {
        ("openai/a", "variant_1"),
        ("openai/b", "variant_1"),
        ("openai/a", "variant_2"),
        ("openai/b", "variant_2"),
    }
    texts = [user_text(r) for r in transport.requests]
    full = [t for t in texts if t.startswith("Judge this answer to")]
    assert (
        full
        and "<question>\nCapital of France?\n</question>" in full[0]
        and "<response>\nParis\n</response>" in full[0]
    )
    systems = [r.messages[0]["content"] for r in transport.requests]
    assert any("strict grader" in s for s in systems)
    assert {r.model for r in transport.requests} == {"openai/a", "openai/b"}


def test_judges_may_be_llm_judges_on_the_same_scale() -> None:
    template = jw.sequential.rating_template((1, 10))
    judge = jw.LLMJudge("openai/x", template=template, name="x", transport=ScriptedTransport(seeded_rating))
    sr = SequentialRater([judge]).rate("q", "a")
    assert set(sr.trace["judge"]) == {"x"}
    with pytest.raises(jw.ConfigurationError, match="scale="):
        SequentialRater([jw.LLMJudge("openai/x", template="likert")])


def test_rate_many_runs_items_concurrently() -> None:
    transport = ScriptedTransport(seeded_rating, delay=0.002)
    many = SequentialRater(["openai/j"], transport=transport, retry=NO_RETRY)
    frame = many.rate_many(["q1", "q2", "q3", "q4"], ["a1", "a2", "a3", "a4"], progress=False)
    assert isinstance(frame, SequentialFrame) and isinstance(frame, pd.DataFrame)
    assert frame["item"].tolist() == [0, 1, 2, 3] and frame["prompt"].tolist() == ["q1", "q2", "q3", "q4"]
    assert set(frame.columns) >= {"mean", "low", "high", "half_width", "n", "status"}
    assert (frame["status"] == "converged").all()
    assert transport.max_active > 5  # more than one item's batch in flight at once
    traces = frame.traces
    assert traces.groupby("item").size().tolist() == frame["n"].tolist()
    assert frame.trace(2).equals(frame.results[2].trace)


def test_rate_many_takes_a_dataframe_and_reports_live() -> None:
    data = pd.DataFrame({"question": ["q1", "q2"], "answer": ["a1", "a2"]})
    items_seen = set()
    frame = rater().rate_many(
        data, prompt_col="question", response_col="answer", progress=False, on_update=lambda s: items_seen.add(s.item)
    )
    assert items_seen == {0, 1} and len(frame) == 2
    with pytest.raises(jw.InputError, match="not in the DataFrame"):
        rater().rate_many(data, progress=False)
    with pytest.raises(jw.InputError, match="responses are missing"):
        rater().rate_many(["q"], progress=False)


def test_chart_of_a_result() -> None:
    sr = rater(judges=("openai/a", "openai/b")).rate("q", "a")
    spec = sr.chart().to_dict()
    top, bottom = spec["vconcat"]
    assert len(top["layer"]) == 4 and len(bottom["layer"]) == 2
    # hovering a judgment (or the half-width line) gives the estimate and interval as they stood after it
    for layer in (top["layer"][2], bottom["layer"][0]):
        assert {"n", "mean", "low", "high", "half_width"} <= {t["field"] for t in layer["encoding"]["tooltip"]}
    rows = pd.DataFrame(next(iter(spec["datasets"].values()))).dropna(subset=["low", "high"])
    assert len(rows) and ((rows["low"] <= rows["mean"]) & (rows["mean"] <= rows["high"])).all()
    frame = rater().rate_many(["q1", "q2"], ["a1", "a2"], progress=False)
    assert "facet" in frame.chart().to_dict()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"K": 0}, "K must be"),
        ({"K": -1}, "K must be"),
        ({"alpha": 0.0}, "alpha must"),
        ({"alpha": 1.0}, "alpha must"),
        ({"scale": (10, 1)}, "low < high"),
        ({"scale": (3, 3)}, "low < high"),
        ({"pilot": 1}, "pilot"),
        ({"max_samples": 4}, "max_samples"),
        ({"method": "magic"}, "unknown method"),
        ({"meta_prompts": []}, "meta_prompts is empty"),
        ({"judges": []}, "at least one judge"),
        ({"max_consecutive_failures": 0}, "max_consecutive_failures"),
    ],
)
def test_bad_configurations_raise(kwargs: dict, message: str) -> None:
    kwargs.setdefault("judges", ["openai/j"])
    with pytest.raises(jw.ConfigurationError, match=message):
        SequentialRater(**kwargs)


def test_bad_items_raise_input_error() -> None:
    with pytest.raises(jw.InputError):
        rater().rate(None, "a")  # type: ignore[arg-type]


def test_a_batch_of_ratings_summarises_its_calls_per_judge() -> None:
    frame = rater(judges=("openai/j", "openai/k")).rate_many(["q1", "q2"], ["a1", "a2"], progress=False)
    summary = frame.summary()
    assert summary.index.tolist() == ["openai/j", "openai/k"]
    assert int(summary["calls"].sum()) == frame.usage.attempts == len(frame.traces)
    assert {"prompt_cache_read_tokens", "list_cost_usd", "failed"} <= set(summary.columns)
    assert {"list_cost_usd", "prompt_cache_read_tokens", "batch_id"} <= set(frame.traces.columns)
