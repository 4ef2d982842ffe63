"""Commit-first by default (issue 46 item 4): the embedded judge, under a template that judges correctness, answers a
question without a reference first and grades against its answer when it is short; nowhere else is it on unless
asked. Scripted transports stand in for the model (the choice depends on the model name and the template, not on
what the model answers); tests/local/test_no_reference_default.py runs the embedded model itself."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import judgewidgets as jw
from judgewidgets.engine import ChatRequest, RetryPolicy
from judgewidgets.scoring._commit import (
    EMBEDDED_DEFAULT,
    NOT_ASKED_SOURCE,
    NOT_SHORT_SOURCE,
    SOLVER_INSTRUCTION,
    asks_for_a_fact,
    commit_first_default,
    commit_first_option,
)
from judgewidgets.testing import ScriptedTransport

CORRECTNESS = ("true_false_uncertain", "true_false", "continuous", "likert")
OTHERS = ("instruction_following", "follows_instruction", "task_completion", "consistency", "user_frustration")
SOLVED = {"What is the capital of Australia?": "Canberra", "Why is the sky blue?": "Because " + "air " * 20}


def is_solver(request: ChatRequest) -> bool:
    return request.messages[0]["content"].endswith(SOLVER_INSTRUCTION)


def reply(request: ChatRequest, attempt: int) -> str:
    """The solver answers from SOLVED; the judge says correct when the response names its reference, and "not
    sure" without one."""
    if is_solver(request):
        return SOLVED.get(request.messages[-1]["content"], "I do not know")
    text = request.messages[1]["content"]
    found = re.search(r"<reference>\n(.*?)\n</reference>", text, re.S)
    if found is None:
        return json.dumps({"verdict": "not sure"})
    response = re.search(r"<response>\n(.*?)\n</response>", text, re.S)
    same = response is not None and found.group(1).lower() in response.group(1).lower()
    return json.dumps({"matches_reference": "yes" if same else "no", "verdict": "correct" if same else "incorrect"})


def local(transport: ScriptedTransport | None = None, **options: Any) -> jw.LLMJudge:
    """The embedded judge, its calls answered by `transport` (plain answers: no logprobs or prefill to script)."""
    options.setdefault("template", "true_false_uncertain")
    scripted = {"transport": transport, "probability_weighted": False, "prefill": False} if transport else {}
    return jw.LLMJudge("local", cache=False, retry=RetryPolicy(max_retries=0), **scripted, **options)


@pytest.mark.parametrize("template", CORRECTNESS)
def test_the_embedded_judge_commits_first_under_every_correctness_template(template: str) -> None:
    committer = jw.LLMJudge("local", template=template).committer
    assert committer is not None and committer.by_default and committer.short_only
    assert EMBEDDED_DEFAULT == "short" and jw.templates.get_template(template).correctness


@pytest.mark.parametrize("template", OTHERS)
def test_templates_that_do_not_judge_correctness_do_not(template: str) -> None:
    assert jw.LLMJudge("local", template=template).committer is None
    assert not jw.templates.get_template(template).correctness


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-20241022", "openai/local"])
def test_hosted_judges_do_not_by_default(model: str) -> None:
    assert jw.LLMJudge(model, template="true_false_uncertain").committer is None
    assert commit_first_default(model, jw.templates.get_template("likert")) is False


def test_commit_first_false_turns_it_off_and_true_grades_every_answer() -> None:
    assert local(commit_first=False).committer is None
    chosen = local(commit_first=True).committer
    assert chosen is not None and not chosen.by_default and not chosen.short_only
    own = jw.Template(name="mine", instruction="Is it right?", choices={"yes": 1.0, "no": 0.0}, correctness=True)
    assert local(template=own).committer is not None
    assert jw.LLMJudge("local", template=own.model_copy(update={"correctness": False})).committer is None


def test_the_default_grades_against_a_short_made_answer_and_records_it() -> None:
    transport = ScriptedTransport(reply)
    prompts = ["What is the capital of Australia?"] * 2 + ["Why is the sky blue?"]
    responses = ["Canberra is the capital.", "Sydney, the biggest city.", "Rayleigh scattering."]
    result = local(transport).score(prompts, responses, progress=False)
    assert [r.messages[-1]["content"] for r in transport.requests if is_solver(r)] == [prompts[0], prompts[2]]
    right, wrong, open_question = result.vote_list
    assert (right.score, wrong.score) == (1.0, 0.0)
    assert right.reference_source == "judge" and right.made_reference == "Canberra"
    assert open_question.reference_source == NOT_SHORT_SOURCE and open_question.score == 0.5  # graded as today
    assert local(transport, commit_first=False).score(prompts[:2], responses[:2], progress=False).score_list == [
        0.5,
        0.5,
    ]


def test_a_request_that_asks_for_no_one_fact_is_graded_as_today_at_no_extra_call() -> None:
    transport = ScriptedTransport(reply)
    prompts = [
        "Calculate the total cost: 3 laptops at $1100 each and 2 monitors at $200 each.",
        "What date will the United States economy crash?",
    ]
    result = local(transport).score(prompts, ["$3700", "Nobody can say."], progress=False)
    assert not any(is_solver(r) for r in transport.requests)
    assert [v.reference_source for v in result.vote_list] == [NOT_ASKED_SOURCE] * 2
    assert [v.score for v in result.vote_list] == [0.5, 0.5]  # the judge read them without a reference
    assert local().estimate_cost(prompts, ["$3700", "Nobody can say."]).judges[0].answering_calls == 0
    chosen = local(transport, commit_first=True).score(prompts[:1], ["$3700"], progress=False)  # all: answered
    assert chosen.vote_list[0].reference_source == "judge" and is_solver(transport.requests[-2])


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("In what year did the Berlin Wall fall?", True),
        ("how many legs does a spider have", True),  # no question mark, a question word
        ("Name the largest planet in the solar system.", True),
        ("Tell me the boiling point of water in degrees Fahrenheit.", True),
        ("What is the capital of France? Answer in one word.", True),
        ("A train covers 60 km in 45 minutes. What is its average speed in km/h?", True),
        ("What is the best-selling novel of all time?", True),  # "best-selling" is a fact, "best" an opinion
        ("¿Cuál es la capital de Francia?", True),
        ("Tell me who wrote Hamlet.", True),
        ("Question: What is the capital of France?\nAnswer in one word.", True),
        ("Q: Who painted the Mona Lisa", True),
        ("Calculate the total cost of the following items. 3 laptop - $1100 each, 2 monitors - $200 each", False),
        ("Combine the two sentences into one:\nHe stayed at home. He didn't go to the party.", False),
        ("Tell me a joke.", False),
        ("What date will the united states economy crash?", False),  # a prediction
        ("What is the best programming language for 2023", False),  # an opinion
        ("Should I learn Rust or Go first?", False),  # advice
        ("Name a famous mathematician.", False),  # one example of many
        ("Rewrite the sentence in a more formal tone: gonna be late.", False),  # not a question
        (
            "There are five sisters in a room. Anne is reading a book, Margaret is cooking, Kate is playing chess, "
            "and Marie is doing the laundry. What's the fifth sister doing?",
            False,  # a riddle over material of its own: more than QUESTION_WORDS words
        ),
    ],
)
def test_only_a_question_of_one_fact_is_answered_first(question: str, asks: bool) -> None:
    assert asks_for_a_fact(question) is asks


def test_a_given_reference_wins_and_asks_nothing_first() -> None:
    transport = ScriptedTransport(reply)
    result = local(transport).score(["What is the capital of Australia?"], ["Canberra."], ["Canberra"])
    assert result.vote_list[0].reference_source == "given"
    assert not any(is_solver(r) for r in transport.requests)


@pytest.mark.parametrize("target", ["whole", "last_turn"])
def test_a_conversation_is_graded_without_a_reference_by_default_not_refused(target: str) -> None:
    chat = [{"role": "user", "content": "What is 6 x 7?"}, {"role": "assistant", "content": "42."}]
    transport = ScriptedTransport(reply)
    result = local(transport).score(conversations=[chat], target=target, progress=False)
    vote = result.vote_list[0]
    assert vote.error is None and vote.reference_source is None
    assert not any(is_solver(r) for r in transport.requests)
    assert local().estimate_cost(conversations=[chat], target=target).judges[0].answering_calls == 0
    with pytest.raises(jw.InputError, match="whole conversation"):  # chosen, it is still refused before any call
        local(transport, commit_first=True).score(conversations=[chat], target="whole")


def test_the_estimate_counts_the_answering_calls_of_the_default() -> None:
    prompts = ["What is 6 x 7?", "What is 6 x 7?", "What is 2 + 2?"]
    estimate = jw.LLMJudge("local", template="likert").estimate_cost(prompts, ["42", "41", "4"])
    row = estimate.judges[0]
    assert row.answering_calls == 2 and row.calls == 5
    assert jw.LLMJudge("local", commit_first=False).estimate_cost(prompts, ["42", "41", "4"]).judges[0].calls == 3
    assert jw.LLMJudge("local").estimate_cost(prompts, ["42", "41", "4"], ["42", "42", "4"]).judges[0].calls == 3


def test_a_rubric_grader_does_not_commit_first_unless_asked() -> None:
    rubric = jw.Rubric([jw.Criterion("polite", "The answer is polite.")])
    grader = jw.CriterionGrader(["local"])
    assert grader.judges[0].committer is not None  # the judge's template is likert ...
    grader.check_questions(rubric, ["What is 6 x 7?"], None, None)  # ... but its criteria are the rubric's: no error
    estimate = grader.estimate_cost(rubric, ["42"]).judges[0]
    assert estimate.answering_calls == 0


def test_pairwise_judges_and_panels_keep_their_own_defaults() -> None:
    assert jw.PairwiseJudge("local").committer is None
    assert jw.LLMPanel([local(), local(name="b", commit_first=False)]).judges[1].committer is None
    assert jw.LLMPanel([local()], commit_first=False).judges[0].committer is None


def test_the_command_line_and_magic_can_turn_it_off() -> None:
    assert commit_first_option("off") is False
    assert commit_first_option("all") is True and commit_first_option("short") == "short"
    assert commit_first_option(None) is None


def test_the_command_lines_commit_first_off_parses() -> None:
    from judgewidgets._cli import build_parser

    args = build_parser().parse_args(["score", "data.csv", "--judge", "local", "--commit-first", "off"])
    assert commit_first_option(args.commit_first) is False


@pytest.mark.parametrize(
    ("answer", "question", "graded_against"),
    [
        ("Canberra", "What is the capital of Australia?", True),
        ("The Pacific Ocean is the largest ocean on Earth.", "What is the largest ocean on Earth?", True),  # restated
        ("Martin Luther King Jr.", "Who gave the 'I Have a Dream' speech?", True),
        ("Because air scatters blue light more than red light.", "Why is the sky blue?", False),  # six words added
        ("Gauss", "Tell the name of a famous mathematician.", False),  # one example of many
        ("Work-related stress.", "Name a common cause of stress.", False),
        ("Belgium and the Netherlands.", "Name two countries that use the euro.", False),
        ("Jupiter", "Name the largest planet in the solar system.", True),  # the answer, not an example
        ("7", "Give the sum of 3 and 4.", True),
    ],
)
def test_a_made_answer_is_graded_against_when_it_is_the_answer_and_short(
    answer: str, question: str, graded_against: bool
) -> None:
    from judgewidgets.scoring._commit import checkable

    assert checkable(answer, question) is graded_against
