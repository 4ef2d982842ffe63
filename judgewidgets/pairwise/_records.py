"""Records of pairwise judging: one order's verdict, and a comparison debiased over both orders."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from .._errors import InputError
from .._records import check_encodable
from .._saved import Dump, Keepable, not_run_count, record_rows, usage_of
from ..conversations import Conversation, check_target, judged_views, parse_conversation, parse_conversations
from ..conversations._messages import REPLY_ROLES
from ..conversations._render import JudgedConversation, reply_text, transcript
from ..conversations._targets import last_user_text
from ..engine import Usage
from ..engine._usage import cost_summary
from ._scales import Slot

Winner = Literal["A", "B", "tie"]


@dataclass(frozen=True)
class PairItem:
    """One comparison to make: a question, the pair's own response a and b, and an optional reference.

    A comparison of conversations carries them (`conversation_a`, `conversation_b`: the judged turn of each, or
    each whole); the judge reads those, and the texts are what a table shows."""

    question: str
    response_a: str
    response_b: str
    reference: str | None = None
    conversation_a: JudgedConversation | None = None
    conversation_b: JudgedConversation | None = None


class PairExample(BaseModel):
    """A comparison a person decided, shown to a pairwise judge as an example of the standard to apply."""

    model_config = ConfigDict(frozen=True)

    question: str
    response_a: str
    response_b: str
    winner: Winner
    reference: str | None = None


class OrderVerdict(Usage):
    """One judge's verdict on one order of a pair, with what it cost (its Usage). `winner` and `aspects` are
    already mapped back to the pair's own a/b; `verdict` is the label as the judge gave it, naming slots as shown.
    Failed calls set `error`."""

    model_config = ConfigDict(frozen=True)

    judge: str = Field(description="Name of the judge.")
    swapped: bool = Field(description="True when response b was shown first (in slot A).")
    verdict: str | None = Field(None, description="The scale label the judge answered, in shown slots.")
    winner: Winner | None = Field(None, description="Winner in the pair's own terms: 'A' (a), 'B' (b) or 'tie'.")
    margin: int | None = Field(None, description="0 tie, 1 better, 2 much better (five-level scale).")
    confidence: float | None = Field(
        None, description="The judge's probability of its verdict (stated, for the verdict method), in [0, 1]."
    )
    probabilities: dict[str, float] | None = Field(
        None, description="P(a better) 'A', P(b better) 'B', P(tie) in the pair's own terms, when read."
    )
    fallback: str | None = Field(None, description="Why probabilities were asked for but not read.")
    aspects: dict[str, Winner] = Field(default_factory=dict, description="Per-aspect winners, pair's own terms.")
    explanation: str | None = None
    raw: str = ""
    error: str | None = Field(
        None, description="Why there is no verdict, prefixed 'infrastructure:', 'input:' or 'parse:'."
    )
    shortened: str | None = Field(
        None,
        description="Which turns of the conversations were left out to fit the judge's context (None: read whole).",
    )


def combine(first: Slot | None, second: Slot | None) -> tuple[Winner | None, bool | None]:
    """Swap debiasing: agreeing orders keep their winner; disagreeing ones give a tie marked inconsistent."""
    if first is None:
        return None, None
    if second is None:
        return first, None
    if first == second:
        return first, True
    return "tie", False


def a_better(probabilities: dict[str, float]) -> float:
    """P(a better) with a tie's probability split evenly."""
    return probabilities.get("A", 0.0) + probabilities.get("tie", 0.0) / 2


def _leaning(verdict: OrderVerdict, lean: float) -> float:
    """One order's P(a better), less the judge's fitted `lean`, kept in [0, 1]."""
    return min(1.0, max(0.0, a_better(verdict.probabilities or {}) - lean))


def _decided(verdict: OrderVerdict, lean: float, tie_margin: float) -> OrderVerdict:
    """One order's winner (and its probability) decided from its own probabilities by the rule that decides the
    pair. The pair's P(a better) is the mean of its orders' (less the lean), so orders that agree always give the
    pair's winner: two ties cannot make a win for b, nor two wins for b a tie (the written label, which can be
    "tie" while the probabilities lean one way, stays in `verdict`)."""
    winner, confidence = decide(_leaning(verdict, lean), tie_margin)
    return verdict.model_copy(update={"winner": winner, "confidence": confidence})


def decide(p_a_better: float, tie_margin: float) -> tuple[Winner, float]:
    """(winner, probability that it is better): a tie when P(a) and P(b) differ by no more than `tie_margin`."""
    lead = 2 * p_a_better - 1  # P(a better) − P(b better)
    if abs(lead) <= tie_margin:
        return "tie", 1 - abs(lead)
    return ("A", p_a_better) if lead > 0 else ("B", 1 - p_a_better)


def pointwise_probabilities(
    dist_a: dict[str, float], dist_b: dict[str, float], values: dict[str, float]
) -> dict[str, float]:
    """P(a better) 'A' and P(b better) 'B' from two independent score distributions over labelled answers:
    the chance that one score beats the other, given that they differ (a confident judge gives most of its
    mass to the same top score for two good answers, and what decides is where the rest goes). {'tie': 1}
    when the scores cannot differ."""
    wins = {"A": 0.0, "B": 0.0}
    for label_a, p_a in dist_a.items():
        for label_b, p_b in dist_b.items():
            diff = values[label_a] - values[label_b]
            if diff:
                wins["A" if diff > 0 else "B"] += p_a * p_b
    total = wins["A"] + wins["B"]
    if total <= 0:
        return {"tie": 1.0}
    return {"A": wins["A"] / total, "B": wins["B"] / total}


def pointwise_outcome(
    values: Mapping[str, float],
    score_a: float,
    score_b: float,
    dist_a: Mapping[str, float] | None,
    dist_b: Mapping[str, float] | None,
) -> tuple[Winner, dict[str, float] | None]:
    """(winner, P(a better) 'A' / P(b better) 'B' / 'tie') of two responses each scored alone: from their score
    distributions over the labelled answers (`values`) when both have one, else by the scores themselves (no
    probabilities). The one comparison of pointwise scores, for pairwise judges and meta-evaluation alike."""
    if dist_a is None or dist_b is None or not values:
        diff = score_a - score_b
        return ("A" if diff > 0 else "B" if diff < 0 else "tie"), None
    probabilities = pointwise_probabilities(dict(dist_a), dict(dist_b), dict(values))
    lead = probabilities.get("A", 0.0) - probabilities.get("B", 0.0)
    return ("A" if lead > 0 else "B" if lead < 0 else "tie"), probabilities


class PairwiseResult(BaseModel, Keepable):
    """A comparison of responses a and b, debiased over both orders when the judge swaps.

    `winner` is 'A', 'B' or 'tie' (None when a call failed: see `error`). `consistent` says whether the orders'
    own verdicts agreed (None without swapping). When every order carries probabilities they are averaged:
    `p_a_better` = mean P(A) + mean P(tie)/2, the winner leads by more than the tie margin, and `confidence` is
    the probability that the winner is better (1 − |P(a) − P(b)| for a tie). Otherwise agreeing verdicts give
    their winner with the mean of their stated confidences, and disagreeing ones a tie with confidence 0 (a
    fallback, not a judgment). Every order's verdict is kept in `verdicts`.
    """

    model_config = ConfigDict(frozen=True)

    question: str
    response_a: str
    response_b: str
    reference: str | None = None
    judge: str
    winner: Winner | None
    consistent: bool | None
    confidence: float | None
    p_a_better: float | None = Field(None, description="Probability that response a is better (ties split).")
    uncalibrated_confidence: float | None = Field(
        None, description="The judge's own confidence, when an alignment calibrated `confidence` (None otherwise)."
    )
    aspects: dict[str, Winner | None] = Field(default_factory=dict)
    verdicts: list[OrderVerdict]
    error: str | None = None
    reference_source: str | None = Field(
        None,
        description="For a judge that commits first, the reference both orders were judged against: 'given', "
        "'judge' (its own model answered first) or 'solver:NAME'; None when it does not commit first.",
    )
    made_reference: str | None = Field(None, description="The answer made first that the comparison used.")
    provenance: dict[str, Any] = Field(
        default_factory=dict, exclude=True, repr=False, description="The judge's settings (no secrets)."
    )

    def _call_errors(self) -> list[str | None]:
        """Each order's error (a comparison without verdicts: its own)."""
        return [v.error for v in self.verdicts] if self.verdicts else [self.error]

    def _dump(self) -> Dump:
        """The comparison and its orders' verdicts as records; the headline is a's points (win 1, tie ½)."""
        return Dump(
            kind="pairwise",
            records={
                "comparisons": comparison_rows([self], "verdicts"),
                "verdicts": record_rows(self.verdicts, comparison=[0] * len(self.verdicts)),
            },
            metrics=pair_metrics([self.winner], [self.consistent], [self.error]),
            usage=usage_of(self.verdicts),
            judges=[self.judge],
            inputs=[pair_texts(self)],
            provenance=self.provenance,
        )

    @classmethod
    def _restore(cls, dump: Dump) -> PairwiseResult:
        row = dump.rows("comparisons")[0]
        verdicts = [OrderVerdict.model_validate(_without(v, "comparison")) for v in dump.rows("verdicts")]
        return cls.model_validate({**row, "verdicts": verdicts, "provenance": dump.provenance})

    @classmethod
    def from_orders(
        cls,
        item: PairItem,
        judge: str,
        verdicts: Sequence[OrderVerdict],
        aspects: Sequence[str] = (),
        tie_margin: float = 0.0,
        lean: float = 0.0,
        calibration: Callable[[bool, float], float] | None = None,
    ) -> PairwiseResult:
        """Debias the orders' verdicts; `aspects` names the aspects asked for (missing answers give None); `lean`
        is taken from P(a better) before deciding (a judge's fitted lean towards a). `calibration` (an aligned
        judge's `AgreementCalibration`) turns the confidence read from P(a better) into the chance that the person
        agrees, keeping the judge's own in `uncalibrated_confidence`."""
        failed = [v for v in verdicts if v.error]
        if failed:
            which = "the swapped order" if failed[0].swapped else "the original order"
            error = failed[0].error or ""
            prefix, _, rest = error.partition(": ")
            return cls(
                **_texts(item),
                judge=judge,
                winner=None,
                consistent=None,
                confidence=None,
                aspects=dict.fromkeys(aspects),
                verdicts=list(verdicts),
                error=f"{prefix}: {which}: {rest}" if rest else error,
            )
        read = all(v.probabilities for v in verdicts)
        if read:  # each order's winner by the rule that decides the pair (its label as written stays in `verdict`)
            verdicts = [_decided(v, lean, tie_margin) for v in verdicts]
        winners = [v.winner for v in verdicts]
        winner, consistent = combine(winners[0], winners[1] if len(winners) > 1 else None)
        confidences = [v.confidence for v in verdicts if v.confidence is not None]
        p_a_better = None
        uncalibrated: float | None = None
        confidence: float | None
        if read:
            p_a_better = sum(a_better(v.probabilities or {}) for v in verdicts) / len(verdicts)
            p_a_better = min(1.0, max(0.0, p_a_better - lean))
            winner, confidence = decide(p_a_better, tie_margin)
            if calibration is not None:
                uncalibrated, confidence = confidence, calibration(winner == "tie", confidence)
        elif consistent is False:
            confidence = 0.0
        else:
            confidence = sum(confidences) / len(confidences) if confidences else None
        names = list(aspects) + sorted({n for v in verdicts for n in v.aspects} - set(aspects))
        combined: dict[str, Winner | None] = {}
        for name in names:
            got = [v.aspects.get(name) for v in verdicts]
            if any(g is None for g in got):
                combined[name] = None
            else:
                combined[name] = combine(got[0], got[1] if len(got) > 1 else None)[0]
        return cls(
            **_texts(item),
            judge=judge,
            winner=winner,
            consistent=consistent,
            confidence=confidence,
            p_a_better=p_a_better,
            uncalibrated_confidence=uncalibrated,
            aspects=combined,
            verdicts=list(verdicts),
        )

    def order(self, swapped: bool) -> OrderVerdict | None:
        """The verdict of the original (False) or swapped (True) order, when it was asked."""
        return next((v for v in self.verdicts if v.swapped == swapped), None)

    @property
    def vote_list(self) -> list[OrderVerdict]:
        """Every order's verdict (the same list as `verdicts`)."""
        return self.verdicts

    @property
    def votes(self) -> pd.DataFrame:
        """Tidy table: one row per order's verdict (judge, swapped, winner, ..., usage)."""
        return pd.DataFrame([v.model_dump() for v in self.verdicts])

    @property
    def usage(self) -> Usage:
        """What every order's calls cost together."""
        return Usage.total(self.verdicts)

    def summary(self) -> pd.DataFrame:
        """Per judge: calls, failed orders, tokens of each kind, cost as billed and at list price (`cost_summary`)."""
        return cost_summary((v.judge, v, v.error) for v in self.verdicts)

    @property
    def cost_usd(self) -> float | None:
        return self.usage.cost_usd

    def row(self) -> dict[str, Any]:
        """The flat record of `compare_many`'s table (texts left out)."""
        ab, ba = self.order(False), self.order(True)
        out: dict[str, Any] = {
            "judge": self.judge,
            "winner": self.winner,
            "consistent": self.consistent,
            "confidence": math.nan if self.confidence is None else self.confidence,
            "p_a_better": math.nan if self.p_a_better is None else self.p_a_better,
        }
        for name, value in self.aspects.items():
            out[f"aspect_{name}"] = value
        for suffix, order in (("ab", ab), ("ba", ba)):
            out[f"winner_{suffix}"] = order.winner if order else None
            out[f"verdict_{suffix}"] = order.verdict if order else None
            out[f"confidence_{suffix}"] = math.nan if order is None or order.confidence is None else order.confidence
            out[f"explanation_{suffix}"] = order.explanation if order else None
            out[f"raw_{suffix}"] = order.raw if order else None
        out["error"] = self.error
        if self.reference_source is not None:
            out["reference_source"] = self.reference_source
            out["made_reference"] = self.made_reference
        usage = self.usage
        out["latency_s"] = usage.latency_s
        out["prompt_tokens"] = usage.prompt_tokens
        out["completion_tokens"] = usage.completion_tokens
        out["cost_usd"] = math.nan if usage.cost_usd is None else usage.cost_usd
        out["cached"] = usage.cached
        out["waited_s"] = usage.waited_s
        if usage.batch_id is not None:  # judged through a batch API (batch=True): the batch it was paid under
            out["batch_id"] = usage.batch_id
        return out


WIN_POINTS = {"A": 1.0, "tie": 0.5, "B": 0.0}


def comparison_rows(comparisons: Sequence[BaseModel], *nested: str) -> list[dict[str, Any]]:
    """Each comparison's own fields as a row (the `nested` record lists left out: they are tables of their own)."""
    rows = []
    for comparison in comparisons:
        row = comparison.model_dump(exclude=set(nested))
        rows.append({k: list(v) if isinstance(v, tuple) else v for k, v in row.items()})
    return rows


def pair_texts(comparison: Any) -> dict[str, Any]:
    """The texts of one comparison (what a run's fingerprint covers)."""
    return {
        "question": comparison.question,
        "response_a": comparison.response_a,
        "response_b": comparison.response_b,
        "reference": comparison.reference,
    }


def pair_metrics(
    winners: Sequence[str | None], consistent: Sequence[bool | None], errors: Sequence[str | None] = ()
) -> dict[str, float]:
    """a's win rate (win 1, tie ½) over the decided comparisons, the share of ties and of consistent orders, the
    failed comparisons and (from their `errors`) how many of them the run's budget did not run."""
    decided = [WIN_POINTS[w] for w in winners if w in WIN_POINTS]
    checked = [c for c in consistent if c is not None]
    nan = float("nan")
    return {
        "win_rate": sum(decided) / len(decided) if decided else nan,
        "tie_rate": sum(1 for w in winners if w == "tie") / len(decided) if decided else nan,
        "consistency": sum(checked) / len(checked) if checked else nan,
        "failed": sum(1 for w in winners if w is None),
        "not_run": not_run_count(errors),
    }


def _without(row: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in keys}


def _texts(item: PairItem) -> dict[str, Any]:
    return {
        "question": item.question,
        "response_a": item.response_a,
        "response_b": item.response_b,
        "reference": item.reference,
    }


def _required(name: str, value: object, position: int) -> str:
    """The text at `position`, checked (InputError for a missing or non-text value)."""
    return str(_text(name, value, position))


def _text(name: str, value: object, position: int, optional: bool = False) -> str | None:
    if optional and (value is None or (isinstance(value, float) and math.isnan(value))):
        return None
    if not isinstance(value, str):
        raise InputError(f"{name} must hold strings; position {position} is {type(value).__name__} {value!r:.40}")
    check_encodable(name, position, value)
    return value


def build_pairs(
    questions: Sequence[str] | str,
    responses_a: Sequence[str] | str,
    responses_b: Sequence[str] | str,
    references: Sequence[str | None] | str | None = None,
) -> list[PairItem]:
    """Check a batch of comparisons; every problem raises one InputError before any call is made."""
    columns: dict[str, Sequence[str | None] | str] = {
        "questions": questions,
        "responses_a": responses_a,
        "responses_b": responses_b,
    }
    if references is not None:
        columns["references"] = references
    lists = {name: [values] if isinstance(values, str) else list(values) for name, values in columns.items()}
    lengths = {name: len(values) for name, values in lists.items()}
    if len(set(lengths.values())) > 1:
        raise InputError("lengths differ: " + ", ".join(f"{k}={v}" for k, v in lengths.items()))
    if not lists["questions"]:
        raise InputError("nothing to compare: the batch is empty")
    items = []
    for i in range(lengths["questions"]):
        items.append(
            PairItem(
                question=_required("questions", lists["questions"][i], i),
                response_a=_required("responses_a", lists["responses_a"][i], i),
                response_b=_required("responses_b", lists["responses_b"][i], i),
                reference=_text("references", lists["references"][i], i, True) if "references" in lists else None,
            )
        )
    return items


def build_conversation_pairs(
    *,
    histories: Any = None,
    responses_a: Any = None,
    responses_b: Any = None,
    conversations_a: Any = None,
    conversations_b: Any = None,
    references: Sequence[str | None] | None = None,
    target: str | None = None,
) -> list[PairItem]:
    """Comparisons of conversations' turns, checked before any call: two replies to each shared history
    (`histories` with `responses_a` / `responses_b`, each a reply's text or its messages), or two conversations
    each (`conversations_a` / `conversations_b`), judged on their last turns or `target="whole"`."""
    if histories is not None:
        if conversations_a is not None or conversations_b is not None:
            raise InputError("give histories with responses_a and responses_b, or conversations_a and _b, not both")
        if responses_a is None or responses_b is None:
            raise InputError("two replies to a shared history need responses_a and responses_b")
        if target not in (None, "last_turn"):
            raise InputError("replies to a shared history are compared as the last turn: leave target unset")
        shared = parse_conversations(histories, "histories")
        replies_a, replies_b = _replies(responses_a, "responses_a"), _replies(responses_b, "responses_b")
        _same_length(histories=len(shared), responses_a=len(replies_a), responses_b=len(replies_b))
        pairs = [_continued(history, i, a, b) for i, (history, a, b) in enumerate(zip(shared, replies_a, replies_b))]
    else:
        if conversations_a is None or conversations_b is None:
            raise InputError("a comparison of conversations needs conversations_a and conversations_b")
        if target not in (None, "last_turn", "whole"):
            raise InputError(f"target {target!r}: two conversations are compared on their last turns or whole")
        firsts = parse_conversations(conversations_a, "conversations_a")
        seconds = parse_conversations(conversations_b, "conversations_b")
        _same_length(conversations_a=len(firsts), conversations_b=len(seconds))
        chosen = check_target(target)
        views_a, views_b = (
            judged_views(firsts, chosen, "conversations_a"),
            judged_views(seconds, chosen, "conversations_b"),
        )
        pairs = list(zip(views_a, views_b))
    reference_list = None
    if references is not None:
        reference_list = [_text("references", r, i, True) for i, r in enumerate(references)]
        _same_length(comparisons=len(pairs), references=len(reference_list))
    return [
        PairItem(
            question=last_user_text(a),
            response_a=shown(a),
            response_b=shown(b),
            reference=reference_list[i] if reference_list is not None else None,
            conversation_a=a,
            conversation_b=b,
        )
        for i, (a, b) in enumerate(pairs)
    ]


def _replies(values: Any, name: str) -> list[Any]:
    if isinstance(values, str):
        values = [values]
    try:
        return list(values)
    except TypeError:
        raise InputError(f"{name} must be a list of replies, got {type(values).__name__}") from None


def _same_length(**lengths: int) -> None:
    if len(set(lengths.values())) > 1:
        raise InputError("lengths differ: " + ", ".join(f"{k}={v}" for k, v in lengths.items()))


def _continued(
    history: Conversation, index: int, reply_a: Any, reply_b: Any
) -> tuple[JudgedConversation, JudgedConversation]:
    """The two replies appended to their shared history, each judged as the turn that follows it."""
    return continued(history, index, reply_a, "responses_a"), continued(history, index, reply_b, "responses_b")


def continued(history: Conversation, index: int, reply: Any, name: str) -> JudgedConversation:
    """`reply` (a text, or the assistant's messages with its tools' results) appended to `history` and judged as
    the turn that follows it; InputError (naming `name` and `index`) when it cannot be."""
    if history.messages[-1].role in REPLY_ROLES:
        raise InputError(
            f"history {index} ends with a {history.messages[-1].role} message: the replies would continue the "
            "assistant's turn; end it with the user's message they answer"
        )
    if isinstance(reply, str):
        reply = [{"role": "assistant", "content": reply}]
    turn = parse_conversation(reply, index, name).messages
    if any(m.role not in REPLY_ROLES for m in turn) or turn[0].role != "assistant":
        raise InputError(f"{name}[{index}]: a reply is the assistant's messages (and its tools' results) only")
    whole = parse_conversation([*history.to_openai(), *(m.to_openai() for m in turn)], index, name)
    return JudgedConversation(whole, index, (len(history), len(whole)), len(history.replies()) + 1)


def shown(view: JudgedConversation) -> str:
    """What a table shows of a compared turn: the reply, or the whole conversation's transcript."""
    return transcript(view.conversation.messages) if view.judged is None else reply_text(view)


def verdict_rows(frame: pd.DataFrame, results: Sequence[Any]) -> pd.DataFrame:
    """Long table: one row per comparison, judge and order (pair_id, judge, swapped, winner, ..., label)."""
    ids = frame["pair_id"].tolist() if "pair_id" in frame.columns else list(range(len(results)))
    rows = []
    for position, (pair_id, result) in enumerate(zip(ids, results)):
        for v in result.verdicts:
            rows.append(
                {
                    "pair_id": pair_id,
                    "judge": v.judge,
                    "swapped": v.swapped,
                    "winner": v.winner,
                    "verdict": v.verdict,
                    "confidence": v.confidence,
                    "error": v.error,
                    "position": position,
                    **v.usage_fields(),  # what this order's calls cost (PairwiseTable.usage adds them up)
                }
            )
    long = pd.DataFrame(rows)
    for column in ("label", "gap"):
        if column in frame.columns and len(long):
            long[column] = frame[column].to_numpy()[long["position"].to_numpy()]
    return long.drop(columns="position")
