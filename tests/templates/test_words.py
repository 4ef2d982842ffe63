"""A short reference's words found in the response (templates/_words.py): the check says "yes, it names it" only when
every word of a short name or term stands in the response (a person's name by its last word), never for a number,
a sentence, a paraphrase or a negation; a reference-grounded prompt tells the judge and a prefill writes the match."""

from __future__ import annotations

import pytest

from judgewidgets.templates import get_template
from judgewidgets.templates._words import check_words


@pytest.mark.parametrize(
    ("question", "reference", "response"),
    [
        ("What is the capital of Canada?", "Ottawa", "Canada's capital city is Ottawa, in the province of Ontario."),
        ("What is the largest ocean on Earth?", "The Pacific Ocean", "That would be the Pacific, a third of Earth."),
        ("Who wrote the novel '1984'?", "George Orwell", "Eric Blair, under his pen name Orwell."),
        ("Who composed it?", "Ludwig van Beethoven", "Beethoven wrote it in 1801."),
        ("What gas do plants take in?", "Carbon dioxide", "They take in carbon dioxide through their leaves."),
        ("What is the capital of Brazil?", "Brasília", "The capital of Brazil is Brasília."),
    ],
)
def test_a_response_that_names_the_reference_gives_it(question: str, reference: str, response: str) -> None:
    checked = check_words(question, reference, response)
    assert checked is not None and "names the reference's answer" in checked.note()


@pytest.mark.parametrize(
    ("question", "reference", "response"),
    [
        ("What is the capital of Canada?", "Ottawa", "It is not Ottawa but Toronto."),  # a negation
        ("What gas do plants take in?", "Carbon dioxide", "They take in CO2."),  # named otherwise: the judge's call
        ("Who invented the telephone?", "Alexander Graham Bell", "Thomas Edison invented it."),
        ("How many legs?", "8", "Eight legs."),  # a number: the number check's
        ("Why is the sky blue?", "Because air scatters blue light more than the other colours", "Air scatters it."),
        ("What is the capital of Australia?", "Australia", "Australia."),  # only the question's own words
        ("Who was the first president?", "George Washington", "John Adams, after the war."),
        ("What is the derivative of sin(x)?", "cos(x)", "The derivative of sin(x) is -cos(x)."),  # a formula
    ],
)
def test_the_check_stays_out_otherwise(question: str, reference: str, response: str) -> None:
    assert check_words(question, reference, response) is None


def test_a_grounded_prompt_tells_the_judge_and_the_prefill_writes_yes() -> None:
    template = get_template("likert")
    question = "What is the capital of Canada?"
    _, user, prefill = template.messages(question, "Its capital is Ottawa.", "Ottawa", prefill=True)
    assert "names the reference's answer, 'Ottawa'" in user["content"]
    assert prefill["content"] == '{"matches_reference": "yes", "score": '
    _, user, open_prefill = template.messages(question, "Toronto.", "Ottawa", prefill=True)
    assert "Checked exactly" not in user["content"] and open_prefill["content"] == '{"matches_reference": "'
