"""The pointwise stage: an LLMJudge or LLMPanel judging single responses, its verdict a label or pass/fail.

Without `pass_threshold` the verdict is the judge's answer label (the template's choices, e.g. "correct", or the
points of a small scale, "1".."5") and the human labels must be such labels. With `pass_threshold` the verdict is
"pass" when the normalised score is at least the threshold, else "fail", and the human labels are pass/fail.
A judge's confidence is its probability of its verdict, read from its probabilities over the answers (for
pass/fail, the mass at or above the threshold); a panel's is the (weighted) share of its judges that gave it.
An aligned judge (one with a `calibration`) reports its score already mapped onto the person's labels — P(pass)
for pass/fail labels — so for pass/fail its verdict is that score against the threshold and its confidence is the
calibrated probability of the verdict (P(pass), or 1 − P(pass) for a fail): the calibration is the judge's, applied
once, and read here from its votes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._errors import ConfigurationError
from .._records import Item, Vote
from .._run import Run
from ..scoring._judge import LLMJudge
from ..scoring._panel import LLMPanel
from ._stages import Kind, StageVerdict, spent

PASS, FAIL = "pass", "fail"


class PointwiseStage:
    """One LLMJudge (confidence: its probability of the verdict) or an LLMPanel (confidence: the vote share)."""

    kind: Kind = "pointwise"

    def __init__(self, judge: LLMJudge | LLMPanel, name: str, pass_threshold: float | None) -> None:
        self.judge = judge
        self.name = name
        self.pass_threshold = pass_threshold
        self.members: list[Any] = list(judge.judges) if isinstance(judge, LLMPanel) else [judge]
        panel_weights = judge.weights if isinstance(judge, LLMPanel) else None
        self.weights = list(panel_weights) if panel_weights else [1.0] * len(self.members)

    def labels(self) -> tuple[str, ...]:
        if self.pass_threshold is not None:
            return (PASS, FAIL)
        found = []
        for member in self.members:
            template = getattr(member, "template", None)
            if template is None:
                raise ConfigurationError(
                    f"stage {self.name!r}: judge {getattr(member, 'name', member)!r} has no template, so its "
                    "answers have no labels; give the cascade a pass_threshold to judge pass/fail"
                )
            options = tuple(template.option_values())
            if not options:
                raise ConfigurationError(
                    f"stage {self.name!r}: template {template.name!r} has no small set of answer labels; give the "
                    "cascade a pass_threshold (a normalised score in [0, 1]) to judge pass/fail"
                )
            found.append(options)
        if len({frozenset(f) for f in found}) > 1:
            raise ConfigurationError(
                f"stage {self.name!r}: the panel's judges answer with different labels "
                f"({'; '.join(', '.join(f) for f in found)}); give the cascade a pass_threshold to judge pass/fail"
            )
        return found[0]

    def confidence_source(self) -> str:
        if isinstance(self.judge, LLMPanel):
            if len(self.members) < 2:
                raise ConfigurationError(
                    f"stage {self.name!r}: a panel of one judge has no vote share to be confident with; give two "
                    "or more (differently worded) judges, or the judge itself"
                )
            return f"vote share of {len(self.members)} judges"
        judge = self.judge
        if judge.calibration is not None and self.pass_threshold is not None:
            return "P(the person agrees), the judge's score calibrated by its alignment"
        if not judge.uses_probabilities():
            raise ConfigurationError(
                f"stage {self.name!r}: {judge.display_name} gives no confidence: it is set up without logprobs "
                "(probability_weighted=False, or a model that returns none); use a model with logprobs, or an "
                "LLMPanel of several judges (vote share)"
            )
        if not judge.template.probability_readable():
            raise ConfigurationError(
                f"stage {self.name!r}: {judge.display_name} gives no confidence: the answers of template "
                f"{judge.template.name!r} cannot be told apart by one token; use a template with choices or a "
                "1–5 scale, or an LLMPanel of several judges (vote share)"
            )
        return "the judge's probability of its verdict"

    def check(self) -> None:
        self.judge.check()

    def progress_units(self, n_items: int) -> int:
        return n_items * len(self.members)

    async def ajudge(self, items: Sequence[Item], run: Run) -> list[StageVerdict]:
        panel = self.judge if isinstance(self.judge, LLMPanel) else LLMPanel([self.judge])
        result = await panel.ascore_items(list(items), run.session, run.progress)
        by_item: list[list[Vote]] = [[] for _ in items]
        for vote in result.vote_list:
            by_item[vote.item].append(vote)
        return [self._verdict(votes) for votes in by_item]

    def _verdict(self, votes: list[Vote]) -> StageVerdict:
        cost = spent(votes)
        read = [self._read(member, vote) for member, vote in zip(self.members, votes)]
        errors = [vote.error for vote in votes if vote.error]
        if len(self.members) == 1:
            label, confidence = read[0]
            return StageVerdict(
                label, confidence if label is not None else None, error=errors[0] if errors else None, **cost
            )
        shares: dict[str, float] = {}
        for (label, _), weight in zip(read, self.weights):
            if label is not None:
                shares[label] = shares.get(label, 0.0) + weight
        if not shares:
            return StageVerdict(None, None, error="; ".join(errors) or "no judge answered", **cost)
        best = max(shares.values())
        leaders = [label for label, share in shares.items() if share == best]
        if len(leaders) > 1:  # an even split is no verdict to trust: escalate
            return StageVerdict(None, None, error=f"the judges split evenly ({', '.join(leaders)})", **cost)
        return StageVerdict(leaders[0], best / sum(shares.values()), **cost)

    def _read(self, member: Any, vote: Vote) -> tuple[str | None, float | None]:
        """(verdict, confidence) of one vote; the confidence is None when the vote has no probabilities."""
        if vote.error or math.isnan(vote.score):
            return None, None
        template = getattr(member, "template", None)
        values = template.option_values() if template is not None else {}
        probabilities = vote.probabilities if vote.probabilities and values else None
        if self.pass_threshold is not None:
            if vote.uncalibrated_score is not None:  # calibrated by the judge: the score is P(the person passes it)
                passed = vote.score >= self.pass_threshold
                return (PASS, vote.score) if passed else (FAIL, 1.0 - vote.score)
            if probabilities is None:
                return (PASS if vote.score >= self.pass_threshold else FAIL), None
            p_pass = sum(p for label, p in probabilities.items() if values.get(label, -1.0) >= self.pass_threshold)
            return (PASS, p_pass) if p_pass >= 0.5 else (FAIL, 1.0 - p_pass)
        if probabilities is not None:
            label = max(values, key=lambda option: probabilities.get(option, 0.0))  # first of equals, in order
            return label, probabilities.get(label, 0.0)
        own = vote.score if vote.uncalibrated_score is None else vote.uncalibrated_score
        answered = [option for option, value in values.items() if math.isclose(value, own)]
        return (answered[0] if answered else None), None
