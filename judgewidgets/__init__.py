"""judgewidgets: LLM-as-a-judge evaluation, native to Jupyter.

```python
import judgewidgets as jw
panel = jw.LLMPanel(judges=["local", "openai/gpt-4o-mini"], template="likert")
panel.score(prompts, responses).to_df()
```
"""

import importlib as _importlib

from . import (
    agreement,
    alignment,
    aspects,
    cascade,
    conversations,
    datasets,
    distributed,
    estimates,
    labels,
    meta_eval,
    pairwise,
    pipeline,
    runs,
    scoring,
    sequential,
    templates,
)
from ._batching import Batching, aresume_batch, batches, cancel_batch, resume_batch
from ._errors import (
    CallsFailedWarning,
    ConfigurationError,
    InputError,
    JudgeCallError,
    JudgeWidgetsError,
    LocalModelError,
    ParseError,
    RegressionError,
    SavedRunError,
    ShardFailedError,
    UnknownModelWarning,
)
from ._examples import load_example
from ._records import Item, Vote
from ._review import ReviewPolicy
from ._runner import run_sync
from ._version import __version__
from .alignment import AlignmentReport, ScoreCalibration
from .aspects import Aspect, AspectEvaluator, AspectResult
from .cascade import Calibration, Cascade, CascadeResult
from .engine import CallCache, Caller, CallFailure, RateLimits, RetryPolicy, rate_limits
from .engine._litellm import keep_litellm_offline as _keep_litellm_offline
from .estimates import LabelPlan, QualityEstimate, estimate_quality, label_plan
from .labels import LabelStore
from .meta_eval import MetaEvaluation, ameta_evaluate, meta_evaluate
from .pairwise import (
    CorrectedRanking,
    PairExample,
    PairwiseJudge,
    PairwisePanel,
    PairwiseResult,
    Tournament,
    TournamentResult,
    bradley_terry,
    corrected_ranking,
    elo,
    position_bias,
)
from .pipeline import EvaluationPipeline, PipelineStage, StageScore
from .rubrics import (
    Criterion,
    CriterionGrader,
    CriterionOption,
    CriterionResult,
    CriterionVerdict,
    CriterionVote,
    Dimension,
    DimensionScore,
    GradingResult,
    LeveledReport,
    LeveledResult,
    LeveledRubric,
    Rubric,
    RubricReport,
)
from .runs import RunComparison, Runs, compare, load
from .scoring import (
    Generator,
    Judge,
    JudgeResult,
    LikelihoodJudge,
    LLMJudge,
    LLMPanel,
    ModelSolver,
    PanelResult,
    Solver,
)
from .sequential import SequentialFrame, SequentialRater, SequentialResult, StoppingRule
from .templates import Anchor, Template

# litellm fetches its model cost map (at import) and Anthropic's beta-header table (on the first Anthropic call)
# from the network unless told otherwise; never let it, even when you import litellm yourself after judgewidgets
# (nothing above imports litellm).
_keep_litellm_offline()

_NOTEBOOK_NAMES = (
    "AlignmentView",
    "CascadeTargetPicker",
    "DisagreementExplorer",
    "LabelQueue",
    "LiveConvergence",
    "PanelBuilder",
    "ReviewQueue",
    "TournamentView",
)


# Subpackages that load heavy dependencies (ipywidgets and altair; aiohttp's test servers), imported on first use
# as `jw.jupyter` and `jw.testing`, as an `import judgewidgets.jupyter` would.
_LAZY_SUBPACKAGES = ("jupyter", "testing")


def __getattr__(name: str) -> object:
    """The notebook widgets load ipywidgets and altair, so they (and the `jupyter` and `testing` subpackages) are
    imported on first use."""
    if name in _NOTEBOOK_NAMES:
        return getattr(_importlib.import_module(f"{__name__}.jupyter"), name)
    if name in _LAZY_SUBPACKAGES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'judgewidgets' has no attribute {name!r}")


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext judgewidgets`: registers `%%judge` and `%judge_config`."""
    from .jupyter import load_ipython_extension as load

    load(ipython)


__all__ = [
    "AlignmentReport",
    "AlignmentView",
    "Anchor",
    "Aspect",
    "AspectEvaluator",
    "AspectResult",
    "Batching",
    "Calibration",
    "CallCache",
    "CallFailure",
    "Caller",
    "CallsFailedWarning",
    "Cascade",
    "CascadeResult",
    "CascadeTargetPicker",
    "ConfigurationError",
    "CorrectedRanking",
    "Criterion",
    "CriterionGrader",
    "CriterionOption",
    "CriterionResult",
    "CriterionVerdict",
    "CriterionVote",
    "Dimension",
    "DimensionScore",
    "DisagreementExplorer",
    "EvaluationPipeline",
    "Generator",
    "GradingResult",
    "InputError",
    "Item",
    "Judge",
    "JudgeCallError",
    "JudgeResult",
    "JudgeWidgetsError",
    "LLMJudge",
    "LLMPanel",
    "LabelPlan",
    "LabelQueue",
    "LabelStore",
    "LeveledReport",
    "LeveledResult",
    "LeveledRubric",
    "LikelihoodJudge",
    "LiveConvergence",
    "LocalModelError",
    "MetaEvaluation",
    "ModelSolver",
    "PairExample",
    "PairwiseJudge",
    "PairwisePanel",
    "PairwiseResult",
    "PanelBuilder",
    "PanelResult",
    "ParseError",
    "PipelineStage",
    "QualityEstimate",
    "RateLimits",
    "RegressionError",
    "RetryPolicy",
    "ReviewPolicy",
    "ReviewQueue",
    "Rubric",
    "RubricReport",
    "RunComparison",
    "Runs",
    "SavedRunError",
    "ScoreCalibration",
    "SequentialFrame",
    "SequentialRater",
    "SequentialResult",
    "ShardFailedError",
    "Solver",
    "StageScore",
    "StoppingRule",
    "Template",
    "Tournament",
    "TournamentResult",
    "TournamentView",
    "UnknownModelWarning",
    "Vote",
    "__version__",
    "agreement",
    "alignment",
    "ameta_evaluate",
    "aresume_batch",
    "aspects",
    "batches",
    "bradley_terry",
    "cancel_batch",
    "cascade",
    "compare",
    "conversations",
    "corrected_ranking",
    "datasets",
    "distributed",
    "elo",
    "estimate_quality",
    "estimates",
    "label_plan",
    "labels",
    "load",
    "load_example",
    "load_ipython_extension",
    "meta_eval",
    "meta_evaluate",
    "pairwise",
    "pipeline",
    "position_bias",
    "rate_limits",
    "resume_batch",
    "run_sync",
    "runs",
    "scoring",
    "sequential",
    "templates",
]
