"""How good is my judge? Measure it on human-labelled sets that ship with the package, beside published judges.

```python
report = jw.meta_evaluate(jw.PairwiseJudge("local"), ["llmbar"], subsets=["Natural"], n=20, seed=0)
report.table      # accuracy, positional agreement, first-slot preference (+ κ, F1 on PandaLM), published rows
report.chart()    # accuracy per set beside GPT-4, PaLM2, ChatGPT, LLaMA2-70B, Falcon-180B (LLMBar's Vanilla)
```
"""

from ._evaluate import DATASETS, MetaEvaluation, ameta_evaluate, meta_evaluate
from ._published import published

__all__ = ["DATASETS", "MetaEvaluation", "ameta_evaluate", "meta_evaluate", "published"]
