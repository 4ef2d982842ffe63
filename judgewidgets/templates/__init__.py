"""Scoring templates: what a judge is asked and how its answer becomes a score in [0, 1].

Built-ins: ``true_false_uncertain`` (correct 1, not sure 0.5, incorrect 0), ``true_false``, ``continuous``
(0-100, divided by 100) and ``likert`` (1-5 mapped to 0, .25, .5, .75, 1); for instruction following (what
pairwise comparisons score each response with), ``instruction_following`` (1-5) and ``follows_instruction``
(yes 1 / no 0); for conversations (the whole one by default, see `Template.target`), ``task_completion`` (yes 1,
partly 0.5, no 0), ``consistency``, ``knowledge_retention``, ``role_adherence`` (yes 1 / no 0) and
``user_frustration`` (no 1 / yes 0: higher is better). Build others with `Template`.
"""

from ._builtin import (
    BUILTIN_TEMPLATES,
    CONSISTENCY,
    CONTINUOUS,
    CONVERSATION_TEMPLATES,
    FOLLOWS_INSTRUCTION,
    INSTRUCTION_FOLLOWING,
    KNOWLEDGE_RETENTION,
    LIKERT,
    ROLE_ADHERENCE,
    TASK_COMPLETION,
    TRUE_FALSE,
    TRUE_FALSE_UNCERTAIN,
    USER_FRUSTRATION,
    get_template,
    parse,
)
from ._template import Anchor, Template

__all__ = [
    "BUILTIN_TEMPLATES",
    "CONSISTENCY",
    "CONTINUOUS",
    "CONVERSATION_TEMPLATES",
    "FOLLOWS_INSTRUCTION",
    "INSTRUCTION_FOLLOWING",
    "KNOWLEDGE_RETENTION",
    "LIKERT",
    "ROLE_ADHERENCE",
    "TASK_COMPLETION",
    "TRUE_FALSE",
    "TRUE_FALSE_UNCERTAIN",
    "USER_FRUSTRATION",
    "Anchor",
    "Template",
    "get_template",
    "parse",
]
