"""The numbers of a short reference answer compared with a response's in code (`templates._numbers`), and what a
reference-grounded judgment does with the comparison: tells the judge, and in a prefill writes its
`matches_reference`."""

from __future__ import annotations

import json

import pytest

import judgewidgets as jw
from judgewidgets.engine import Completion
from judgewidgets.templates import get_template
from judgewidgets.templates._numbers import check_numbers, numbers
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("There are 3,600 seconds in an hour.", [3600.0]),
        ("3/4 is 0.75", [3.0, 4.0, 0.75]),
        ("It is −273.15 °C.", [273.15]),  # signs are dropped on both sides
        ("fifty-six", [56.0]),
        ("A leap year has three hundred sixty-six days.", [366.0]),
        ("one thousand and twenty-four", [1024.0]),
        ("a hundred and five", [105.0]),
        ("The war ended in nineteen forty-five.", [1945.0]),
        ("seven five", [7.0, 5.0]),
        ("two and three", [2.0, 3.0]),
        ("They take in CO2 and H2O.", []),  # digits inside a word are no number
    ],
)
def test_numbers_are_read_in_digits_and_words(text: str, expected: list[float]) -> None:
    assert numbers(text) == expected


@pytest.mark.parametrize(
    ("question", "reference", "response"),
    [
        ("How many seconds are in one hour?", "3600", "There are 360 seconds in an hour."),
        ("What is 15% of 200?", "30", "15% of 200 is 20."),  # 15 and 200 are the question's, not an answer
        ("What is 1000 − 387?", "613", "1000 − 387 = 623."),
        ("What is 3/4 written as a decimal?", "0.75", "3/4 written as a decimal is 0.7."),
        ("In which year did the Berlin Wall fall?", "1989", "The Berlin Wall fell in 1991."),
        ("What is the freezing point of water in degrees Fahrenheit?", "32 °F", "At 0 degrees."),
    ],
)
def test_another_number_is_a_different_answer(question: str, reference: str, response: str) -> None:
    checked = check_numbers(question, reference, response)
    assert checked is not None and checked.differs and not checked.matches
    note = checked.note()
    assert note is not None and "does not give the reference's answer" in note


@pytest.mark.parametrize(
    ("question", "reference", "response", "matches"),
    [
        ("In which year did the Berlin Wall fall?", "1989", "It came down in November of 1989.", True),
        ("How many days are in a leap year?", "366", "A leap year has three hundred sixty-six days.", True),
        ("What is 15% of 200?", "30", "Thirty.", True),
        ("Roughly how many km in a mile?", "About 1.6 km", "One mile is about 1.61 kilometres.", False),
        ("What is absolute zero in °C?", "−273.15 °C", "Minus 273.15 degrees, or 0 K.", False),
        # a unit in the reference: the same number in another unit must not pass, so nothing is settled ...
        ("At what temperature does water boil, in °C?", "100 °C", "At 100 degrees Fahrenheit.", False),
        # ... unless the response names the same unit
        ("How many grams are in a pound, roughly?", "453.5 grams", "About 454 grams.", True),
        ("How many feet are in a mile?", "5,280 feet", "A mile is 5,280 feet.", True),
    ],
)
def test_the_same_number_settles_the_match_only_for_a_bare_number_or_a_named_unit(
    question: str, reference: str, response: str, matches: bool
) -> None:
    checked = check_numbers(question, reference, response)
    assert checked is not None and not checked.differs and checked.matches is matches
    assert (checked.note() is not None) is matches


@pytest.mark.parametrize(
    ("question", "reference", "response"),
    [
        ("Who wrote '1984'?", "George Orwell", "Eric Blair, under his pen name Orwell."),  # no number in the reference
        ("How many chambers has the heart?", "4", "Atria and ventricles."),  # no number stated
        ("When was it signed?", "4 July 1776", "In 1777."),  # two numbers: which one is the answer?
        ("How long?", "It takes about 8 minutes for sunlight to reach the Earth from the Sun.", "5 minutes."),
        ("What is 3/4 as a decimal?", "0.75", "Zero point seven five."),  # decimals in words are not read
        ("What fraction?", "0.33", "About a third."),
        ("Is 7 prime?", "Yes, 7 is prime.", "7 is not prime."),  # the reference's number is the question's
    ],
)
def test_the_check_stays_out_when_it_cannot_be_sure(question: str, reference: str, response: str) -> None:
    assert check_numbers(question, reference, response) is None


def test_a_grounded_prompt_tells_the_judge_and_the_prefill_writes_the_match() -> None:
    template = get_template("true_false_uncertain")
    question = "How many seconds are in one hour?"
    _, user, prefill = template.messages(question, "There are 360 seconds in an hour.", "3600", prefill=True)
    assert user["content"].endswith(
        "Checked exactly: the reference's answer is the number 3600; the response states 360 instead, so it does not "
        "give the reference's answer."
    )
    assert prefill["content"] == '{"matches_reference": "no", "verdict": "'
    _, _, agreed = get_template("likert").messages(question, "Three thousand six hundred.", "3600", prefill=True)
    assert agreed["content"] == '{"matches_reference": "yes", "score": '
    # nothing to compare: the judge decides the match itself
    _, user, open_prefill = template.messages("Who wrote Hamlet?", "Marlowe.", "Shakespeare", prefill=True)
    assert "Checked exactly" not in user["content"] and open_prefill["content"] == '{"matches_reference": "'
    # without reference grounding nothing is compared
    plain = template.model_copy(update={"reference_grounding": False})
    assert "Checked exactly" not in json.dumps(plain.messages(question, "360.", "3600", prefill=True))


def test_a_judge_reads_the_verdict_after_the_settled_match_and_commit_first_uses_it() -> None:
    """The embedded judge's path (prefilled): the verdict is the next token; a judge that commits first compares
    the response with its own answer the same way."""
    prefills: list[str] = []

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        last = request.messages[-1]
        if last["role"] != "assistant":  # the commit-first question
            return Completion(content="3600", logprobs=None)
        prefills.append(last["content"])
        return Completion(content='incorrect"}', logprobs=None)

    transport = ScriptedTransport(reply)
    judge = jw.LLMJudge(
        "openai/m", template="true_false", transport=transport, prefill=True, probability_weighted=False,
        commit_first=True,
    )  # fmt: skip
    vote = judge.score(["How many seconds are in one hour?"], ["360."], progress=False).vote_list[0]
    assert prefills == ['{"matches_reference": "no", "verdict": "']
    assert vote.score == 0.0 and vote.raw == '{"matches_reference": "no", "verdict": "incorrect"}'
    assert vote.reference_source == "judge" and vote.made_reference == "3600"
    assert jw.Template.read_match(vote.raw) is False


def test_a_structured_output_judge_is_told_and_keeps_its_schema() -> None:
    transport = ScriptedTransport(lambda r, a: '{"matches_reference": "no", "verdict": "incorrect"}')
    judge = jw.LLMJudge("openai/m", template="true_false", transport=transport, structured_output=True)
    judge.score(["What is 15% of 200?"], ["15% of 200 is 20."], ["30"], progress=False)
    request = transport.requests[0]
    assert "the response states 20 instead" in user_text(request)
    schema = request.params["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["matches_reference", "verdict"]
