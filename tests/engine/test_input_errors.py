"""Failures the request itself causes (longer than the context, refused by a content policy, invalid) are told apart
from outages: kind `input`, not retried, and the message says what to change; on both transports, in the review
flags and in the `%%judge` output."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import judgewidgets as jw
from judgewidgets.engine._faults import FIX_CONTEXT, FIX_INVALID, FIX_POLICY, CallFailure, input_fix
from judgewidgets.testing import OpenAITestServer, json_score

FAST = jw.RetryPolicy(initial_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(4)) as running:
        yield running


def _judge(server: OpenAITestServer, transport: str) -> jw.LLMJudge:
    return jw.LLMJudge(
        "openai/test",
        api_base=server.base_url,
        api_key="sk-test",
        retry=FAST,
        transport=transport,
        cache=False,
        probability_weighted=False,
    )


@pytest.mark.parametrize("transport", ["litellm", "fast"])
def test_input_failures_are_not_retried_and_say_what_to_change(server: OpenAITestServer, transport: str) -> None:
    server.reset_stats()
    responses = [
        "fine",
        "long text [[fault:context_exceeded]]",
        "rude text [[fault:content_policy]]",
        "odd text [[fault:422]]",
        "outage [[fault:500]]",
    ]
    result = _judge(server, transport).score(["q"] * 5, responses, progress=False)
    errors = [v.error for v in result.vote_list]
    assert errors[0] is None and result.vote_list[0].score == 0.75
    assert errors[1].startswith("input: ") and "exceeds the available context size" in errors[1]  # type: ignore[union-attr]
    assert FIX_CONTEXT in errors[1] and "n_ctx" in errors[1]  # type: ignore[operator]
    assert errors[2].startswith("input: ") and FIX_POLICY in errors[2]  # type: ignore[union-attr]
    assert errors[3].startswith("input: ") and FIX_INVALID in errors[3]  # type: ignore[union-attr]
    assert errors[4].startswith("infrastructure: ")  # type: ignore[union-attr]
    assert [v.attempts for v in result.vote_list] == [1, 1, 1, 1, 3]  # the outage was retried, the inputs were not
    by_status = server.stats.by_status
    assert by_status.get(400) == 2 and by_status.get(422) == 1 and by_status.get(500) == 3

    review = jw.LLMPanel([_judge(server, transport)]).score(["q"] * 5, responses, progress=False).review()
    reasons = [" ".join(r) for r in review["review_reasons"]]
    assert reasons[0] == ""
    assert all("input: refused as given: change the text or the model" in r for r in reasons[1:4])
    assert "infrastructure: an outage: re-run later" in reasons[4] and "input" not in reasons[4]


def test_classification_of_provider_messages() -> None:
    assert input_fix(400, "BadRequestError: This model's maximum context length is 8192 tokens") == FIX_CONTEXT
    assert input_fix(400, "litellm.ContextWindowExceededError: prompt is too long: 210000 tokens") == FIX_CONTEXT
    assert input_fix(None, "ContextWindowExceededError: input is too long") == FIX_CONTEXT
    assert input_fix(400, "The response was filtered due to the prompt triggering content management policy") == (
        FIX_POLICY
    )
    assert input_fix(413, "Request Entity Too Large") == FIX_INVALID
    assert input_fix(500, "maximum context length of the worker pool") is None  # a server error stays an outage
    assert input_fix(429, "rate limited") is None and input_fix(401, "bad key") is None
    assert CallFailure("APIConnectionError: reset", None).fix is None


def test_the_embedded_judges_own_configuration_errors_stay_infrastructure() -> None:
    from judgewidgets._errors import LocalModelError
    from judgewidgets.engine._litellm import classify

    class BadRequest(Exception):
        status_code = 400

    try:
        try:
            raise LocalModelError("the weights are missing: pip install 'judgewidgets[local]'")
        except LocalModelError as cause:
            raise BadRequest("the local model cannot run") from cause
    except BadRequest as exc:
        assert classify(exc).fix is None
    assert classify(BadRequest("request (900 tokens) exceeds the available context size (512 tokens)")).fix == (
        FIX_CONTEXT
    )


def test_judge_magic_shows_failures_by_kind(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "judgewidgets")
    cell = (
        "prompt: What is 2+2?\nresponse: 4\n\n"
        "prompt: Summarise this.\nresponse: long [[fault:context_exceeded]]\n\n"
        "prompt: Capital?\nresponse: Paris [[fault:500]]\n"
    )
    with capture_output() as shown:
        shell.run_cell_magic(
            "judge", f"--judges openai/a --template likert --api-base {server.base_url} --no-chart --out r", cell
        )
    failures = shown.outputs[-1].data["text/html"]  # the table after the scores: one row per failed judgment
    assert "<td>input</td>" in failures and "change the text or the model" in failures
    assert "<td>infrastructure</td>" in failures and "an outage: re-run later" in failures
    kinds = shell.user_ns["r"].errors.set_index("item")["kind"].to_dict()
    assert kinds == {1: "input", 2: "infrastructure"}
