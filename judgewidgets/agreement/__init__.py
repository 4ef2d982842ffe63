"""Agreement between raters, and of judges with ground truth.

```python
from judgewidgets import agreement
agreement.cohen_kappa(df["judge_1"], df["judge_2"], weights="quadratic")
agreement.krippendorff_alpha(df[["judge_1", "judge_2", "judge_3"]], level="ordinal")   # items × raters
agreement.agreement_report(ratings).pairs            # Cohen's κ per pair; .overall: Fleiss' κ, α
agreement.judge_vs_truth(df, "label").round(3)       # per judge: accuracy, κ, F1 with bootstrap CIs
```

Conventions shared by every function: pairwise metrics take `(a, b)` or `(pred, truth)` matched by position
and drop pairs where either value is missing; tables (`ratings`) are items × raters with NaN for a missing
rating. Labels are the sorted union of the values seen, or `labels=[...]` in the order given (needed for
ordinal string labels). Undefined statistics (e.g. κ when chance agreement is perfect) are NaN. Bad data
raises `InputError`, bad options `ConfigurationError`. The results equal scikit-learn, statsmodels, scipy
and the `krippendorff` package to 1e-9 (see tests/agreement); only numpy and pandas are needed.
"""

from ._bootstrap import BootstrapCI, bootstrap_ci
from ._classification import (
    accuracy,
    adjacent_accuracy,
    confusion_matrix,
    f1,
    mae,
    ordinal_metrics,
    precision,
    recall,
    rmse,
    spearman,
)
from ._kappa import cohen_kappa, fleiss_kappa
from ._krippendorff import krippendorff_alpha
from ._report import AgreementReport, agreement_report, judge_vs_truth

__all__ = [
    "AgreementReport",
    "BootstrapCI",
    "accuracy",
    "adjacent_accuracy",
    "agreement_report",
    "bootstrap_ci",
    "cohen_kappa",
    "confusion_matrix",
    "f1",
    "fleiss_kappa",
    "judge_vs_truth",
    "krippendorff_alpha",
    "mae",
    "ordinal_metrics",
    "precision",
    "recall",
    "rmse",
    "spearman",
]
