"""Quality estimates from a judge on every item and a person's labels on a few (prediction-powered inference).

```python
est = jw.estimate_quality(result, labels, metric="pass_rate")   # "mean" | "pass_rate" | "win_rate"
est.estimate, est.low, est.high, est.labels_only, est.judge_only, est.effective_labels
est.to_df(), est.chart()
```
"""

from .._ppi import MeanEstimate, judge_mean, labels_mean, ppi_mean, tuned_lambda
from ._quality import QualityEstimate, estimate_quality

__all__ = [
    "MeanEstimate",
    "QualityEstimate",
    "estimate_quality",
    "judge_mean",
    "labels_mean",
    "ppi_mean",
    "tuned_lambda",
]
