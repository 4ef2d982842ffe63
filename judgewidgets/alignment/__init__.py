"""Aligning a judge with a person's labels, with agreement measured on labels the alignment never used.

```python
aligned = judge.align(labelled_df, label="label")      # LLMJudge, LLMPanel, PairwiseJudge, PairwisePanel
aligned.alignment_report.table                         # before / after: accuracy, κ, intervals (held out)
aligned.alignment_report.chart()
```

The engine here knows no judge kind: each kind implements the `Subject` role beside itself (scoring/,
pairwise/) and calls `aalign_subject` (or `aalign_members` for a panel).
"""

from ._align import LEVERS, AlignOptions, aalign, aalign_subject, align
from ._calibration import AgreementCalibration, ScoreCalibration
from ._labels import LabelKind, Labels, read_labels
from ._panels import aalign_members
from ._reflect import SYSTEM as REFLECTION_SYSTEM
from ._report import AlignmentReport
from ._rules import AsJudged, Calibrated, FittedPairRule, FittedRule, LevelRule, PairRule, Rule
from ._subject import Prompt, Reflector, Subject, fixed

__all__ = [
    "LEVERS",
    "REFLECTION_SYSTEM",
    "AgreementCalibration",
    "AlignOptions",
    "AlignmentReport",
    "AsJudged",
    "Calibrated",
    "FittedPairRule",
    "FittedRule",
    "LabelKind",
    "Labels",
    "LevelRule",
    "PairRule",
    "Prompt",
    "Reflector",
    "Rule",
    "ScoreCalibration",
    "Subject",
    "aalign",
    "aalign_members",
    "aalign_subject",
    "align",
    "fixed",
    "read_labels",
]
