"""Reference grounding: given a reference, a built-in template's judge reads it before the response and answers
`matches_reference` (does the response's answer match it?) before its verdict; without a reference (or with
`reference_grounding=False`) nothing changes."""

from __future__ import annotations

import json
import math
import re

import pytest

import judgewidgets as jw
from judgewidgets.engine import Completion
from judgewidgets.templates import BUILTIN_TEMPLATES, CONVERSATION_TEMPLATES, get_template, parse
from judgewidgets.templates._template import REFERENCE_TEXT
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text

QUESTION, RESPONSE, REFERENCE = "At what temperature does water boil at sea level?", "At 50 °C.", "100 °C"
# An answer without numbers: what the judge is asked when no number compared in code settles the match (`_numbers`).
NAMED = ("Who wrote Hamlet?", "Christopher Marlowe.", "William Shakespeare")
NUMBER_NOTE = (
    "Checked exactly: the reference's answer is the number 100; the response states 50 instead, so it does not give "
    "the reference's answer."
)
# The built-ins that judge an answer, and task_completion among the conversation templates (the others take no
# reference question: a reference is shown after the material as ground truth).
GROUNDED = sorted(n for n in BUILTIN_TEMPLATES if n not in CONVERSATION_TEMPLATES or n == "task_completion")


def ungrounded(name: str) -> jw.Template:
    return get_template(name).model_copy(update={"reference_grounding": False})


def tokens(*pieces: str | dict[str, float]) -> list[dict]:
    """Logprob entries: a string is a certain token; a dict {token: p} lists the alternatives, the first chosen."""
    out = []
    for piece in pieces:
        options = {piece: 1.0} if isinstance(piece, str) else piece
        alternatives = [{"token": t, "logprob": math.log(p)} for t, p in options.items()]
        out.append({**alternatives[0], "top_logprobs": alternatives})
    return out


# --- the template: who is grounded, the prompt, the schema, the prefill ---------------------------------------------


def test_every_builtin_is_grounded_and_a_custom_template_opts_in() -> None:
    assert all(get_template(name).reference_grounding for name in GROUNDED)
    assert [n for n in CONVERSATION_TEMPLATES if get_template(n).reference_grounding] == ["task_completion"]
    custom = jw.Template(name="safety", instruction="Is it safe?", choices={"safe": 1.0, "unsafe": 0.0})
    assert not custom.reference_grounding and not custom.grounds(REFERENCE)
    grounded = jw.Template(
        name="fact", instruction="Is it right?", choices={"right": 1.0, "wrong": 0.0}, **{"reference_grounding": True}
    )
    assert grounded.grounds(REFERENCE) and not grounded.grounds(None) and not grounded.grounds("")


@pytest.mark.parametrize("name", GROUNDED)
def test_the_reference_comes_before_the_response_and_the_answer_starts_with_the_match(name: str) -> None:
    system, user, prefill = get_template(name).messages(*NAMED, prefill=True)
    assert re.fullmatch(
        r"<question>\n.*\n</question>\n<reference>\nWilliam Shakespeare\n</reference>\n"
        r"<response>\nChristopher Marlowe.\n</response>",
        user["content"],
    )
    assert REFERENCE_TEXT in system["content"] and '"matches_reference"' in system["content"]
    assert prefill == {"role": "assistant", "content": '{"matches_reference": "'}


@pytest.mark.parametrize("explanations", [False, True])
def test_the_grounded_schema_asks_for_matches_reference_before_the_verdict(explanations: bool) -> None:
    schema = get_template("true_false_uncertain").json_schema(explanations, grounded=True)
    order = ["explanation", "matches_reference", "verdict"] if explanations else ["matches_reference", "verdict"]
    assert list(schema["properties"]) == order and schema["required"] == order
    assert schema["properties"]["matches_reference"]["enum"] == ["yes", "no"]
    assert "matches_reference" not in get_template("true_false_uncertain").json_schema(explanations)
    system = get_template("true_false_uncertain").messages(QUESTION, RESPONSE, REFERENCE, explanations)[0]
    assert get_template("true_false_uncertain").schema_text(explanations, grounded=True) in system["content"]


@pytest.mark.parametrize("name", sorted(BUILTIN_TEMPLATES))
def test_without_a_reference_nothing_changes(name: str) -> None:
    for prefill in (False, True):
        shipped = get_template(name).messages(QUESTION, RESPONSE, None, prefill=prefill)
        assert shipped == ungrounded(name).messages(QUESTION, RESPONSE, None, prefill=prefill)
        assert "matches_reference" not in json.dumps(shipped)


def test_reference_grounding_off_keeps_the_prompt_as_it_was() -> None:
    """The reference after the response, no question about it, the verdict prefilled (the benchmark's `before`)."""
    system, user, prefill = ungrounded("likert").messages(QUESTION, RESPONSE, REFERENCE, prefill=True)
    assert user["content"].endswith("<response>\nAt 50 °C.\n</response>\n<reference>\n100 °C\n</reference>")
    assert REFERENCE_TEXT in system["content"] and "matches_reference" not in system["content"]
    assert prefill["content"] == '{"score": '


def test_a_template_question_is_still_asked_last() -> None:
    template = get_template("likert").model_copy(update={"question": "Rate it."})
    user = template.messages(QUESTION, RESPONSE, REFERENCE)[1]["content"]
    assert user.endswith("</reference>\n<response>\nAt 50 °C.\n</response>\n" + NUMBER_NOTE + "\nRate it.")


# --- reading answers ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("true_false_uncertain", '{"matches_reference": "no", "verdict": "incorrect"}', 0.0),
        ("true_false_uncertain", '{"matches_reference": "yes", "verdict": "not sure"}', 0.5),
        ("likert", '{"matches_reference": "yes", "score": 4}', 0.75),
        ("follows_instruction", '{"matches_reference": "yes", "verdict": "no"}', 0.0),  # "yes" is not the verdict
        ("follows_instruction", '{"matches_reference": "no", "verdict": "yes"}', 1.0),
        ("follows_instruction", '"matches_reference": "yes", and my verdict: no', 0.0),  # not clean JSON
        ("true_false", '{"verdict": "correct"}', 1.0),  # old-style answers read as before
        ("likert", "Score: 2/5", 0.25),
    ],
)
def test_the_verdict_is_read_beside_matches_reference(name: str, text: str, expected: float) -> None:
    assert parse(name, text) == pytest.approx(expected)


def test_a_matches_reference_without_a_verdict_is_no_verdict() -> None:
    assert math.isnan(parse("follows_instruction", '{"matches_reference": "yes"}'))
    assert math.isnan(parse("true_false", '{"matches_reference": "yes", "verdict": "corr'))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"matches_reference": "yes", "verdict": "correct"}', True),
        ('{"explanation": "150 is not 100", "matches_reference": "No", "score": 1}', False),
        ('{"matches_reference": "yes", "verdict": "corr', True),  # cut off after it
        ('{"verdict": "correct"}', None),
        ('{"matches_reference": "maybe", "verdict": "correct"}', None),
    ],
)
def test_the_match_is_read(text: str, expected: bool | None) -> None:
    assert jw.Template.read_match(text) is expected


# --- the judge: requests and scores ---------------------------------------------------------------------------------


def test_a_prefilled_grounded_answer_is_scored_by_the_verdict_after_matches_reference() -> None:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        assert request.messages[-1] == {"role": "assistant", "content": '{"matches_reference": "'}
        logprobs = tokens(
            {"no": 0.7, "yes": 0.3}, '",', ' "', "verdict", '":', ' "', {"in": 0.9, "correct": 0.1}, 'correct"}'
        )
        return Completion(content='no", "verdict": "incorrect"}', logprobs=logprobs)

    transport = ScriptedTransport(reply)
    judge = jw.LLMJudge("openai/m", template="true_false", transport=transport, prefill=True, probability_weighted=True)
    question, response, reference = NAMED
    vote = judge.score([question], [response], [reference], progress=False).vote_list[0]
    assert vote.raw == '{"matches_reference": "no", "verdict": "incorrect"}'
    # the verdict's probabilities, read after the judge's "no" (the matches_reference token's are not the verdict's)
    assert vote.score == pytest.approx(0.1) and vote.score_source == "probabilities"
    assert vote.probabilities == pytest.approx({"incorrect": 0.9, "correct": 0.1})
    assert vote.confidence == pytest.approx(0.9)
    assert transport.requests[0].params["max_tokens"] == 16  # room for the agreement and the verdict after it


def test_items_without_a_reference_are_judged_as_before_in_the_same_batch() -> None:
    def reply(request, attempt):  # type: ignore[no-untyped-def]
        grounded = request.messages[-1]["content"] == '{"matches_reference": "'
        return Completion(content='yes", "score": 5}' if grounded else "5}", logprobs=None)

    transport = ScriptedTransport(reply)
    judge = jw.LLMJudge("openai/m", transport=transport, prefill=True, probability_weighted=False)
    result = judge.score([QUESTION, QUESTION], ["100 °C.", "100 °C."], [REFERENCE, None], progress=False)
    assert result.score_list == [1.0, 1.0]
    grounded, plain = transport.requests
    assert grounded.params["max_tokens"] == 16 and plain.params["max_tokens"] == 8
    assert plain.messages[-1]["content"] == '{"score": ' and "<reference>" not in user_text(plain)


def test_a_structured_output_request_carries_the_grounded_schema() -> None:
    answers = {True: '{"matches_reference": "no", "verdict": "incorrect"}', False: '{"verdict": "correct"}'}
    transport = ScriptedTransport(
        lambda r, a: answers["matches_reference" in json.dumps(r.params["response_format"]["json_schema"]["schema"])]
    )
    judge = jw.LLMJudge("openai/m", template="true_false", transport=transport, structured_output=True)
    result = judge.score([QUESTION, QUESTION], [RESPONSE, RESPONSE], [REFERENCE, None], progress=False)
    assert result.score_list == [0.0, 1.0]
    schemas = [r.params["response_format"]["json_schema"]["schema"] for r in transport.requests]
    assert list(schemas[0]["properties"]) == ["matches_reference", "verdict"] and list(schemas[1]["properties"]) == [
        "verdict"
    ]


def test_an_explained_grounded_answer_keeps_its_explanation() -> None:
    answer = '{"explanation": "50 °C is not 100 °C.", "matches_reference": "no", "score": 1}'
    transport = ScriptedTransport(lambda r, a: answer)
    judge = jw.LLMJudge("openai/m", explanations=True, structured_output=True, transport=transport)
    vote = judge.score([QUESTION], [RESPONSE], [REFERENCE], progress=False).vote_list[0]
    assert vote.score == 0.0 and vote.explanation == "50 °C is not 100 °C."
    schema = transport.requests[0].params["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["explanation", "matches_reference", "score"]


def test_a_judge_that_leaves_out_matches_reference_is_still_read() -> None:
    transport = ScriptedTransport(lambda r, a: '{"verdict": "incorrect"}')
    vote = (
        jw.LLMJudge("openai/m", template="true_false", transport=transport)
        .score([QUESTION], [RESPONSE], [REFERENCE], progress=False)
        .vote_list[0]
    )
    assert vote.score == 0.0 and vote.error is None and vote.attempts == 1


def test_your_max_tokens_is_kept() -> None:
    transport = ScriptedTransport(lambda r, a: Completion(content='yes", "score": 5}'))
    judge = jw.LLMJudge("openai/m", transport=transport, prefill=True, max_tokens=40)
    judge.score([QUESTION], [RESPONSE], [REFERENCE], progress=False)
    assert transport.requests[0].params["max_tokens"] == 40


def test_grounding_off_sends_the_old_request() -> None:
    transport = ScriptedTransport(lambda r, a: Completion(content="2}"))
    judge = jw.LLMJudge("openai/m", template=ungrounded("likert"), transport=transport, prefill=True)
    assert judge.score([QUESTION], [RESPONSE], [REFERENCE], progress=False).score_list == [0.25]
    request = transport.requests[0]
    assert request.messages[-1]["content"] == '{"score": ' and request.params["max_tokens"] == 8
    assert user_text(request).endswith("</response>\n<reference>\n100 °C\n</reference>")
