"""Aspect-based evaluation: independent qualities of a response, each scored by its own focused judge.

```python
evaluator = jw.AspectEvaluator(aspects=["relevance", "clarity", "helpfulness", "safety"], judge="local")
result = evaluator.evaluate(prompts, responses)
result.to_df()     # <aspect>, <aspect>_passed, <aspect>_explanation, passed, average_score, error
result.chart()
```
Built-ins: relevance, accuracy, completeness, coherence, safety, tone, conciseness, clarity, helpfulness; define
your own with `jw.Aspect(name, instruction, threshold=None)`. Scores are 1–5 mapped onto [0, 1] as (s − 1) / 4.
"""

from ._aspect import BUILTIN_ASPECTS, DEFAULT_THRESHOLD, Aspect
from ._evaluator import AspectEvaluator
from ._result import AspectResult

__all__ = ["BUILTIN_ASPECTS", "DEFAULT_THRESHOLD", "Aspect", "AspectEvaluator", "AspectResult"]
