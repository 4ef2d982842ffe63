"""Aligning a judge with a person's labels, with agreement measured on labels the alignment never used.

```python
aligned = judge.align(labelled_df, label="label")      # LLMJudge, LLMPanel, PairwiseJudge, PairwisePanel
aligned.alignment_report.table                         # before / after: accuracy, κ, intervals (held out)
aligned.alignment_report.chart()
```
"""

from ._align import LEVERS, aalign, align
from ._calibration import ScoreCalibration
from ._labels import LabelKind, Labels, read_labels
from ._report import AlignmentReport

__all__ = [
    "LEVERS",
    "AlignmentReport",
    "LabelKind",
    "Labels",
    "ScoreCalibration",
    "aalign",
    "align",
    "read_labels",
]
