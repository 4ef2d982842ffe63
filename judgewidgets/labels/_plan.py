"""A label plan: which items a person should label, and with what probability, so a quality estimate is as
narrow as the label budget allows (active statistical inference).

Zrnic & Candès (2024, "Active statistical inference") label item i with a probability π_i that grows with the
model's uncertainty and weight each label by 1/π_i, which keeps the estimate unbiased; π_i ∝ sqrt(E[(y − f)² |
uncertainty]) minimises its variance for a budget (Neyman allocation). Gligorić, Zrnic, Lee, Candès & Jurafsky
(NAACL 2025) drive it with an LLM annotator's own confidence. Here the expected squared error of the judge's verdict
is read as p(1 − p) from its probability-like score p (the judge's own probabilities, calibrated ones after
`align`; a panel's mean score, whose p̄(1 − p̄) includes the judges' disagreement; a pairwise verdict's P(a better),
or the mean of its two orders). Three guards keep the plan honest when that uncertainty is wrong:

- no item is taken as surer than 99 % (p(1 − p) ≥ 0.01), so a clipped score of 1.0 is not "certain";
- a share of the budget (`floor`, at least) is spread evenly over all items, so every item can be drawn and no
  label weighs more than a few average ones;
- that share grows until, should the uncertainty turn out to mean nothing, the interval would be at most
  `max_cost` wider than with the same number of labels drawn uniformly (the variance of a weighted mean with
  weights unrelated to the errors, over a uniform draw's: (mean(1/π) − 1) / (N/n − 1)). A plan whose uncertainty
  barely varies (predicted saving under 5 %) is a uniform draw.

The drawn items are a sequential Poisson sample (Ohlsson 1998): a seeded uniform key U_i per item, items ranked by
U_i / π_i, the first `budget` drawn, so any first k of them are themselves a sample with probabilities ∝ π (a
person can stop early) and a larger budget with the same seed extends the same order.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._errors import ConfigurationError, InputError
from .._saved import Dump, Keepable

__all__ = [
    "DESIGNS",
    "MIN_SAVING",
    "MIN_UNCERTAINTY",
    "PLAN_COLUMNS",
    "LabelPlan",
    "Metric",
    "check_budget_options",
    "check_plan_labels",
    "draw_order",
    "make_plan",
    "plan_probabilities",
]

Metric = Literal["mean", "pass_rate", "win_rate"]

MIN_UNCERTAINTY = 0.01  # p(1 − p) at p = 0.99: no judge is taken to be surer than that
MIN_SAVING = 0.05  # a plan predicted to save less than this share of labels draws uniformly instead
DESIGNS = ("active", "uniform")
PLAN_COLUMNS = ["item", "score", "uncertainty", "probability", "order", "drawn"]
_TAKE_ALL = 1.0 - 1e-12


class LabelPlan(Keepable):
    """Which items to label, in which order, and the probability each was drawn with.

    `table`: one row per judged item: item (its id in the judge's scores), score (the judge's verdict on the
    metric's 0–1 scale), uncertainty (the expected squared error the plan assumed), probability (of being drawn),
    order (1 = label first; every item is ranked, the drawn ones first) and drawn. `items`: the drawn items in
    the order to label them. `design` is "active" (probabilities follow the uncertainty) or "uniform" (every item
    alike: the uncertainty did not vary enough to pay); `floor` is the share of the budget spread evenly over all
    items; `predicted_saving` the share of labels the plan saves against a uniform draw if its uncertainty is
    right. `id` names the plan on every label drawn with it. Build one with `jw.label_plan`."""

    def __init__(
        self,
        table: pd.DataFrame,
        *,
        metric: Metric,
        pass_threshold: float,
        budget: int,
        seed: int,
        design: str,
        floor: float,
        max_cost: float,
        predicted_saving: float,
        notes: Sequence[str] = (),
    ) -> None:
        self.table = table.reset_index(drop=True)
        self.metric: Metric = metric
        self.pass_threshold = float(pass_threshold)
        self.budget = int(budget)
        self.seed = int(seed)
        self.design = design
        self.floor = float(floor)
        self.max_cost = float(max_cost)
        self.predicted_saving = float(predicted_saving)
        self.notes = tuple(notes)
        self.id = _plan_id(self.table, self.seed, self.budget)

    # --- what the plan says ----------------------------------------------------------------------------

    @property
    def items(self) -> list[Hashable]:
        """The drawn items, in the order to label them."""
        drawn = self.table[self.table["drawn"]].sort_values("order")
        return list(drawn["item"])

    @property
    def n_items(self) -> int:
        """Items the plan covers (the judged ones with a score)."""
        return int(self.table["order"].notna().sum())

    def probabilities(self) -> pd.Series:
        """The probability each item was drawn with, on the items' ids."""
        return pd.Series(self.table["probability"].to_numpy(), index=pd.Index(self.table["item"]), name="probability")

    def probability(self, item: Hashable) -> float:
        """The probability `item` was drawn with (KeyError for an item the plan does not know)."""
        return float(self.probabilities()[item])

    def scores(self) -> pd.Series:
        """The judge's verdicts on the metric's scale (what the estimate uses), on the items' ids."""
        return pd.Series(self.table["score"].to_numpy(), index=pd.Index(self.table["item"]), name="score")

    def with_budget(self, budget: int) -> LabelPlan:
        """The same plan for another budget: the same seed, uncertainty and share spread evenly, so a larger one
        keeps these drawn items, in the same order, and adds the next ones (unless an item's probability reaches
        1, which moves it to the front)."""
        planned = self.table[self.table["order"].notna()]
        return make_plan(
            planned["item"].tolist(),
            planned["score"].to_numpy(dtype=float),
            planned["uncertainty"].to_numpy(dtype=float),
            self.table[self.table["order"].isna()]["item"].tolist(),
            metric=self.metric,
            pass_threshold=self.pass_threshold,
            budget=budget,
            seed=self.seed,
            floor=self.floor,
            max_cost=self.max_cost,
            notes=self.notes,
            share=self.floor if self.design == "active" else None,
        )

    # --- display ---------------------------------------------------------------------------------------

    def summary(self) -> str:
        probabilities = self.table["probability"][self.table["order"].notna()]
        if self.design == "uniform":
            how = "uniform: every item alike"
        else:
            how = (
                f"active: probabilities {probabilities.min():.3f}–{probabilities.max():.3f}, "
                f"{self.floor:.0%} of the budget spread evenly; about {self.predicted_saving:.0%} fewer labels than "
                f"a uniform draw if the judge's uncertainty is right, at most {self.max_cost:.0%} wider if it "
                "means nothing"
            )
        return f"label plan {self.id}: {len(self.items)} of {self.n_items} items to label ({how}; seed {self.seed})"

    def __repr__(self) -> str:
        return f"LabelPlan({self.summary()})"

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(note)}</li>" for note in self.notes)
        head = self.table[self.table["drawn"]].sort_values("order").head(10).round(4).to_html(index=False)
        return f"<p>{html.escape(self.summary())}</p><p>The first drawn items, in labelling order:</p>{head}" + (
            f"<ul>{notes}</ul>" if notes else ""
        )

    # --- kept ------------------------------------------------------------------------------------------

    def _dump(self) -> Dump:
        table = self.table.copy()
        table["item"] = [json.dumps(_plain(item)) for item in table["item"]]
        return Dump(
            kind="label_plan",
            state={
                "metric": self.metric,
                "pass_threshold": self.pass_threshold,
                "budget": self.budget,
                "seed": self.seed,
                "design": self.design,
                "floor": self.floor,
                "max_cost": self.max_cost,
                "predicted_saving": self.predicted_saving,
                "notes": list(self.notes),
                "id": self.id,
            },
            tables={"plan": table},
            metrics={"budget": float(self.budget), "predicted_saving": self.predicted_saving},
        )

    @classmethod
    def _restore(cls, dump: Dump) -> LabelPlan:
        table = dump.table("plan").copy()
        table["item"] = pd.Series([_key(json.loads(item)) for item in table["item"]], index=table.index, dtype=object)
        state = dump.state
        plan = cls(
            table,
            metric=state["metric"],
            pass_threshold=state["pass_threshold"],
            budget=state["budget"],
            seed=state["seed"],
            design=state["design"],
            floor=state["floor"],
            max_cost=state["max_cost"],
            predicted_saving=state["predicted_saving"],
            notes=state.get("notes", ()),
        )
        if state.get("id") not in (None, plan.id):
            raise ValueError(f"the saved plan's id {state['id']} does not match its table ({plan.id})")
        return plan


def plan_probabilities(
    uncertainty: np.ndarray, budget: int, floor: float, max_cost: float, share: float | None = None
) -> tuple[np.ndarray, float, float, str]:
    """(probabilities summing to `budget`, the share spread evenly, the predicted saving, design) for items with
    `uncertainty` (expected squared errors): π ∝ sqrt(max(u, MIN_UNCERTAINTY)) capped at 1, mixed with a uniform
    draw by the least share ≥ `floor` that keeps the cost of a meaningless uncertainty within `max_cost` (or by
    `share` when given)."""
    u = np.maximum(np.asarray(uncertainty, dtype=float), MIN_UNCERTAINTY)
    N = len(u)
    uniform = np.full(N, budget / N)
    if budget >= N:
        return np.ones(N), 1.0, 0.0, "uniform"
    neyman = _capped(np.sqrt(u), budget)

    def mixed(share: float) -> np.ndarray:
        return (1.0 - share) * neyman + share * uniform

    if share is not None:
        pass
    elif _cost(mixed(floor), budget) <= max_cost:
        share = floor
    else:
        low, high = floor, 1.0
        for _ in range(40):
            middle = (low + high) / 2
            low, high = (low, middle) if _cost(mixed(middle), budget) <= max_cost else (middle, high)
        share = high
    probabilities = mixed(share)
    saving = 1.0 - float(np.sum(u * (1.0 / probabilities - 1.0)) / np.sum(u * (N / budget - 1.0)))
    if saving < MIN_SAVING:
        return uniform, 1.0, 0.0, "uniform"
    return probabilities, share, saving, "active"


def draw_order(probabilities: np.ndarray, seed: int) -> np.ndarray:
    """Each item's place in the labelling order (0 first): items certain to be drawn (π = 1) first, then by
    U / π with U uniform from `seed` (sequential Poisson sampling: the first k are a sample with probabilities
    ∝ π for every k)."""
    key = np.random.default_rng(seed).random(len(probabilities))
    rank_key = np.where(probabilities >= _TAKE_ALL, key - 1.0, key / probabilities)
    order = np.empty(len(probabilities), dtype=int)
    order[np.argsort(rank_key, kind="stable")] = np.arange(len(probabilities))
    return order


def make_plan(
    items: list[Hashable],
    scores: np.ndarray,
    uncertainty: np.ndarray,
    left_out: list[Hashable],
    *,
    metric: Metric,
    pass_threshold: float,
    budget: int,
    seed: int,
    floor: float,
    max_cost: float,
    notes: Sequence[str],
    share: float | None = None,
) -> LabelPlan:
    check_budget_options(budget, seed, floor, max_cost)
    if budget > len(items):
        raise ConfigurationError(f"budget {budget} is more than the {len(items)} items the plan covers")
    probabilities, share, saving, design = plan_probabilities(uncertainty, budget, floor, max_cost, share)
    order = draw_order(probabilities, seed)
    table = pd.DataFrame(
        {
            "item": pd.Series(items, dtype=object),
            "score": scores,
            "uncertainty": np.maximum(uncertainty, MIN_UNCERTAINTY),
            "probability": probabilities,
            "order": (order + 1).astype(float),
            "drawn": order < budget,
        }
    )
    if left_out:
        rest = pd.DataFrame(
            {
                "item": pd.Series(left_out, dtype=object),
                "score": np.nan,
                "uncertainty": np.nan,
                "probability": 0.0,
                "order": np.nan,
                "drawn": False,
            }
        )
        table = pd.concat([table, rest], ignore_index=True)
    table["order"] = table["order"].astype("Int64")
    return LabelPlan(
        table[PLAN_COLUMNS],
        metric=metric,
        pass_threshold=pass_threshold,
        budget=budget,
        seed=seed,
        design=design,
        floor=share,
        max_cost=max_cost,
        predicted_saving=saving,
        notes=notes,
    )


def _capped(size: np.ndarray, budget: int) -> np.ndarray:
    """Probabilities ∝ `size`, summing to `budget`, none above 1 (the largest capped, the rest rescaled)."""
    N = len(size)
    if not np.any(size > 0):
        return np.full(N, budget / N)
    probabilities = np.zeros(N)
    capped = np.zeros(N, dtype=bool)
    for _ in range(N):
        free = ~capped
        scale = (budget - capped.sum()) / size[free].sum()
        probabilities = np.where(capped, 1.0, size * scale)
        over = free & (probabilities > 1.0)
        if not over.any():
            break
        capped |= over
    return np.minimum(probabilities, 1.0)


def _cost(probabilities: np.ndarray, budget: int) -> float:
    """How much wider (relative) a weighted mean's interval is than a uniform draw's of `budget` labels when the
    errors have nothing to do with the probabilities: sqrt((mean(1/π) − 1) / (N/n − 1)) − 1."""
    N = len(probabilities)
    ratio = (np.mean(1.0 / probabilities) - 1.0) / (N / budget - 1.0)
    return math.sqrt(max(ratio, 0.0)) - 1.0


def check_budget_options(budget: object, seed: object, floor: object, max_cost: object) -> None:
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 2:
        raise ConfigurationError(f"budget is the number of labels to plan, an integer of at least 2; got {budget!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ConfigurationError(f"seed must be an integer, got {seed!r}")
    if not _real(floor) or not 0.0 < float(floor) <= 1.0:  # type: ignore[arg-type]
        raise ConfigurationError(f"floor is a share of the budget in (0, 1], got {floor!r}")
    if not _real(max_cost) or float(max_cost) < 0.0:  # type: ignore[arg-type]
        raise ConfigurationError(f"max_cost is a relative width (e.g. 0.03 for 3 %), at least 0; got {max_cost!r}")


def _real(value: object) -> bool:
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def check_plan_labels(human_labels: Any, plan: LabelPlan | None) -> None:
    """InputError when a labels table says its labels were drawn by another plan than `plan` (a `plan` column,
    as `LabelQueue.labels` has)."""
    if plan is None or not isinstance(human_labels, pd.DataFrame) or "plan" not in human_labels.columns:
        return
    others = sorted({str(p) for p in human_labels["plan"].dropna()} - {plan.id})
    if others:
        raise InputError(
            f"these labels were drawn by plan {', '.join(others)}, not by plan {plan.id}: pass the plan they were "
            "drawn by"
        )


def _plan_id(table: pd.DataFrame, seed: int, budget: int) -> str:
    planned = table[table["order"].notna()]
    blob = json.dumps(
        {
            "items": [_plain(i) for i in planned["item"]],
            "probability": [round(float(p), 10) for p in planned["probability"]],
            "seed": seed,
            "budget": budget,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _plain(item: Any) -> Any:
    """An item id as JSON keeps it (numpy numbers as Python ones; anything else as text)."""
    if isinstance(item, (np.integer,)):
        return int(item)
    if isinstance(item, (np.floating,)):
        return float(item)
    if isinstance(item, (str, int, float, bool)) or item is None:
        return item
    return str(item)


def _key(item: Any) -> Hashable:
    return tuple(item) if isinstance(item, list) else item
