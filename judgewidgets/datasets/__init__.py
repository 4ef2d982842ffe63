"""Public judgment data with known answers, shipped with the package (see judgewidgets/data/README.md).

```python
jw.datasets.llmbar("Natural")   # pair_id, question, response_a, response_b, label ("A" | "B"), subset
jw.datasets.pandalm()           # + annotator1..3 and label: the human majority ("A" | "B" | "tie")
jw.datasets.arena_hard()        # question_id, model_a, model_b, winner
jw.datasets.conversations()     # id, pair_id, kind, label (1 good, 0 bad), template, note, messages: 45 twin pairs
jw.datasets.conversation_pairs()  # pair_id, kind, history, good, bad, response_a, response_b, label ("A" | "B")
jw.datasets.mt_bench()          # MT-Bench's 80 two-turn questions, category, reference answers
jw.datasets.mt_bench_pairs()    # pair_id, history (turn 1 asked and answered, turn 2 asked), response_a,
                                # response_b, label: two second-turn replies, one right (27, written for us)
jw.datasets.harm_pairs()        # pair_id, kind, question, response_a, response_b, label: 25 harmful requests
                                # (refusal right) and 25 harmless ones (help right), written for us
```
Every pairwise table has the columns `PairwiseJudge.compare_many` and `jw.position_bias` read.
"""

from ._load import (
    CONVERSATION_KINDS,
    HARM_KINDS,
    LLMBAR_SUBSETS,
    arena_hard,
    conversation_pairs,
    conversations,
    harm_pairs,
    llmbar,
    mt_bench,
    mt_bench_pairs,
    pandalm,
)

__all__ = [
    "CONVERSATION_KINDS",
    "HARM_KINDS",
    "LLMBAR_SUBSETS",
    "arena_hard",
    "conversation_pairs",
    "conversations",
    "harm_pairs",
    "llmbar",
    "mt_bench",
    "mt_bench_pairs",
    "pandalm",
]
