"""Quality estimates from a judge on every item and a person's labels on a few (prediction-powered inference).

```python
est = jw.estimate_quality(result, labels, metric="pass_rate")   # "mean" | "pass_rate" | "win_rate"
est.estimate, est.low, est.high, est.labels_only, est.judge_only, est.effective_labels
est.to_df(), est.chart()
plan = jw.label_plan(result, budget=100, seed=0)      # which items to label (active inference)
est = jw.estimate_quality(result, labels, metric="pass_rate", plan=plan)
```
"""

from .._ppi import MeanEstimate, judge_mean, labels_mean, ppi_mean, tuned_lambda, weighted_ppi_mean
from ._plan import LabelPlan, label_plan
from ._quality import QualityEstimate, estimate_quality

__all__ = [
    "LabelPlan",
    "MeanEstimate",
    "QualityEstimate",
    "estimate_quality",
    "judge_mean",
    "label_plan",
    "labels_mean",
    "ppi_mean",
    "tuned_lambda",
    "weighted_ppi_mean",
]
