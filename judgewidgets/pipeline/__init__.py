"""The evaluation pipeline: judges of different kinds combined into one confidence-weighted score per item.

```python
pipeline = jw.EvaluationPipeline(
    judges={"quality": jw.LLMJudge("local"), "aspects": jw.AspectEvaluator(["relevance", "clarity"])},
    weights={"quality": 0.6, "aspects": 0.4},
    max_spread=0.3, min_score=0.5,
)
df = pipeline.run(prompts, responses)   # final_score, confidence, needs_human_review, review_reasons, ...
```
"""

from ._pipeline import EvaluationPipeline, as_stage
from ._stages import AspectStage, JudgeStage, PairwiseStage, PipelineItem, PipelineStage, RubricStage, StageScore
from ._table import PipelineTable

__all__ = [
    "AspectStage",
    "EvaluationPipeline",
    "JudgeStage",
    "PairwiseStage",
    "PipelineItem",
    "PipelineStage",
    "PipelineTable",
    "RubricStage",
    "StageScore",
    "as_stage",
]
