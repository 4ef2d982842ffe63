"""The built-in scoring templates (uqlm's four, two for instruction following, five for conversations), each
normalised to [0, 1].

Every built-in that judges an answer is reference-grounded: given a reference answer, the judge first says whether
the response's answer matches it, then gives its verdict (see `Template.reference_grounding`); of the conversation
templates only task_completion is (its reference is the outcome the task should reach).
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
    correctness=True,
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
    correctness=True,
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
    correctness=True,
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
    correctness=True,
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

# Conversation-level qualities: each judges the assistant's turns in the whole conversation by default (`target`),
# and reads as well for one turn in context (target="last_turn" or "each_turn"). A higher score is always better.
_YES_NO = {"true": "yes", "false": "no"}

TASK_COMPLETION = Template(
    name="task_completion",
    instruction=(
        "Decide whether the assistant completed the task the user came with. Take the user's goal from their "
        "turns, with everything they added or changed along the way, and look for the outcome in the assistant's "
        "turns and in the results of the tools it called. Answer 'yes' if the goal is fully achieved, 'partly' if "
        "only part of it is, and 'no' if it is not achieved, was given up, or was claimed done without being done."
    ),
    choices={"yes": 1.0, "partly": 0.5, "no": 0.0},
    aliases={**_YES_NO, "partially": "partly", "partial": "partly"},
    score_description="One of: yes, partly, no.",
    target="whole",
    reference_grounding=True,  # a reference is the outcome the task should reach
)

CONSISTENCY = Template(
    name="consistency",
    instruction=(
        "Decide whether the assistant stays consistent with itself. Answer 'yes' if nothing the assistant says "
        "contradicts what it said in an earlier turn (facts, numbers, names, decisions, its own earlier answers), "
        "unless it openly corrects a mistake; answer 'no' if it contradicts itself anywhere."
    ),
    choices={"yes": 1.0, "no": 0.0},
    aliases=_YES_NO,
    score_description="One of: yes (consistent), no (contradicts itself).",
    target="whole",
)

KNOWLEDGE_RETENTION = Template(
    name="knowledge_retention",
    instruction=(
        "Decide whether the assistant keeps what the user told it: facts about themselves or the task, "
        "constraints and preferences they set, corrections they made. Answer 'yes' if every later turn of the "
        "assistant respects all of them and it never asks again for something already given; answer 'no' if it "
        "forgets, ignores or contradicts any of them."
    ),
    choices={"yes": 1.0, "no": 0.0},
    aliases=_YES_NO,
    score_description="One of: yes (keeps everything), no (forgets or ignores something the user said).",
    target="whole",
)

ROLE_ADHERENCE = Template(
    name="role_adherence",
    instruction=(
        "Decide whether the assistant keeps to the role it was given: the persona, rules, scope and format set by "
        "the system or developer message and by the user's standing instructions (with none given, the role of a "
        "helpful, honest and harmless assistant). Answer 'yes' if every turn of the assistant stays within it; "
        "answer 'no' if any turn breaks character, breaks a rule or goes outside the allowed scope, including when "
        "the user asks it to."
    ),
    choices={"yes": 1.0, "no": 0.0},
    aliases=_YES_NO,
    score_description="One of: yes (keeps to its role), no (breaks it).",
    target="whole",
)

USER_FRUSTRATION = Template(
    name="user_frustration",
    instruction=(
        "Decide whether the user becomes frustrated with the assistant. Signs: repeating or rephrasing a request "
        "the assistant did not meet, correcting it again and again, complaining, sarcasm, giving up. Answer 'no' "
        "if the user shows no such frustration and 'yes' if they do. (A user who is not frustrated scores 1, a "
        "frustrated one 0.)"
    ),
    choices={"no": 1.0, "yes": 0.0},
    aliases=_YES_NO,
    score_description="One of: no (the user is not frustrated), yes (the user is frustrated).",
    target="whole",
)

CONVERSATION_TEMPLATES = ("task_completion", "consistency", "knowledge_retention", "role_adherence", "user_frustration")

BUILTIN_TEMPLATES: dict[str, Template] = {
    t.name: t
    for t in (
        TRUE_FALSE_UNCERTAIN,
        TRUE_FALSE,
        CONTINUOUS,
        LIKERT,
        INSTRUCTION_FOLLOWING,
        FOLLOWS_INSTRUCTION,
        TASK_COMPLETION,
        CONSISTENCY,
        KNOWLEDGE_RETENTION,
        ROLE_ADHERENCE,
        USER_FRUSTRATION,
    )
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
