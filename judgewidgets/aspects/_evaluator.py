"""AspectEvaluator: one focused judge per aspect, all run as one LLMPanel so every call is concurrent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._batching import Batching, BatchRetry, batchable
from .._errors import ConfigurationError
from .._progress import Progress
from .._records import Item, judged_items
from .._runner import run_sync
from .._saved import provenance, reported
from ..engine import CallSession
from ..scoring._judge import LLMJudge
from ..scoring._panel import LLMPanel
from ._aspect import DEFAULT_THRESHOLD, Aspect, check_threshold, resolve_aspects
from ._result import AspectResult


class AspectEvaluator:
    """Scores independent aspects of each response, each by its own prompt, concurrently.

    `aspects` holds built-in names (relevance, accuracy, completeness, coherence, safety, tone, conciseness,
    clarity, helpfulness; any case) and `jw.Aspect` objects; None means every built-in. `judge` is a model
    string or an LLMJudge whose model and call settings every aspect's judge shares (its template and anchors
    are replaced by the aspect's; explanations are always asked for). Each aspect's 1–5 score becomes
    (s − 1) / 4 in [0, 1] and passes when it is ≥ its threshold: `thresholds[name]`, else the Aspect's own,
    else `default_threshold`. Keyword arguments go to the judge built from a model string.
    """

    def __init__(
        self,
        aspects: Sequence[str | Aspect] | None = None,
        judge: str | LLMJudge = "local",
        thresholds: Mapping[str, float] | None = None,
        default_threshold: float = DEFAULT_THRESHOLD,
        **judge_kwargs: Any,
    ) -> None:
        self.aspects = resolve_aspects(aspects)
        self.default_threshold = check_threshold(default_threshold, "default_threshold")
        names = [a.name for a in self.aspects]
        given: dict[str, float] = {}
        if thresholds is not None:
            if not isinstance(thresholds, Mapping):
                raise ConfigurationError(f"thresholds must map aspect names to numbers, got {thresholds!r}")
            lowered = {n.lower(): n for n in names}
            unknown = []
            for key, value in thresholds.items():
                name = key if key in names else lowered.get(str(key).lower())
                if name is None:
                    unknown.append(repr(key))
                    continue
                given[name] = check_threshold(value, f"threshold of aspect {name!r}")
            if unknown:
                raise ConfigurationError(
                    f"thresholds name aspect(s) {', '.join(unknown)} that are not evaluated; "
                    f"the evaluated aspects are {', '.join(names)}"
                )
        self.thresholds: dict[str, float] = {
            a.name: given.get(a.name, a.threshold if a.threshold is not None else self.default_threshold)
            for a in self.aspects
        }
        if isinstance(judge, str):
            base = LLMJudge(judge, **judge_kwargs)
        elif isinstance(judge, LLMJudge):
            if judge_kwargs:
                raise ConfigurationError(
                    f"judge options {sorted(judge_kwargs)} apply only to a judge given as a model string; "
                    "use judge.with_options(...) instead"
                )
            base = judge
        else:
            raise ConfigurationError(f"judge must be a model string or a jw.LLMJudge, got {type(judge).__name__}")
        self.judge = base
        self.panel = LLMPanel(
            [
                base.with_options(template=a.template(), name=a.name, explanations=True, weight=1.0, anchors=())
                for a in self.aspects
            ]
        )

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}≥{t:g}" for n, t in self.thresholds.items())
        return f"AspectEvaluator(judge={self.judge.model!r}, aspects=[{shown}])"

    def check(self) -> None:
        """Raise ConfigurationError now if the judge's model cannot be routed (no call is made)."""
        self.judge.check()

    def evaluate(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
        **conversations: Any,
    ) -> AspectResult:
        """Score every aspect of every response, or of every conversation (`conversations=`, or `data=` with
        `conversation_col=`, under `target=`, as `LLMJudge.score`); works in scripts and inside a running loop.
        `max_cost_usd` is the run's budget: the aspects left are recorded as not run (error `budget: ...`)."""
        return run_sync(
            self.aevaluate(
                prompts,
                responses,
                references,
                progress=progress,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
                **conversations,
            )
        )

    @batchable
    async def aevaluate(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
        **conversations: Any,
    ) -> AspectResult:
        """Async twin of `evaluate`."""
        items = judged_items(prompts, responses, references, **conversations)
        self.check()
        return reported(
            await self.aevaluate_items(items, None, progress, max_cost_usd, batch=batch, batch_retry=batch_retry)
        )

    async def aevaluate_items(
        self,
        items: Sequence[Item],
        session: CallSession | None,
        progress: bool | Progress = False,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> AspectResult:
        """Score checked items in a run of their own (with its budget), or within a caller's session (what
        pipelines use)."""
        result = await self.panel.ascore_items(
            list(items), session, progress, max_cost_usd, batch=batch, batch_retry=batch_retry
        )
        return AspectResult(
            items=list(items),
            aspects=list(self.aspects),
            thresholds=dict(self.thresholds),
            panel=result,
            provenance=provenance(self),
        )
