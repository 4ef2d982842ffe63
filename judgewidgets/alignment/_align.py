"""judge.align(labelled): a judge of the same kind that agrees better with a person's labels, and the report of
how much better, measured on labels the alignment never used (cross-fitting; see `_crossfit`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._progress import Progress
from .._run import run_scope
from .._runner import run_sync
from ..engine import CallSession
from ._crossfit import Candidate, choose, crossfit, hit_rate, make_folds, nested_predictions, train_rows
from ._examples import choose_examples
from ._labels import LabelKind, Labels, infer_kind, read_labels
from ._report import AlignmentReport, agreement_row, confusion
from ._rules import MISSING
from ._subjects import Prompt, Subject, subject_for

LEVERS = ("rule", "examples", "template", "weights")
LEARNING_CURVE_DRAWS = 5


def align(judge: Any, labelled: pd.DataFrame, label: str = "label", **options: Any) -> Any:
    """Sync twin of `aalign`; works inside a running event loop (Jupyter)."""
    return run_sync(aalign(judge, labelled, label, **options))


async def aalign(
    judge: Any,
    labelled: pd.DataFrame,
    label: str = "label",
    *,
    kind: LabelKind | None = None,
    scale: tuple[float, float] | None = None,
    levers: Sequence[str] = LEVERS,
    examples: int = 4,
    templates: Sequence[Any] | None = None,
    folds: int = 5,
    seed: int = 0,
    confidence: float = 0.95,
    prompt_col: str = "prompt",
    response_col: str = "response",
    reference_col: str = "reference",
    progress: bool | Progress = True,
) -> Any:
    """A copy of `judge` (LLMJudge, PairwiseJudge, LLMPanel or PairwisePanel) aligned with the labels in
    `labelled[label]`, with its `alignment_report`.

    Levers, each kept only when it earns its place on held-out agreement: `"rule"` (a calibration map from the
    judge's score to P(label) — pass/fail and scores — or, for pairs, a lean and a tie margin), `"examples"`
    (`examples` labelled items shown in the fixed part of the prompt, chosen from the other folds: the ones the
    judge got most wrong, every class alike), `"template"` (the built-in templates, or `templates`), and for
    panels `"weights"`. Labels: pass/fail (`kind="pass_fail"`), a score on `scale` (`"score"`), or A / B / tie
    for pairwise judges; inferred when not given. Every item is judged once per prompt tried; the report states
    the number of calls, which the progress bar shows before the first one.
    """
    from ..pairwise import PairwisePanel
    from ..scoring import LLMPanel

    if isinstance(judge, (LLMPanel, PairwisePanel)):
        from ._panels import aalign_panel

        return await aalign_panel(
            judge,
            labelled,
            label,
            kind=kind,
            scale=scale,
            levers=levers,
            examples=examples,
            templates=templates,
            folds=folds,
            seed=seed,
            confidence=confidence,
            prompt_col=prompt_col,
            response_col=response_col,
            reference_col=reference_col,
            progress=progress,
        )
    plan = plan_alignment(
        judge,
        labelled,
        label,
        kind=kind,
        scale=scale,
        levers=levers,
        examples=examples,
        templates=templates,
        folds=folds,
        seed=seed,
        prompt_col=prompt_col,
        response_col=response_col,
        reference_col=reference_col,
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


def label_scale(judge: Any, values: pd.Series, scale: tuple[float, float] | None) -> tuple[float, float] | None:
    """The scale of score labels: as given, else the judge template's numeric scale, else [0, 1]."""
    if scale is not None:
        if len(scale) != 2 or not scale[0] < scale[1]:
            raise ConfigurationError(f"scale must be (low, high) with low < high, got {scale!r}")
        return (float(scale[0]), float(scale[1]))
    template = getattr(judge, "template", None)
    if template is not None and template.scale is not None:
        return template.scale
    return (0.0, 1.0)


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
    ) -> None:
        self.subject = subject
        self.labels = labels
        self.folds = folds
        self.levers = levers
        self.examples = examples
        self.seed = seed
        self.frame = frame
        self.prompts = subject.prompts(levers)
        n_prompts = len(self.prompts) + (1 if "examples" in levers and examples > 0 else 0)
        self.judgments = len(labels) * n_prompts
        self.calls = self.judgments * subject.calls_per_item()

    async def run(self, session: CallSession, progress: Progress) -> Outcome:
        started = time.perf_counter()
        items = self.subject.items()
        signals: dict[str, np.ndarray] = {}
        for prompt in self.prompts:
            signals[prompt.name] = await self.subject.signals(prompt.build(()), items, session, progress)
        rules = self.subject.rules(self.levers)
        base: list[Candidate] = []
        prompt_of: dict[str, Prompt] = {}
        for prompt in self.prompts:
            for rule in rules:
                base.append(Candidate(f"{prompt.name}; {rule.name}", signals[prompt.name], rule))
                prompt_of[base[-1].name] = prompt
        fold_examples: dict[int, list[int]] = {}
        candidates = list(base)
        source = self.prompts[0]
        if "examples" in self.levers and self.examples > 0:
            source = prompt_of[base[choose(base, self.labels, self.folds)].name]
            with_examples = self.subject.example_prompt(source)
            held_out = np.full(len(self.labels), np.nan)
            for fold in np.unique(self.folds):
                rows = self.example_rows(train_rows(self.folds, fold), signals[source.name], fold)
                fold_examples[int(fold)] = rows
                test = np.flatnonzero(self.folds == fold)
                judge = with_examples.build(rows)
                held_out[test] = await self.subject.signals(judge, [items[int(i)] for i in test], session, progress)
            signals[with_examples.name] = held_out
            for rule in rules:
                candidate = Candidate(f"{with_examples.name}; {rule.name}", held_out, rule)
                candidates.append(candidate)
                prompt_of[candidate.name] = with_examples
        final = candidates[choose(candidates, self.labels, self.folds)]
        final_prompt = prompt_of[final.name]
        every = np.arange(len(self.labels))
        final_examples = self.example_rows(every, signals[source.name], -1) if final_prompt.uses_examples else []
        fitted = final.rule.fit(final.signals, self.labels, every)
        aligned = self.subject.aligned(final_prompt, final_examples, fitted)
        return Outcome(self, candidates, final, final_examples, fold_examples, aligned, time.perf_counter() - started)

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
    ) -> None:
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
            rows.append({"labels": m, "accuracy": float(np.nanmean(rates)), "draws": len(rates)})
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
) -> AlignmentReport:
    """The report of an alignment from its held-out predictions (a judge's or a panel's)."""
    labels, folds, seed = plan.labels, plan.folds, plan.seed
    table = pd.DataFrame(
        [
            agreement_row("before", before, labels, confidence, seed),
            agreement_row("after", after, labels, confidence, seed),
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
    *,
    kind: LabelKind | None,
    scale: tuple[float, float] | None,
    levers: Sequence[str],
    examples: int,
    templates: Sequence[Any] | None,
    folds: int,
    seed: int,
    prompt_col: str,
    response_col: str,
    reference_col: str,
) -> Plan:
    """Every check of an alignment, before any call: the table, the labels, the levers, the judge's route."""
    from ..pairwise import PairwiseJudge

    frame = check_frame(labelled, label)
    unknown = sorted(set(levers) - set(LEVERS))
    if unknown:
        raise ConfigurationError(f"unknown lever(s) {', '.join(unknown)}; use {', '.join(LEVERS)}")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ConfigurationError(f"folds must be an integer of at least 2, got {folds!r}")
    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 0:
        raise ConfigurationError(f"examples must be a non-negative integer, got {examples!r}")
    pairwise = isinstance(judge, PairwiseJudge)
    kind = kind or infer_kind(frame[label], pairwise)
    if pairwise and kind != "pairwise":
        raise InputError(f"a pairwise judge gives A / B / tie: its labels cannot be {kind!r}")
    if not pairwise and kind == "pairwise":
        raise InputError("A / B / tie labels need a PairwiseJudge or PairwisePanel; this judge scores one response")
    labels = read_labels(
        frame[label],
        kind,
        label_scale(judge, frame[label], scale) if kind == "score" else None,
        min_labels=max(2 * folds, 10),
    )
    smallest = int(np.bincount(labels.codes).min()) if kind != "score" else 2
    if kind != "score" and smallest < 2:
        raise InputError(
            f"class {labels.classes[int(np.argmin(np.bincount(labels.codes)))]!r} has only {smallest} label: "
            "held-out agreement needs at least two of each class"
        )
    columns = {"prompt": prompt_col, "response": response_col, "reference": reference_col}
    subject = subject_for(judge, frame, labels, columns, templates)
    judge.check()
    return Plan(subject, labels, make_folds(labels, folds, seed), set(levers), examples, seed, frame)


__all__ = ["LEVERS", "Plan", "Prompt", "aalign", "align", "plan_alignment"]
