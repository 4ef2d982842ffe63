"""Trust or escalate: cascaded judges with a guaranteed level of agreement with human labels.

```python
cascade = jw.Cascade([jw.PairwiseJudge("local"), jw.PairwiseJudge("openai/gpt-4o")], target_agreement=0.9, delta=0.1)
cascade.calibrate(labelled_df)      # question, response_a, response_b, label: certifies a threshold per stage
result = cascade.run(pairs_df)      # result.table, result.stages(), result.summary(), result.chart()
cascade.estimate_cost(pairs_df)     # before a run
jw.cascade.simulated_annotators(jw.PairwiseJudge("local"))   # a stage whose confidence is a vote share
jw.cascade.simulate([jw.cascade.SimulatedJudge(bias=0.5), jw.cascade.SimulatedJudge(bias=2)])   # validity
```
Jung, Brahman & Choi, "Trust or Escalate: LLM Judges with Provable Guarantees for Human Agreement" (ICLR 2025).
`Cascade`'s docstring says exactly what is guaranteed.
"""

from ._annotators import PAIRWISE_WORDINGS, POINTWISE_PERSONAS, simulated_annotators
from ._bounds import AgreementTest, binomial_cdf, clopper_pearson_lower, minimum_rows
from ._calibrate import StageFit, Walk, fit_cascade, fit_with, route
from ._calibration import Calibration
from ._cascade import Cascade
from ._chart import cascade_chart
from ._cost import CascadeCostEstimate, StageCostEstimate
from ._picker import TargetPickerModel
from ._result import CascadeResult
from ._simulate import SimulatedJudge, simulate

__all__ = [
    "PAIRWISE_WORDINGS",
    "POINTWISE_PERSONAS",
    "AgreementTest",
    "Calibration",
    "Cascade",
    "CascadeCostEstimate",
    "CascadeResult",
    "SimulatedJudge",
    "StageCostEstimate",
    "StageFit",
    "TargetPickerModel",
    "Walk",
    "binomial_cdf",
    "cascade_chart",
    "clopper_pearson_lower",
    "fit_cascade",
    "fit_with",
    "minimum_rows",
    "route",
    "simulate",
    "simulated_annotators",
]
