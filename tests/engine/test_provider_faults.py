"""Each kind of provider answer does what engine/_faults.py's table says, on both transports (litellm; the fast path)
and through Anthropic's Messages protocol, against the loopback server answering in the providers' own words:
overloads are waited out, a spent quota / refused key / unknown model ends the endpoint at once, a request larger
than the limit is its row's own failure, a hung first request holds no one back, and no answer is retried in a
tight loop."""

from __future__ import annotations

import math
import threading
import time
import warnings
from collections.abc import Iterator

import pytest

import judgewidgets as jw
from judgewidgets.engine import AutoTransport, OpenAIHTTPTransport
from judgewidgets.engine._faults import Action, CallFailure, classify_failure
from judgewidgets.testing import FaultPlan, OpenAITestServer, json_score

QUICK = jw.RetryPolicy(initial_delay=0.02, max_delay=0.1, own_refusal_patience=0.5)


@pytest.fixture(autouse=True)
def fresh_pacers() -> Iterator[None]:
    """Each test's endpoints start unknown (the loopback port may repeat across tests)."""
    jw.rate_limits.reset()
    yield
    jw.rate_limits.reset()


@pytest.fixture(params=["litellm", "fast"])
def transport(request: pytest.FixtureRequest) -> object:
    return "litellm" if request.param == "litellm" else AutoTransport(fast=OpenAIHTTPTransport())


def judge(server: OpenAITestServer, transport: object, model: str = "openai/test", **kwargs: object) -> jw.LLMJudge:
    options: dict[str, object] = {
        "probability_weighted": False,
        "api_base": server.base_url,
        "api_key": "sk-test",
        "retry": QUICK,
        "transport": transport,
        "cache": None,
    }
    options.update(kwargs)
    return jw.LLMJudge(model, template="likert", **options)  # type: ignore[arg-type]


def score(the_judge: jw.LLMJudge | jw.LLMPanel, n: int, responses: list[str] | None = None) -> jw.JudgeResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the runs' "N of M calls failed" warning: asserted elsewhere
        return the_judge.score([f"question {i}" for i in range(n)], responses or ["an answer"] * n, progress=False)


# --- the table ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "message", "kind", "action"),
    [
        (429, "rate_limit_exceeded", "Rate limit reached for requests", "rate_limited", Action.WAIT),
        (529, "overloaded_error", "Overloaded", "overloaded", Action.WAIT),
        (503, None, "The server is overloaded or not ready yet.", "overloaded", Action.WAIT),
        (502, None, "<html>502 Bad Gateway</html>", "overloaded", Action.WAIT),
        (500, "server_is_overloaded", "The server is overloaded", "overloaded", Action.WAIT),
        (429, "insufficient_quota", "You exceeded your current quota", "quota_spent", Action.END_ENDPOINT),
        (400, "invalid_request_error", "Your credit balance is too low", "quota_spent", Action.END_ENDPOINT),
        (401, "invalid_api_key", "Incorrect API key provided", "key_refused", Action.END_ENDPOINT),
        (403, "permission_error", "Your key cannot use this model", "key_refused", Action.END_ENDPOINT),
        (404, "model_not_found", "The model `gpt4o-mini` does not exist", "unknown_model", Action.END_ENDPOINT),
        (404, "not_found_error", "model: claude-3-5-haiku-2024", "unknown_model", Action.END_ENDPOINT),
        (404, None, "Not Found", "rejected", Action.END_ROW),
        (429, "rate_limit_exceeded", "Request too large for gpt-4o on tokens per min", "too_large", Action.END_ROW),
        (413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", "too_large", Action.END_ROW),
        (400, None, "This model's maximum context length is 8192 tokens", "refused", Action.END_ROW),
        (500, "server_error", "Internal error", "transient", Action.RETRY),
        (408, None, "Timeout: timed out after 10 s (no answer)", "transient", Action.RETRY),
        (None, None, "APIConnectionError: connection reset", "transient", Action.RETRY),
    ],
)
def test_every_answer_has_one_fault(
    status: int | None, code: str | None, message: str, kind: str, action: Action
) -> None:
    fault = classify_failure(CallFailure(message, status, code=code))
    assert (fault.kind, fault.action) == (kind, action)


# --- overloads are waited out ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["overloaded_529", "overloaded", "bad_gateway"])
def test_an_overload_that_passes_loses_no_row(transport: object, fault: str) -> None:
    plan = FaultPlan(**{fault: 1.0}, faults_for_s=0.6)  # type: ignore[arg-type]
    with OpenAITestServer(json_score(4), faults=plan) as server:
        result = score(judge(server, transport, retry=jw.RetryPolicy(max_retries=0, initial_delay=0.05)), 20)
        total = server.stats.total
        overloads = total - server.stats.by_status.get(200, 0)
    assert result.votes["error"].isna().all(), result.votes["error"].dropna().tolist()[:2]
    assert overloads >= 1 and total <= 20 + 3 * overloads  # waited out, not hammered
    assert jw.rate_limits.table["overloaded"].sum() >= 1


# --- what no wait mends ends the endpoint at once ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("quota_spent", "quota spent (not a rate limit"),
        ("unauthorized", "key refused"),
        ("model_not_found", "unknown model"),
    ],
)
def test_a_spent_quota_a_refused_key_or_an_unknown_model_ends_the_endpoint_at_once(
    transport: object, fault: str, words: str
) -> None:
    with OpenAITestServer(json_score(4), faults=FaultPlan(**{fault: 1.0})) as server:  # type: ignore[arg-type]
        started = time.monotonic()
        result = score(judge(server, transport, max_concurrency=8), 500)
        took = time.monotonic() - started
        sent = server.stats.total
    errors = result.votes["error"]
    assert errors.notna().all() and errors.str.startswith(f"infrastructure: {words}").all()
    assert sent <= 8, f"{sent} requests sent after the first said no wait mends it"
    assert all(v.attempts <= 1 for v in result.vote_list)
    assert took < 30  # the run ends at once (no retries, no waits): a loose bound, no speed is measured here
    assert errors.str.contains("it is sent nothing more").sum() >= 500 - sent


def test_other_endpoints_of_a_panel_go_on_when_one_is_ended(transport: object) -> None:
    with OpenAITestServer(json_score(4)) as server, OpenAITestServer(faults=FaultPlan(quota_spent=1.0)) as broke:
        panel = jw.LLMPanel([judge(broke, transport, name="spent"), judge(server, transport, name="fine")])
        result = score(panel, 30)
    votes = result.votes
    assert votes.loc[votes["judge"] == "fine", "error"].isna().all()
    assert votes.loc[votes["judge"] == "spent", "error"].str.contains("quota spent").all()


def test_a_new_run_tries_an_ended_endpoint_again(transport: object) -> None:
    with OpenAITestServer(json_score(4), faults=FaultPlan(quota_spent=1.0, faults_for_s=0.2)) as server:
        the_judge = judge(server, transport)
        first = score(the_judge, 5)
        time.sleep(0.3)  # the quota was topped up
        second = score(the_judge, 5)
    assert first.votes["error"].notna().all()
    assert second.votes["error"].isna().all()


# --- a request no wait lets through is its row's own failure ----------------------------------------------------


def test_request_too_large_is_the_rows_failure_at_once(transport: object) -> None:
    with OpenAITestServer(json_score(4)) as server:
        responses = ["fine"] * 10 + ["huge [[fault:request_too_large]]"] + ["fine"] * 9
        result = score(judge(server, transport), 20, responses)
    votes = result.vote_list
    assert all(v.error is None for i, v in enumerate(votes) if i != 10)
    assert votes[10].attempts == 1 and votes[10].error is not None
    assert votes[10].error.startswith("input: request too large") and "to fix:" in votes[10].error


@pytest.mark.parametrize("retry_after", ["0", "-1", "soon", ""])
def test_a_429_for_one_request_alone_is_its_own_failure_and_never_a_tight_loop(
    transport: object, retry_after: str
) -> None:
    """One row answered 429 on every try while the other 19 are answered, whatever its retry-after says."""
    plan = FaultPlan(retry_after_header=retry_after)
    with OpenAITestServer(json_score(4), faults=plan) as server:
        responses = ["fine"] * 10 + ["stuck [[fault:429]]"] + ["fine"] * 9
        policy = jw.RetryPolicy(initial_delay=0.05, max_delay=0.2, own_refusal_patience=0.5)
        started = time.monotonic()
        result = score(judge(server, transport, retry=policy), 20, responses)
        took = time.monotonic() - started
        sent = server.stats.total
    votes = result.vote_list
    assert all(v.error is None for i, v in enumerate(votes) if i != 10)
    stuck = votes[10].error or ""
    assert "this request's own failure" in stuck, stuck
    assert 5 <= votes[10].attempts <= 20, votes[10].attempts  # a few tries, each after a backoff
    assert sent <= 20 + 20
    assert took < 120  # not the 600 s of rate_limit_patience (a 429 without retry-after pauses 1, 2, 4 ... s)


def test_one_rows_429s_are_its_own_failure_for_every_judge_of_a_panel_on_one_model(transport: object) -> None:
    """Three judges on one endpoint: the same row is refused for each (three requests refused forever), the other
    rows of all three are answered; each judge's vote of that row fails as its own, none waits the 600 s."""
    with OpenAITestServer(json_score(4), faults=FaultPlan(retry_after_header="0")) as server:
        responses = ["fine"] * 5 + ["stuck [[fault:429]]"] + ["fine"] * 4
        policy = jw.RetryPolicy(initial_delay=0.05, max_delay=0.2, own_refusal_patience=0.5)
        panel = jw.LLMPanel([judge(server, transport, name=f"j{k}", retry=policy) for k in range(3)])
        result = score(panel, 10, responses)
    votes = result.votes
    stuck = votes[votes["item"] == 5]
    assert votes.loc[votes["item"] != 5, "error"].isna().all()
    assert stuck["error"].str.contains("this request's own failure").all(), stuck["error"].tolist()


def test_a_rate_limit_shared_by_every_call_is_not_blamed_on_one() -> None:
    """Under an ordinary limit every call is refused now and then: none is failed as its own."""
    from judgewidgets.testing import ProviderLimit

    limit = ProviderLimit(rpm=600, headers="none", retry_after=0.1)
    with OpenAITestServer(json_score(4), limit=limit) as server:
        policy = jw.RetryPolicy(initial_delay=0.02, max_delay=0.2, own_refusal_patience=0.5)
        result = score(judge(server, "fast", retry=policy), 40)
        refused = server.stats.by_status.get(429, 0)
    assert refused > 0
    assert result.votes["error"].isna().all(), result.votes["error"].dropna().tolist()[:1]


# --- no head-of-line blocking ---------------------------------------------------------------------------------------


def score_watching(server: OpenAITestServer, the_judge: jw.LLMJudge, n: int) -> tuple[jw.JudgeResult, int]:
    """The result of scoring `n` items, and how many were answered within 5 s of the first request (litellm's import
    comes before it)."""
    answered: list[int] = []

    def watch() -> None:
        while server.stats.total < 1:
            time.sleep(0.05)
        time.sleep(5.0)
        answered.append(server.stats.by_status.get(200, 0))

    watcher = threading.Thread(target=watch)
    watcher.start()
    result = score(the_judge, n)
    watcher.join()
    return result, answered[0]


def test_a_hung_first_request_holds_no_other_call_back(transport: object) -> None:
    plan = FaultPlan(hang_first=1, hang_seconds=30)
    with OpenAITestServer(json_score(4), faults=plan) as server:
        the_judge = judge(server, transport, timeout=8, retry=jw.RetryPolicy(initial_delay=0.05))
        result, answered_early = score_watching(server, the_judge, 20)
    assert result.votes["error"].isna().all()  # the hung one was answered on its second attempt
    assert answered_early == 19, f"{answered_early} of the other 19 answered while the first one hung"


def test_a_hung_first_request_with_a_long_fixed_part_holds_the_rest_only_briefly() -> None:
    """The prompt cache's warm-up sends a long fixed part's first request alone; when that one hangs, the others
    still go within seconds (issue 42's no head-of-line blocking over issue 45's warm-up)."""
    from judgewidgets.templates import get_template

    rules = "\n".join(f"Rule {i}: weigh the response's claim number {i} against the question." for i in range(300))
    likert = get_template("likert")
    long = likert.model_copy(update={"instruction": likert.instruction + "\n" + rules})
    with OpenAITestServer(json_score(4), faults=FaultPlan(hang_first=1, hang_seconds=30)) as server:
        the_judge = jw.LLMJudge(
            "openai/gpt-4o-mini", template=long, api_base=server.base_url, api_key="sk-test", cache=None, timeout=8
        )
        result, answered_early = score_watching(server, the_judge, 20)
    assert result.votes["error"].isna().all()
    assert answered_early == 19, f"{answered_early} of the other 19 answered while the first one hung"


# --- Anthropic's Messages protocol --------------------------------------------------------------------------------


def anthropic_judge(server: OpenAITestServer, **kwargs: object) -> jw.LLMJudge:
    return judge(server, "litellm", model="anthropic/claude-test", api_base=server.url, **kwargs)


def test_anthropic_529_is_waited_out() -> None:
    plan = FaultPlan(overloaded=1.0, faults_for_s=0.6)  # the Messages route answers it as 529 overloaded_error
    with OpenAITestServer(json_score(4), faults=plan) as server:
        result = score(anthropic_judge(server, retry=jw.RetryPolicy(max_retries=0, initial_delay=0.05)), 10)
        statuses = dict(server.stats.by_status)
    assert statuses.get(529, 0) >= 1
    assert result.votes["error"].isna().all(), result.votes["error"].dropna().tolist()[:1]


@pytest.mark.parametrize(
    ("fault", "words"),
    [("quota_spent", "quota spent"), ("unauthorized", "key refused"), ("model_not_found", "unknown model")],
)
def test_anthropic_answers_no_wait_mends_end_the_endpoint(fault: str, words: str) -> None:
    with OpenAITestServer(json_score(4), faults=FaultPlan(**{fault: 1.0})) as server:  # type: ignore[arg-type]
        result = score(anthropic_judge(server, max_concurrency=4), 40)
        sent = server.stats.total
    errors = result.votes["error"]
    assert errors.str.startswith(f"infrastructure: {words}").all(), errors.iloc[0]
    assert sent <= 4


def test_scores_survive_the_classifier(transport: object) -> None:
    with OpenAITestServer(json_score(4)) as server:
        result = score(judge(server, transport), 3)
    assert not any(math.isnan(s) for s in result.score_list)


def test_the_benchmark_runs_and_meets_its_targets_on_two_faults() -> None:
    from tests.benchmark_scripts import load_benchmark

    benchmark = load_benchmark("provider_faults")
    assert benchmark.main(["--quick", "--only", "quota", "too-large", "--transports", "auto"]) is True
