"""LLMPanel: several judges scoring the same items concurrently, with aggregated scores."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._batching import Batching, BatchRetry, batchable
from .._errors import ConfigurationError, InputError
from .._failures import is_not_run
from .._progress import Progress
from .._records import Item, Vote, build_items, judged_items
from .._run import run_scope
from .._runner import run_sync
from .._saved import provenance, reported
from ..conversations import Target, check_target
from ..engine import CallSession
from ..templates import Template
from ._aggregate import check_weights
from ._commit import CommitFirst
from ._cost import CostEstimate, JudgeCostEstimate, unpriced
from ._generate import Generator
from ._judge import Judge, LLMJudge
from ._results import PanelResult

if TYPE_CHECKING:
    import pandas as pd

    from ..alignment import AlignmentReport


class LLMPanel:
    """A panel of judges. `judges` holds model strings or judges; names default to judge_1..judge_n.

    `scoring_templates` gives one template per judge (uqlm's argument); otherwise judges built from model
    strings use `template`. `weights` (one per judge) adds a `weighted_avg` column; by default the judges' own
    weights are used when any differs from 1. Keyword arguments go to judges built from model strings.
    `target` says what of a conversation every judge judges (one setting for the panel, so all judge the same
    items); the default (None) is the judges' own when they agree, else the last turn.
    `commit_first` and `solver` (see `LLMJudge`), when given, apply to every judge in place of its own: each answers
    first with its own model, or all with one `solver` (then one answer per question serves the whole panel). A
    judge that cannot commit first (not an LLMJudge) is a ConfigurationError.
    """

    def __init__(
        self,
        judges: Sequence[str | LLMJudge | Judge],
        scoring_templates: Sequence[str | Template] | None = None,
        template: str | Template = "true_false_uncertain",
        weights: Sequence[float] | None = None,
        explanations: bool = False,
        target: Target | None = None,
        *,
        commit_first: CommitFirst = None,
        solver: Any = None,
        **judge_kwargs: Any,
    ) -> None:
        committing: dict[str, Any] = {}
        if commit_first is not None or solver is not None:  # the panel's settings replace the judges' own
            committing = {"commit_first": commit_first, "solver": solver}
        self.target: Target | None = None if target is None else check_target(target, error=ConfigurationError)
        if isinstance(judges, (str, LLMJudge)):
            judges = [judges]
        judges = list(judges)
        if not judges:
            raise ConfigurationError("a panel needs at least one judge")
        if scoring_templates is not None and len(scoring_templates) != len(judges):
            raise ConfigurationError(f"{len(scoring_templates)} scoring_templates given for {len(judges)} judges")
        built: list[Judge] = []
        for i, judge in enumerate(judges):
            chosen = scoring_templates[i] if scoring_templates is not None else None
            if isinstance(judge, str):
                judge = LLMJudge(
                    judge, template=chosen or template, explanations=explanations, **committing, **judge_kwargs
                )
            elif isinstance(judge, LLMJudge):
                changes: dict[str, Any] = dict(committing)
                if chosen is not None:
                    changes["template"] = chosen
                if explanations and not judge.explanations:
                    changes["explanations"] = True
                if changes:
                    judge = judge.with_options(**changes)
            elif committing:
                raise ConfigurationError(
                    f"judge {i} is a {type(judge).__name__}, which cannot commit first; give model strings or "
                    "LLMJudges with commit_first= / solver=, or set them on the judges that can"
                )
            built.append(as_judge(judge, i))
        self.judges: list[Judge] = built
        self.names = [j.name or f"judge_{i + 1}" for i, j in enumerate(built)]
        duplicated = sorted({n for n in self.names if self.names.count(n) > 1})
        if duplicated:
            raise ConfigurationError(f"judge names must be unique; repeated: {', '.join(duplicated)}")
        if weights is not None:
            self.weights: list[float] | None = check_weights(weights, len(built))
        elif any(j.weight != 1.0 for j in built):
            self.weights = check_weights([j.weight for j in built], len(built))
        else:
            self.weights = None
        self.explaining = [n for n, j in zip(self.names, built) if getattr(j, "explanations", False)]
        self.alignment_report: AlignmentReport | None = None

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(j, 'model', type(j).__name__)!r}" for n, j in zip(self.names, self.judges))
        return f"LLMPanel({inner})"

    @property
    def default_target(self) -> Target:
        """What of a conversation the panel judges when a call does not say: its `target`, else the one its judges
        agree on, else the last turn."""
        if self.target is not None:
            return self.target
        own = {check_target(getattr(j, "default_target", None)) for j in self.judges}
        return own.pop() if len(own) == 1 else "last_turn"

    def check(self) -> None:
        """Raise ConfigurationError now for any judge whose model cannot be routed."""
        for judge in self.judges:
            judge.check()

    def align(self, labelled: pd.DataFrame, label: str = "label", **options: Any) -> LLMPanel:
        """A panel of aligned members (pass/fail or score labels), weighted by held-out agreement when that
        helps, carrying its `alignment_report` (each member's own in `alignment_report.members`). Options as
        `LLMJudge.align`'s; the lever `"weights"` weighs the members."""
        return run_sync(self.aalign(labelled, label, **options))

    async def aalign(self, labelled: pd.DataFrame, label: str = "label", **options: Any) -> LLMPanel:
        """Async twin of `align`."""
        from ._alignment import aalign_panel

        return await aalign_panel(self, labelled, label, **options)

    def estimate_cost(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        batch: bool = False,
        **inputs: Any,
    ) -> CostEstimate:
        """Tokens and dollars every judge would spend on the batch (no call is made); `inputs` as `score`'s;
        `batch=True`: at the batch APIs' price."""
        items = judged_items(prompts, responses, references, default_target=self.default_target, **inputs)
        estimate = CostEstimate(judges=self.estimate_items(items))
        return estimate.at_batch_price() if batch else estimate

    def estimate_items(self, items: Sequence[Item]) -> list[JudgeCostEstimate]:
        """Every judge's estimate for checked items, named as in the panel (no call is made)."""
        return [j.estimate_items(items, n) for j, n in zip(self.judges, self.names)]

    # --- scoring ---------------------------------------------------------------------------------------------

    def score(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        conversations: Any = None,
        data: pd.DataFrame | None = None,
        conversation_col: str | None = None,
        prompt_col: str = "prompt",
        response_col: str = "response",
        reference_col: str | None = None,
        target: Target | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> PanelResult:
        """Every judge scores every response, or every conversation under `target` (as `LLMJudge.score`); works
        in scripts and inside a running loop (Jupyter). `max_cost_usd` is the run's budget over every judge: no
        call starts that could take the spend past it, and the votes left are recorded as not run (error
        `budget: ...`; `summary()` counts them), never raised. `batch=True`: every judge's calls through the
        providers' batch APIs at half the price (see `LLMJudge.score`)."""
        return run_sync(
            self.ascore(
                prompts,
                responses,
                references,
                conversations=conversations,
                data=data,
                conversation_col=conversation_col,
                prompt_col=prompt_col,
                response_col=response_col,
                reference_col=reference_col,
                target=target,
                progress=progress,
                max_cost_usd=max_cost_usd,
                batch=batch,
                batch_retry=batch_retry,
            )
        )

    @batchable
    async def ascore(
        self,
        prompts: Sequence[str] | str | None = None,
        responses: Sequence[str] | str | None = None,
        references: Sequence[str | None] | None = None,
        *,
        conversations: Any = None,
        data: pd.DataFrame | None = None,
        conversation_col: str | None = None,
        prompt_col: str = "prompt",
        response_col: str = "response",
        reference_col: str | None = None,
        target: Target | None = None,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> PanelResult:
        """Async twin of `score`."""
        items = judged_items(
            prompts,
            responses,
            references,
            conversations=conversations,
            data=data,
            conversation_col=conversation_col,
            prompt_col=prompt_col,
            response_col=response_col,
            reference_col=reference_col,
            target=target,
            default_target=self.default_target,
        )
        self.check()
        self.check_items(items)
        return reported(
            await self.ascore_items(items, None, progress, max_cost_usd, batch=batch, batch_retry=batch_retry)
        )

    def check_items(self, items: Sequence[Item]) -> None:
        """InputError now for an item some judge cannot grade as configured (see `LLMJudge.check_items`)."""
        for judge in self.judges:
            check = getattr(judge, "check_items", None)
            if callable(check):
                check(items)

    async def ascore_items(
        self,
        items: list[Item],
        session: CallSession | None,
        progress: bool | Progress,
        max_cost_usd: float | None = None,
        batch: bool | Batching = False,
        batch_retry: BatchRetry | None = None,
    ) -> PanelResult:
        """Score checked items, in a run of their own (with its budget) or within a caller's `session`."""
        total = len(items) * len(self.judges)
        async with run_scope(
            progress,
            total,
            f"panel of {len(self.judges)} judges",
            session=session,
            max_cost_usd=max_cost_usd,
            makers=[self],
            batch=batch,
            batch_retry=batch_retry,
        ) as run:
            per_judge = await asyncio.gather(
                *(judge.ajudge(items, run.session, run.progress, name) for judge, name in zip(self.judges, self.names))
            )
        votes: list[Vote] = []
        for name, judge_votes in zip(self.names, per_judge):
            votes.extend(v if v.judge == name else v.model_copy(update={"judge": name}) for v in judge_votes)
        return self._result(items, votes)

    def _result(self, items: list[Item], votes: list[Vote]) -> PanelResult:
        """This panel's result of `votes` on `items`: its judges' names, weights and settings."""
        return PanelResult(
            items=items,
            vote_list=votes,
            judges=self.names,
            weights=self.weights,
            explaining=self.explaining,
            provenance=provenance(self),
        )

    def generate_and_score(
        self,
        prompts: Sequence[str] | str,
        llm: str | Generator = "local",
        *,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        **generation_kwargs: Any,
    ) -> PanelResult:
        """Generate a response to every prompt with `llm`, then score them (uqlm's generate_and_score).
        `max_cost_usd` is one budget over the generations and the judgments: a prompt whose generation was not
        run is scored NaN with the error `budget: ...`."""
        return run_sync(
            self.agenerate_and_score(prompts, llm, progress=progress, max_cost_usd=max_cost_usd, **generation_kwargs)
        )

    async def agenerate_and_score(
        self,
        prompts: Sequence[str] | str,
        llm: str | Generator = "local",
        *,
        progress: bool | Progress = True,
        max_cost_usd: float | None = None,
        **generation_kwargs: Any,
    ) -> PanelResult:
        """Async twin of `generate_and_score`. Prompts whose generation failed are scored NaN with the error."""
        if isinstance(prompts, str):
            prompts = [prompts]
        build_items(prompts, [""] * len(list(prompts)))  # validates the prompts
        generator = llm if isinstance(llm, Generator) else Generator(llm, **generation_kwargs)
        self.check()
        async with run_scope(
            progress,
            len(prompts),
            f"generating ({generator.model})",
            max_cost_usd=max_cost_usd,
            makers=[self, generator],
        ) as run:
            generated = await generator.agenerate(list(prompts), run.session, run.progress)
        ok = [i for i, (text, _) in enumerate(generated) if text is not None]
        if not ok and not any(is_not_run(error) for _, error in generated):
            raise InputError(f"every generation failed; first error: {generated[0][1]}")
        votes: list[Vote] = []
        if ok:
            scored = await self.ascore_items(
                [Item(prompt=prompts[i], response=generated[i][0] or "") for i in ok], run.session, progress
            )
            votes = [v.model_copy(update={"item": ok[v.item]}) for v in scored.vote_list]
        votes += [
            Vote(item=i, judge=name, score=float("nan"), error=error)
            for i, (text, error) in enumerate(generated)
            if text is None
            for name in self.names
        ]
        votes.sort(key=lambda v: (v.item, self.names.index(v.judge)))
        items = [Item(prompt=p, response=text or "") for p, (text, _) in zip(prompts, generated)]
        return reported(self._result(items, votes))


def as_judge(judge: object, position: int = 0) -> Judge:
    """`judge` in the Judge role: a Judge as it is; a minimal judge (a name, a weight and an async
    `ajudge(items, session, progress)`) completed with what it leaves out, so that a panel treats every judge
    alike: its own `check()` when it has one (else nothing to check), its own `estimate_items` when it has one
    (else its calls counted and unpriced). ConfigurationError for anything else."""
    if isinstance(judge, Judge):
        return judge
    if all(hasattr(judge, member) for member in ("name", "weight", "ajudge")):
        return MinimalJudge(judge)
    raise ConfigurationError(
        f"judge {position} is a {type(judge).__name__}; give a model string, an LLMJudge, or an object with "
        "name, weight and async ajudge(items, session, progress)"
    )


class MinimalJudge:
    """A minimal judge completed to the Judge role (see `as_judge`); every other attribute is the judge's own."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge

    def __getattr__(self, attribute: str) -> Any:
        if "judge" not in self.__dict__:  # being unpickled: nothing to forward to yet
            raise AttributeError(attribute)
        return getattr(self.__dict__["judge"], attribute)

    def __repr__(self) -> str:
        return repr(self.judge)

    @property
    def name(self) -> str | None:
        return self.judge.name

    @property
    def weight(self) -> float:
        return float(self.judge.weight)

    def check(self) -> None:
        check = getattr(self.judge, "check", None)
        if callable(check):
            check()

    def estimate_items(self, items: Sequence[Item], name: str | None = None) -> JudgeCostEstimate:
        estimate = getattr(self.judge, "estimate_items", None)
        if callable(estimate):
            return estimate(items, name)
        kind = type(self.judge).__name__
        return unpriced(name or self.name or kind, str(getattr(self.judge, "model", kind)), len(items))

    async def ajudge(
        self, items: Sequence[Item], session: CallSession, progress: Progress, name: str | None = None
    ) -> list[Vote]:
        """The judge's own votes (a panel relabels them with the judge's name in the panel)."""
        return list(await self.judge.ajudge(items, session, progress))
