"""judge.align(labelled): a judge of the same kind that agrees better with a person's labels, and the report of
how much better, measured on labels the alignment never used (cross-fitting; see `_crossfit`)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._progress import NoProgress, Progress
from .._run import run_scope
from ..engine import CallSession
from ..labels._plan import LabelPlan, check_plan_labels
from ._crossfit import Candidate, choose, crossfit, hit_rate, make_folds, nested_predictions, train_rows
from ._examples import choose_examples
from ._labels import LabelKind, Labels, infer_kind, read_labels
from ._reflect import pick_cases, rewrite
from ._report import AlignmentReport, agreement_row, confusion
from ._rules import MISSING
from ._subject import Prompt, Reflector, Subject

LEVERS = ("rule", "examples", "template", "weights")
LEARNING_CURVE_DRAWS = 5


def align(judge: Any, labelled: pd.DataFrame, label: str = "label", **options: Any) -> Any:
    """`judge.align(labelled, label, **options)` for any judge that aligns (LLMJudge, LLMPanel, PairwiseJudge,
    PairwisePanel); see `AlignOptions` for the options."""
    return judge.align(labelled, label, **options)


async def aalign(judge: Any, labelled: pd.DataFrame, label: str = "label", **options: Any) -> Any:
    """Async twin of `align`."""
    return await judge.aalign(labelled, label, **options)


class AlignOptions(TypedDict, total=False):
    """What every `align()` takes besides the labelled table and its label column.

    `levers`: each kept only when it earns its place on held-out agreement — `"rule"` (a calibration map from the
    judge's score to P(label) for pass/fail and scores; a lean and a tie margin for pairs), `"examples"`
    (`examples` labelled items in the fixed part of the prompt, chosen from the other folds: the ones the judge
    got most wrong, every class alike), `"template"` (the built-in templates, or `templates`), `"weights"` (a
    panel's members weighted by their held-out agreement). With `reflector` (a stronger model string or a
    `jw.Generator`) the judge's instruction is also rewritten from the training folds' disagreements. `kind`:
    "pass_fail", "score" (on `scale`, by default the template's) or "pairwise", inferred when not given.
    `folds`-fold cross-fitting with `seed`; intervals at `confidence`. Every item is judged once per prompt
    tried; the progress bar names the number of calls before the first one, and the report keeps it.

    `plan`: the `jw.label_plan` that chose the labelled items (the table's index names them, as
    `LabelQueue.labels` does). A plan seeks the items the judge is unsure of, which is where labels teach an
    alignment most, but agreement on those is lower than on the items at large: the report's before / after
    agreement then weighs each held-out label by 1 / the probability the plan drew it (labels given by hand,
    outside the draw, are used to align but not to measure), so it estimates the agreement over every item.
    """

    kind: LabelKind | None
    scale: tuple[float, float] | None
    levers: Sequence[str]
    examples: int
    folds: int
    seed: int
    confidence: float
    progress: bool | Progress
    plan: Any


async def aalign_subject(
    judge: Any,
    labelled: pd.DataFrame,
    label: str,
    make_subject: Callable[[pd.DataFrame, Labels], Subject],
    *,
    pairwise: bool,
    scale_of_judge: tuple[float, float] | None = None,
    reflector: Reflector | None = None,
    confidence: float = 0.95,
    progress: bool | Progress = True,
    **options: Any,
) -> Any:
    """Plan, run and report one judge's alignment (what each judge kind's `aalign` calls)."""
    plan = plan_alignment(
        judge,
        labelled,
        label,
        make_subject,
        pairwise=pairwise,
        scale_of_judge=scale_of_judge,
        reflector=reflector,
        **options,
    )
    async with run_scope(progress, plan.judgments, f"aligning: {plan.calls} calls") as run:
        outcome = await plan.run(run.session, run.progress)
    aligned = outcome.aligned
    aligned.alignment_report = outcome.report(confidence)
    return aligned


def check_frame(labelled: Any, label: str) -> pd.DataFrame:
    if not isinstance(labelled, pd.DataFrame):
        raise InputError(f"labelled must be a DataFrame with a {label!r} column, got {type(labelled).__name__}")
    if label not in labelled.columns:
        raise InputError(f"the labelled table has no column {label!r}; found: {', '.join(map(str, labelled.columns))}")
    return labelled.reset_index(drop=True)


def label_scale(scale: tuple[float, float] | None, scale_of_judge: tuple[float, float] | None) -> tuple[float, float]:
    """The scale of score labels: as given, else the judge's own numeric scale, else [0, 1]."""
    if scale is not None:
        if len(scale) != 2 or not scale[0] < scale[1]:
            raise ConfigurationError(f"scale must be (low, high) with low < high, got {scale!r}")
        return (float(scale[0]), float(scale[1]))
    return scale_of_judge or (0.0, 1.0)


class Plan:
    """An alignment ready to run: the checked labels, their folds, the prompts to try and the calls they take."""

    def __init__(
        self,
        subject: Subject,
        labels: Labels,
        folds: np.ndarray,
        levers: set[str],
        examples: int,
        seed: int,
        frame: pd.DataFrame,
        reflector: Reflector | None = None,
        item_weights: np.ndarray | None = None,
        plan_id: str | None = None,
    ) -> None:
        self.subject = subject
        self.item_weights = item_weights
        self.plan_id = plan_id
        self.reflector = reflector
        self.reflection_errors: list[str] = []
        self.labels = labels
        self.folds = folds
        self.levers = levers
        self.examples = examples
        self.seed = seed
        self.frame = frame
        self.prompts = subject.prompts(levers)
        n_prompts = len(self.prompts) + (1 if "examples" in levers and examples > 0 else 0) + (reflector is not None)
        self.judgments = len(labels) * n_prompts
        folds_count = len(np.unique(folds))
        self.reflections = folds_count + 1 if reflector is not None else 0
        self.calls = self.judgments * subject.calls_per_item() + self.reflections

    async def run(self, session: CallSession, progress: Progress) -> Outcome:
        started = time.perf_counter()
        items = self.subject.items()
        signals: dict[str, np.ndarray] = {}
        for prompt in self.prompts:
            signals[prompt.name] = await self.subject.signals(prompt.build(()), items, session, progress)
        rules = self.subject.rules(self.levers)
        candidates: list[Candidate] = []
        prompt_of: dict[str, Prompt] = {}

        def add(prompt: Prompt) -> None:
            for rule in rules:
                candidates.append(Candidate(f"{prompt.name}; {rule.name}", signals[prompt.name], rule))
                prompt_of[candidates[-1].name] = prompt

        for prompt in self.prompts:
            add(prompt)
        source = prompt_of[candidates[choose(candidates, self.labels, self.folds)].name]
        baseline = signals[source.name]
        every = np.arange(len(self.labels))
        fold_examples: dict[int, list[int]] = {}
        notes: dict[str, Any] = {}
        if "examples" in self.levers and self.examples > 0:
            with_examples = self.subject.example_prompt(source)

            async def taught(fold: int) -> Any:
                fold_examples[fold] = self.example_rows(train_rows(self.folds, fold), baseline, fold)
                return with_examples.build(fold_examples[fold])

            signals[with_examples.name] = await self.held_out(taught, session, progress)
            add(with_examples)
        instructions: dict[int, str | None] = {}
        if self.reflector is not None:
            judge = source.build(())
            own = self.subject.instruction(judge)

            async def instructed(fold: int) -> Any:
                instructions[fold] = await self.reflect(own, train_rows(self.folds, fold), baseline, fold, session)
                text = instructions[fold]
                return judge if text is None else self.subject.instructed(judge, text)

            name = f"{source.name} + rewritten instructions"
            signals[name] = await self.held_out(instructed, session, progress)
            add(Prompt(name, f"{source.description}, instructions rewritten by {self.reflector.model}", source.build))
            notes["instructions_by_fold"] = instructions
        final = candidates[choose(candidates, self.labels, self.folds)]
        final_prompt = prompt_of[final.name]
        final_examples = self.example_rows(every, baseline, -1) if final_prompt.uses_examples else []
        if final_prompt.name.endswith("rewritten instructions"):
            judge = source.build(())
            text = await self.reflect(self.subject.instruction(judge), every, baseline, -1, session)
            notes["instruction"] = text
            rewritten = judge if text is None else self.subject.instructed(judge, text)
            final_prompt = Prompt(final_prompt.name, final_prompt.description, lambda rows: rewritten)
        fitted = final.rule.fit(final.signals, self.labels, every)
        aligned = self.subject.aligned(final_prompt, final_examples, fitted)
        return Outcome(
            self, candidates, final, final_examples, fold_examples, aligned, time.perf_counter() - started, notes
        )

    async def held_out(
        self, judge_for: Callable[[int], Awaitable[Any]], session: CallSession, progress: Progress
    ) -> np.ndarray:
        """Signals of every item from the judge built for its fold (from the other folds' labels only)."""
        items = self.subject.items()
        out = np.full(len(self.labels), np.nan)
        for fold in np.unique(self.folds):
            judge = await judge_for(int(fold))
            test = np.flatnonzero(self.folds == fold)
            out[test] = await self.subject.signals(judge, [items[int(i)] for i in test], session, progress)
        return out

    async def reflect(
        self, instruction: str, rows: np.ndarray, baseline: np.ndarray, fold: int, session: CallSession
    ) -> str | None:
        """The reflector's instruction from the judge's (dis)agreements on `rows`; None when it failed."""
        assert self.reflector is not None
        rule = self.subject.rules(set())[0].fit(baseline, self.labels, rows)
        predicted = rule.predict(baseline)
        names = [str(c) for c in self.labels.classes]
        picked = pick_cases(rows, predicted, self.labels.codes, self.subject.lengths(), self.seed + fold + 1)
        cases = [
            (
                self.subject.material(r),
                names[predicted[r]] if predicted[r] != MISSING else "no verdict",
                names[self.labels.codes[r]],
            )
            for r in picked
        ]
        text, error = await rewrite(self.reflector, instruction, cases, session, NoProgress())
        if error is not None:
            self.reflection_errors.append(error)
        return text

    def example_rows(self, rows: np.ndarray, baseline: np.ndarray, fold: int) -> list[int]:
        """Examples for a fold's prompt, chosen among `rows` only (the other folds' labels)."""
        return choose_examples(rows, self.labels, baseline, self.subject.lengths(), self.examples, self.seed + fold + 1)


class Outcome:
    """What a run produced: every candidate's held-out signals, the final choice and the aligned judge."""

    def __init__(
        self,
        plan: Plan,
        candidates: list[Candidate],
        final: Candidate,
        final_examples: list[int],
        fold_examples: dict[int, list[int]],
        aligned: Any,
        seconds: float,
        notes: dict[str, Any] | None = None,
    ) -> None:
        self.notes = notes or {}
        self.plan = plan
        self.candidates = candidates
        self.final = final
        self.final_examples = final_examples
        self.fold_examples = fold_examples
        self.aligned = aligned
        self.seconds = seconds

    def predictions(self) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """(before, after, the candidate chosen per fold): before is the judge as given with its own rule."""
        labels, folds = self.plan.labels, self.plan.folds
        before = crossfit(self.candidates[0], labels, folds)
        after, chosen = nested_predictions(self.candidates, labels, folds)
        return before, after, chosen

    def held_out_values(self) -> np.ndarray:
        """Each item's value under the candidate and rule chosen without its fold: the calibrated score (pass/fail
        and scores) or the predicted class (pairs); what a panel combines."""
        labels, folds = self.plan.labels, self.plan.folds
        _, _, chosen = self.predictions()
        out = np.full(len(labels), np.nan)
        for i, fold in enumerate(np.unique(folds)):
            candidate = self.candidates[chosen[i]]
            rule = candidate.rule.fit(candidate.signals, labels, np.flatnonzero(folds != fold))
            test = np.flatnonzero(folds == fold)
            out[test] = rule.values(candidate.signals[test])
        return out

    def report(self, confidence: float) -> AlignmentReport:
        _labels, _folds = self.plan.labels, self.plan.folds
        before, after, chosen = self.predictions()
        return build_report(
            self.plan,
            self.candidates,
            self.final,
            before,
            after,
            chosen,
            confidence,
            fold_examples=self.fold_examples,
            final_examples=self.final_examples,
            learning_curve=self.learning_curve(),
            seconds=self.seconds,
            notes=self.notes
            | ({"reflection_errors": self.plan.reflection_errors} if self.plan.reflection_errors else {}),
        )

    def learning_curve(self) -> pd.DataFrame:
        """Held-out accuracy when the rules and the choice of candidate are fitted on m labels (m growing), over
        seeded draws; the prompts' examples came from every other fold, so this curve is of the fitting only."""
        labels, folds = self.plan.labels, self.plan.folds
        n = len(labels)
        sizes = sorted({m for m in (10, 20, 40, 80, 160, 320) if m < n} | {n})
        rng = np.random.default_rng(self.plan.seed)
        rows = []
        for m in sizes:
            rates = []
            for _ in range(LEARNING_CURVE_DRAWS if m < n else 1):
                subset = np.zeros(n, dtype=bool)
                subset[rng.choice(n, size=m, replace=False)] = True
                predicted = np.full(n, MISSING)
                for fold in np.unique(folds):
                    within = subset & (folds != fold)
                    if len(np.unique(labels.codes[within])) < 2:
                        continue
                    best = self.candidates[choose(self.candidates, labels, folds, within)]
                    rule = best.rule.fit(best.signals, labels, np.flatnonzero(within))
                    test = np.flatnonzero(folds == fold)
                    predicted[test] = rule.predict(best.signals[test])
                rates.append(hit_rate(predicted, labels.codes))
            measured = [r for r in rates if not np.isnan(r)]  # a draw of one class per fold predicts nothing
            accuracy = float(np.mean(measured)) if measured else float("nan")
            rows.append({"labels": m, "accuracy": accuracy, "draws": len(rates)})
        return pd.DataFrame(rows)


def build_report(
    plan: Plan,
    candidates: Sequence[Candidate],
    final: Candidate,
    before: np.ndarray,
    after: np.ndarray,
    chosen: Sequence[int],
    confidence: float,
    *,
    fold_examples: dict[int, list[int]],
    final_examples: list[int],
    learning_curve: pd.DataFrame,
    seconds: float,
    notes: dict[str, Any] | None = None,
) -> AlignmentReport:
    """The report of an alignment from its held-out predictions (a judge's or a panel's)."""
    labels, folds, seed = plan.labels, plan.folds, plan.seed
    table = pd.DataFrame(
        [
            agreement_row("before", before, labels, confidence, seed, plan.item_weights),
            agreement_row("after", after, labels, confidence, seed, plan.item_weights),
        ]
    )
    levers = pd.DataFrame(
        [
            agreement_row(c.name, crossfit(c, labels, folds), labels, confidence, seed) | {"kept": c is final}
            for c in candidates
        ]
    ).rename(columns={"rule": "candidate"})
    per_fold = pd.DataFrame(
        [
            {
                "fold": int(f),
                "n": int((folds == f).sum()),
                "before": hit_rate(before[folds == f], labels.codes[folds == f]),
                "after": hit_rate(after[folds == f], labels.codes[folds == f]),
                "chosen": candidates[chosen[i]].name,
                "examples": fold_examples.get(int(f), []),
            }
            for i, f in enumerate(np.unique(folds))
        ]
    )
    frame = plan.frame
    wrong = np.flatnonzero((after != MISSING) & (after != labels.codes))
    names = [str(c) for c in labels.classes]
    disagreements = frame.iloc[wrong].assign(
        judged=[names[after[i]] for i in wrong],
        judge_signal=[final.signals[i] for i in wrong],
    )
    chosen_settings: dict[str, Any] = {
        "candidate": final.name,
        "rule": repr(final.rule.fit(final.signals, labels, np.arange(len(labels)))),
        "examples": final_examples,
        **({"weighted_by": plan.plan_id} if plan.plan_id is not None else {}),
        **(notes or {}),
    }
    return AlignmentReport(
        table=table,
        levers=levers,
        per_fold=per_fold,
        confusion={"before": confusion(before, labels), "after": confusion(after, labels)},
        learning_curve=learning_curve,
        disagreements=disagreements,
        chosen=chosen_settings,
        calls=plan.calls,
        seconds=seconds,
        kind=labels.kind,
        folds=len(np.unique(folds)),
    )


def plan_alignment(
    judge: Any,
    labelled: pd.DataFrame,
    label: str,
    make_subject: Callable[[pd.DataFrame, Labels], Subject],
    *,
    pairwise: bool,
    scale_of_judge: tuple[float, float] | None = None,
    reflector: Reflector | None = None,
    kind: LabelKind | None = None,
    scale: tuple[float, float] | None = None,
    levers: Sequence[str] = LEVERS,
    examples: int = 4,
    folds: int = 5,
    seed: int = 0,
    plan: Any = None,
) -> Plan:
    """Every check of an alignment, before any call: the table, the labels, the levers, the judge's route."""
    item_weights = plan_weights(labelled, label, plan)
    frame = check_frame(labelled, label)
    unknown = sorted(set(levers) - set(LEVERS))
    if unknown:
        raise ConfigurationError(f"unknown lever(s) {', '.join(unknown)}; use {', '.join(LEVERS)}")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ConfigurationError(f"folds must be an integer of at least 2, got {folds!r}")
    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 0:
        raise ConfigurationError(f"examples must be a non-negative integer, got {examples!r}")
    kind = kind or infer_kind(frame[label], pairwise)
    if pairwise and kind != "pairwise":
        raise InputError(f"a pairwise judge gives A / B / tie: its labels cannot be {kind!r}")
    if not pairwise and kind == "pairwise":
        raise InputError("A / B / tie labels need a PairwiseJudge or PairwisePanel; this judge scores one response")
    labels = read_labels(
        frame[label],
        kind,
        label_scale(scale, scale_of_judge) if kind == "score" else None,
        min_labels=max(2 * folds, 10),
    )
    subject = make_subject(frame, labels)
    judge.check()
    return Plan(
        subject,
        labels,
        make_folds(labels, folds, seed),
        set(levers),
        examples,
        seed,
        frame,
        reflector,
        item_weights,
        None if plan is None else plan.id,
    )


def plan_weights(labelled: Any, label: str, plan: Any) -> np.ndarray | None:
    """Each labelled row's weight for measuring agreement, 1 / the probability `plan` drew its item (0 for an item
    it did not draw: labelled by hand), or None without a plan; InputError when the table's index does not name
    the plan's items or its labels were drawn by another plan."""
    if plan is None:
        return None
    if not isinstance(plan, LabelPlan):
        raise InputError(f"plan must be the LabelPlan that chose the labelled items, got {type(plan).__name__}")
    if not isinstance(labelled, pd.DataFrame):
        return None  # check_frame says what is wrong
    check_plan_labels(labelled, plan)
    known = labelled.index.isin(plan.table["item"])
    if not known.all():
        raise InputError(
            f"the labelled table's index must name plan {plan.id}'s items (as LabelQueue.labels does); "
            f"{int((~known).sum())} row(s) name none: {list(labelled.index[~known][:5])}"
        )
    probabilities = plan.probabilities()
    drawn = set(plan.items)
    weights = np.array([1.0 / probabilities[i] if i in drawn else 0.0 for i in labelled.index])
    if int((weights > 0).sum()) < 2:
        raise InputError(f"fewer than 2 labelled items were drawn by plan {plan.id}: nothing to measure on")
    return weights


__all__ = ["LEVERS", "AlignOptions", "Plan", "aalign", "aalign_subject", "align", "plan_alignment"]
