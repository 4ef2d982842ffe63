"""Runs you can keep and compare: results saved to a folder and loaded back, two runs compared item by item,
and a log of the runs in a folder.

```python
result.save("evals/v1")                 # Parquet tables + run.json (settings without secrets, versions, usage)
again = jw.load("evals/v1")             # the same kind of result, every method working
cmp = jw.compare("evals/v1", "evals/v2")  # per item and judge, with paired-bootstrap intervals
cmp.assert_no_regression(margin=0.02)   # RegressionError naming the worst items
jw.Runs("evals/").table                 # the run log; .compare("v1", "v2"), .browser()
```
"""

from ._compare import RunComparison, compare
from ._items import ItemScores, item_scores
from ._load import KINDS, load
from ._log import Runs
from ._stats import paired_bootstrap, sign_test
from ._widgets import RegressionPager, RegressionPages, RunsBrowser, RunsBrowserModel

__all__ = [
    "KINDS",
    "ItemScores",
    "RegressionPager",
    "RegressionPages",
    "RunComparison",
    "Runs",
    "RunsBrowser",
    "RunsBrowserModel",
    "compare",
    "item_scores",
    "load",
    "paired_bootstrap",
    "sign_test",
]
