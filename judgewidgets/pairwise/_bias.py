"""Position-bias diagnostics over recorded pairwise verdicts, from judgewidgets or from anywhere else."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import InputError

BIAS_COLUMNS = [
    "judge",
    "n_pairs",
    "consistency",
    "first_slot_preference",
    "accuracy",
    "accuracy_both",
    "tie_rate",
    "n_verdicts",
]
_WINNERS = {"a": "A", "b": "B", "tie": "tie", "model_a": "A", "model_b": "B", "draw": "tie"}
# Gold labels may also be LLMBar's 1 | 2 or PandaLM's "0" (tie) | "1" | "2".
_LABELS = {**_WINNERS, "1": "A", "2": "B", "0": "tie", "1.0": "A", "2.0": "B", "0.0": "tie"}


def _normalise(values: pd.Series, mapping: dict[str, str], what: str) -> pd.Series:
    present = values.notna()
    text = values[present].astype(str).str.strip().str.lower()
    unknown = sorted(set(text) - set(mapping))
    if unknown:
        raise InputError(f"unknown {what} value(s) {', '.join(map(repr, unknown[:5]))}; use 'A', 'B' or 'tie'")
    out = pd.Series(np.nan, index=values.index, dtype=object)
    out[present] = text.map(mapping)
    return out


def verdicts_long(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per comparison and order: pair_id, judge, swapped, winner (+ label, gap when given).

    Accepts that long form as is, a judge's `compare_many` table (its winner_ab / winner_ba columns, unstacked)
    or a panel's (the per-judge verdicts in its `attrs["verdicts"]`, for the pair_ids still in the table).
    """
    if not isinstance(verdicts, pd.DataFrame):
        raise InputError(f"verdicts must be a pandas DataFrame, got {type(verdicts).__name__}")
    frame = verdicts
    recorded = frame.attrs.get("verdicts")
    if "swapped" not in frame.columns and {"winner_ab", "winner_ba"} <= set(frame.columns):
        base = frame.drop(columns=[c for c in ("winner", "swapped") if c in frame.columns])
        if "pair_id" not in base.columns:
            base = base.assign(pair_id=np.arange(len(base)))
        orders = [
            base.assign(swapped=False, winner=base["winner_ab"]),
            base.assign(swapped=True, winner=base["winner_ba"]),
        ]
        frame = pd.concat(orders, ignore_index=True)
    elif "swapped" not in frame.columns and isinstance(recorded, list) and recorded:
        recorded = pd.DataFrame(recorded)
        # A panel's compare_many table carries every judge's per-order verdicts; keep the rows still present.
        frame = recorded[recorded["pair_id"].isin(frame["pair_id"])] if "pair_id" in frame.columns else recorded
    missing = [c for c in ("pair_id", "swapped", "winner") if c not in frame.columns]
    if missing:
        raise InputError(
            f"verdicts lack column(s) {', '.join(missing)}; give one row per comparison and order with pair_id, "
            "swapped (b shown first), winner ('A' | 'B' | 'tie' for the pair's own a and b), optional judge, label"
        )
    out = pd.DataFrame(
        {
            "pair_id": frame["pair_id"].to_numpy(),
            "judge": frame["judge"].astype(str).to_numpy() if "judge" in frame.columns else "judge",
            "swapped": frame["swapped"].astype(bool).to_numpy(),
            "winner": _normalise(frame["winner"], _WINNERS, "winner").to_numpy(),
        }
    )
    if "label" in frame.columns:
        out["label"] = _normalise(frame["label"], _LABELS, "label").to_numpy()
    if "gap" in frame.columns:
        out["gap"] = pd.to_numeric(frame["gap"], errors="coerce").to_numpy()
    return out


def _pairs(long: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, pair) with both orders' winners side by side (first verdict per order kept)."""
    decided = long[long["winner"].notna()]
    first = decided.drop_duplicates(["judge", "pair_id", "swapped"])
    wide = first.pivot(index=["judge", "pair_id"], columns="swapped", values="winner")
    wide = wide.reindex(columns=[False, True])
    wide.columns = ["winner_ab", "winner_ba"]
    extra = [c for c in ("label", "gap") if c in long.columns]
    if extra:
        wide = wide.join(long.drop_duplicates(["judge", "pair_id"]).set_index(["judge", "pair_id"])[extra])
    both = wide["winner_ab"].notna() & wide["winner_ba"].notna()
    wide["both"] = both
    wide["consistent"] = np.where(both, wide["winner_ab"] == wide["winner_ba"], np.nan)
    return wide.reset_index()


def position_bias(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per judge: how often both orders agree, how often the first slot wins, and accuracy when labels exist.

    Input: one row per comparison and order — pair_id, judge (optional), swapped (b was shown first), winner
    ('A' | 'B' | 'tie', already mapped back to the pair's own a/b), label (optional gold), gap (optional
    quality gap). Rows without a winner (failed calls) are ignored. Output columns:

    - consistency: share of pairs judged in both orders whose two winners agree (1 − flip rate).
    - first_slot_preference: among decisive verdicts, the share picking the response shown first (0.5 = none).
    - accuracy: share of verdicts equal to the label, over both orders; accuracy_both: share of pairs whose
      two verdicts both equal it. NaN without labels.
    - tie_rate, n_pairs (pairs with any verdict), n_verdicts.

    When gaps or labels are known, `flip_rate_<group>` columns give the flip rate (1 − consistency) by quality
    gap: `flip_rate_gap_q1` … (quantile bins of `gap`, q1 the closest pairs) or `flip_rate_tie` /
    `flip_rate_clear` (by gold label); `flips_by_gap` has the counts.
    """
    long = verdicts_long(verdicts)
    decided = long[long["winner"].notna()].copy()
    decided["decisive"] = decided["winner"] != "tie"
    decided["first_won"] = (decided["winner"] == "B") == decided["swapped"]
    if "label" in decided.columns:
        decided["correct"] = np.where(decided["label"].notna(), decided["winner"] == decided["label"], np.nan)
    pairs = _pairs(long)
    rows = []
    for judge, group in decided.groupby("judge", sort=True):
        judge_pairs = pairs[pairs["judge"] == judge]
        decisive = group[group["decisive"]]
        both = judge_pairs[judge_pairs["both"]]
        row = {
            "judge": judge,
            "n_pairs": int(group["pair_id"].nunique()),
            "consistency": float(both["consistent"].mean()) if len(both) else np.nan,
            "first_slot_preference": float(decisive["first_won"].mean()) if len(decisive) else np.nan,
            "accuracy": np.nan,
            "accuracy_both": np.nan,
            "tie_rate": float((~group["decisive"]).mean()),
            "n_verdicts": len(group),
        }
        if "correct" in group.columns and group["correct"].notna().any():
            row["accuracy"] = float(group["correct"].dropna().astype(float).mean())
            labelled = both[both["label"].notna()]
            if len(labelled):
                right = (labelled["winner_ab"] == labelled["label"]) & (labelled["winner_ba"] == labelled["label"])
                row["accuracy_both"] = float(right.mean())
        rows.append(row)
    out = pd.DataFrame(rows, columns=BIAS_COLUMNS)
    if "gap" in long.columns or "label" in long.columns:
        flips = flips_by_gap(long)
        if len(flips):
            wide = flips.pivot(index="judge", columns="gap_group", values="flip_rate").add_prefix("flip_rate_")
            out = out.join(wide, on="judge")
    return out


def flips_by_gap(verdicts: pd.DataFrame, bins: int = 3) -> pd.DataFrame:
    """Flip rate (orders disagree) per judge by quality gap: in `bins` quantile bins of a numeric `gap`
    column (gap_q1 the closest pairs; `gap_range` their interval), else by gold label (tie-labelled pairs are
    the zero-gap group "tie", the others "clear")."""
    long = verdicts_long(verdicts)
    pairs = _pairs(long)
    pairs = pairs[pairs["both"]].copy()
    if "gap" in pairs.columns and pairs["gap"].notna().any():
        gaps = pairs["gap"].abs()
        binned = pd.qcut(gaps, q=min(bins, gaps.nunique()), duplicates="drop")
        pairs["gap_group"] = [f"gap_q{c + 1}" if c >= 0 else np.nan for c in binned.cat.codes]
        pairs["gap_range"] = binned.astype(str)
    elif "label" in pairs.columns:
        pairs["gap_group"] = np.where(pairs["label"] == "tie", "tie", "clear")
        pairs.loc[pairs["label"].isna(), "gap_group"] = np.nan
    else:
        raise InputError("flips_by_gap needs a numeric `gap` column or a gold `label` column")
    pairs = pairs[pairs["gap_group"].notna()]
    pairs["flipped"] = 1.0 - pairs["consistent"].astype(float)
    grouped = pairs.groupby(["judge", "gap_group"], sort=True)
    out = grouped["flipped"].agg(n_pairs="size", flip_rate="mean").reset_index()
    if "gap_range" in pairs.columns:
        out["gap_range"] = grouped["gap_range"].first().to_numpy()
    return out
