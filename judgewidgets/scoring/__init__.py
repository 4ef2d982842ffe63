"""Scoring single responses: a judge (a Caller and a Template), panels of judges, their results, aggregates,
cost estimates, generating responses first, answering questions first (commit-first), the panel chart and the table a
person reads."""

from ._aggregate import aggregate
from ._chart import panel_chart
from ._commit import ModelSolver, Question, Solution, Solver
from ._cost import CostEstimate, JudgeCostEstimate
from ._generate import Generator
from ._judge import Judge, LLMJudge
from ._likelihood import LikelihoodJudge
from ._panel import LLMPanel, MinimalJudge, as_judge
from ._readable import ReadableTable, readable_table
from ._results import JudgeResult, PanelResult

__all__ = [
    "CostEstimate",
    "Generator",
    "Judge",
    "JudgeCostEstimate",
    "JudgeResult",
    "LLMJudge",
    "LLMPanel",
    "LikelihoodJudge",
    "MinimalJudge",
    "ModelSolver",
    "PanelResult",
    "Question",
    "ReadableTable",
    "Solution",
    "Solver",
    "aggregate",
    "as_judge",
    "panel_chart",
    "readable_table",
]
