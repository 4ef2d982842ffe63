"""Rubric grading with AutoRubric's semantics: binary and multi-choice criteria, ensembles of judges.

```python
rubric = jw.Rubric.from_yaml("rubric.yaml")
grader = jw.CriterionGrader(judges=["local", "openai/gpt-4o-mini"], ordinal_aggregation="median", seed=7)
report = grader.grade(rubric, submission, query=question)
report.score, report.to_df()
result = grader.grade_many(rubric, df, ground_truth="labels")
result.metrics(); result.inter_judge_agreement(); result.review()

rag = jw.rubrics.LeveledRubric.rag_quality()            # weighted dimensions with a description per level
rag.grade(answer, query=question, context=docs, grader="local").grade   # letter from the weighted percentage
```
"""

from ._criterion import Criterion, CriterionOption, CriterionVerdict
from ._dimensions import Dimension, DimensionScore, LeveledReport, LeveledResult, LeveledRubric
from ._grader import CriterionGrader
from ._records import CriterionResult, CriterionVote, RubricReport
from ._result import GradingResult
from ._rubric import Rubric

__all__ = [
    "Criterion",
    "CriterionGrader",
    "CriterionOption",
    "CriterionResult",
    "CriterionVerdict",
    "CriterionVote",
    "Dimension",
    "DimensionScore",
    "GradingResult",
    "LeveledReport",
    "LeveledResult",
    "LeveledRubric",
    "Rubric",
    "RubricReport",
]
