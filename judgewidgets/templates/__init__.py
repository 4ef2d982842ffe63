"""Scoring templates: what a judge is asked and how its answer becomes a score in [0, 1].

Built-ins: ``true_false_uncertain`` (correct 1, not sure 0.5, incorrect 0), ``true_false``, ``continuous``
(0-100, divided by 100) and ``likert`` (1-5 mapped to 0, .25, .5, .75, 1); for instruction following (what
pairwise comparisons score each response with), ``instruction_following`` (1-5) and ``follows_instruction``
(yes 1 / no 0). Build others with `Template`.
"""

from ._builtin import (
    BUILTIN_TEMPLATES,
    CONTINUOUS,
    FOLLOWS_INSTRUCTION,
    INSTRUCTION_FOLLOWING,
    LIKERT,
    TRUE_FALSE,
    TRUE_FALSE_UNCERTAIN,
    get_template,
    parse,
)
from ._template import Anchor, Template

__all__ = [
    "BUILTIN_TEMPLATES",
    "CONTINUOUS",
    "FOLLOWS_INSTRUCTION",
    "INSTRUCTION_FOLLOWING",
    "LIKERT",
    "TRUE_FALSE",
    "TRUE_FALSE_UNCERTAIN",
    "Anchor",
    "Template",
    "get_template",
    "parse",
]
