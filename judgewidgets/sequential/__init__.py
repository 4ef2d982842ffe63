"""Precision-based sequential rating: draw judgments until the mean rating is known to ±d = R/(3K).

```python
rater = jw.SequentialRater(judges=["local"], scale=(1, 10), K=10, alpha=0.05)
sr = rater.rate(prompt, response)        # sr.mean, sr.half_width, sr.n, sr.trace, sr.chart()
jw.sequential.expected_samples(1.0, K=9, alpha=0.10)   # 25, the seed's theory
jw.sequential.simulate(8.3, 1.0, trials=5000, method="seed")
```

Stopping rules (`method=`): ``"t"`` (the default: Student-t, minimum n, variance floor, fixed-width interval),
``"seed"`` (the seed's z-rule, exactly), ``"stein"`` (two-stage) and ``"confidence_sequence"`` (betting,
anytime-valid for any ratings on the scale). benchmarks/sequential_coverage.py compares them.
"""

from ._charts import batch_chart, parameter_effects_chart, sequential_chart
from ._confseq import ConfidenceSequenceRule
from ._distribution import SEED_DISTRIBUTION, likert_distribution, scale_points
from ._effects import parameter_effects
from ._methods import DEFAULT_METHOD, METHODS, make_rule
from ._precision import Precision, expected_samples, t_quantile, z_quantile
from ._rater import PromptVariantTemplate, SequentialRater, rating_template
from ._result import SequentialFrame, SequentialResult
from ._rules import AnytimeRule, SeedRule, SteinRule, StoppingRule, TQuantileRule
from ._simulate import compare_methods, simulate, summarise

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "SEED_DISTRIBUTION",
    "AnytimeRule",
    "ConfidenceSequenceRule",
    "Precision",
    "PromptVariantTemplate",
    "SeedRule",
    "SequentialFrame",
    "SequentialRater",
    "SequentialResult",
    "SteinRule",
    "StoppingRule",
    "TQuantileRule",
    "batch_chart",
    "compare_methods",
    "expected_samples",
    "likert_distribution",
    "make_rule",
    "parameter_effects",
    "parameter_effects_chart",
    "rating_template",
    "scale_points",
    "sequential_chart",
    "simulate",
    "summarise",
    "t_quantile",
    "z_quantile",
]
