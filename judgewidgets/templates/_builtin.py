"""The built-in scoring templates (uqlm's four, and two for instruction following), each normalised to [0, 1].

Every built-in is reference-grounded: given a reference answer, the judge first says whether the response's answer
matches it, then gives its verdict (see `Template.reference_grounding`).
"""

from __future__ import annotations

from .._errors import ConfigurationError
from ._template import Template

_UNCERTAIN_ALIASES = {
    "i am not sure": "not sure",
    "i'm not sure": "not sure",
    "unsure": "not sure",
    "uncertain": "not sure",
    "not certain": "not sure",
    "unknown": "not sure",
    "not correct": "incorrect",
    "wrong": "incorrect",
    "false": "incorrect",
    "true": "correct",
    "right": "correct",
}

TRUE_FALSE_UNCERTAIN = Template(
    name="true_false_uncertain",
    instruction=(
        "Decide whether the response correctly answers the question. Answer 'correct' if it is correct, "
        "'incorrect' if it is wrong or fails to answer, and 'not sure' only if you cannot tell."
    ),
    choices={"correct": 1.0, "not sure": 0.5, "incorrect": 0.0},
    aliases=_UNCERTAIN_ALIASES,
    score_description="One of: correct, incorrect, not sure.",
    reference_grounding=True,
)

TRUE_FALSE = Template(
    name="true_false",
    instruction=(
        "Decide whether the response correctly answers the question. Answer 'correct' if it is correct and "
        "'incorrect' if it is wrong, incomplete in an essential way, or fails to answer."
    ),
    choices={"correct": 1.0, "incorrect": 0.0},
    aliases={k: v for k, v in _UNCERTAIN_ALIASES.items() if v != "not sure"},
    score_description="One of: correct, incorrect.",
    reference_grounding=True,
)

CONTINUOUS = Template(
    name="continuous",
    instruction=(
        "Rate how well the response answers the question on a scale from 0 to 100, where 0 means completely "
        "wrong or useless and 100 means fully correct, complete and helpful."
    ),
    scale=(0, 100),
    score_description="An integer from 0 (completely wrong) to 100 (fully correct and complete).",
    reference_grounding=True,
)

LIKERT = Template(
    name="likert",
    instruction=(
        "Rate the quality of the response to the question on a 1-5 Likert scale: 1 = wrong or useless, "
        "2 = mostly wrong, 3 = partly correct, 4 = correct with minor issues, 5 = fully correct, complete and "
        "clear."
    ),
    scale=(1, 5),
    score_description="An integer from 1 (wrong or useless) to 5 (fully correct, complete and clear).",
    reference_grounding=True,
)

_FOLLOWING_RULES = (
    "The most important question is whether the response precisely executes the instruction in the question: "
    "it does exactly what is asked, no more and no less, in the form asked for, and honestly. Then consider "
    "whether it is correct, helpful and harmless. Do not reward length, style or polish that the instruction "
    "did not ask for."
)

INSTRUCTION_FOLLOWING = Template(
    name="instruction_following",
    instruction=(
        f"{_FOLLOWING_RULES} Rate the response on a 1-5 scale: 1 = ignores or fails the instruction, "
        "2 = mostly fails it, 3 = partly follows it, 4 = follows it with minor issues, 5 = precisely follows it "
        "and is correct."
    ),
    scale=(1, 5),
    score_description="An integer from 1 (fails the instruction) to 5 (precisely follows it and is correct).",
    reference_grounding=True,
)

FOLLOWS_INSTRUCTION = Template(
    name="follows_instruction",
    instruction=(
        f"{_FOLLOWING_RULES} Answer 'yes' if the response precisely follows the instruction and answers it "
        "correctly, 'no' otherwise."
    ),
    choices={"yes": 1.0, "no": 0.0},
    aliases={"true": "yes", "false": "no", "correct": "yes", "incorrect": "no"},
    score_description="One of: yes, no.",
    reference_grounding=True,
)

BUILTIN_TEMPLATES: dict[str, Template] = {
    t.name: t
    for t in (TRUE_FALSE_UNCERTAIN, TRUE_FALSE, CONTINUOUS, LIKERT, INSTRUCTION_FOLLOWING, FOLLOWS_INSTRUCTION)
}


def get_template(template: str | Template) -> Template:
    """A Template object from a built-in name or a Template; unknown names raise ConfigurationError."""
    if isinstance(template, Template):
        return template
    if isinstance(template, str) and template in BUILTIN_TEMPLATES:
        return BUILTIN_TEMPLATES[template]
    raise ConfigurationError(
        f"unknown template {template!r}; use one of {', '.join(sorted(BUILTIN_TEMPLATES))} or a jw.Template"
    )


def parse(name: str | Template, text: str) -> float:
    """The [0, 1] score that `text` gives under template `name`, NaN when nothing parses."""
    return get_template(name).parse(text)
