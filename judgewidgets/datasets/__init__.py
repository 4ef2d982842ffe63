"""Public judgment data with known answers, shipped with the package (see judgewidgets/data/README.md).

```python
jw.datasets.llmbar("Natural")   # pair_id, question, response_a, response_b, label ("A" | "B"), subset
jw.datasets.pandalm()           # + annotator1..3 and label: the human majority ("A" | "B" | "tie")
jw.datasets.arena_hard()        # question_id, model_a, model_b, winner
```
Every pairwise table has the columns `PairwiseJudge.compare_many` and `jw.position_bias` read.
"""

from ._load import LLMBAR_SUBSETS, arena_hard, llmbar, pandalm

__all__ = ["LLMBAR_SUBSETS", "arena_hard", "llmbar", "pandalm"]
