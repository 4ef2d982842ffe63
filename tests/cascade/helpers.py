"""Scripted judges for cascade tests: each judge's probability that the good response is better, per question."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pandas as pd

from judgewidgets.engine import Completion
from judgewidgets.pairwise import PairwiseJudge
from judgewidgets.testing import ScriptedTransport
from tests.fakes import user_text
from tests.pairwise.helpers import slots


def tokens(*pieces: str | dict[str, float]) -> list[dict]:
    """Logprob entries: a string is a certain token; a dict {token: p} lists the alternatives, first chosen."""
    out = []
    for piece in pieces:
        alternatives = {piece: 1.0} if isinstance(piece, str) else piece
        listed = [{"token": t, "logprob": math.log(p)} for t, p in alternatives.items()]
        out.append({"token": listed[0]["token"], "logprob": listed[0]["logprob"], "top_logprobs": listed})
    return out


def question_of(request) -> str:  # type: ignore[no-untyped-def]
    found = re.search(r"<question>\n(.*?)\n</question>", user_text(request), re.S)
    assert found, user_text(request)
    return found.group(1)


def verdict_completion(chosen: str, dist: dict[str, float], prompt_tokens: int, cost_usd: float) -> Completion:
    """A scripted judge's answer `{"verdict": chosen}`, with the probabilities `dist` at the verdict token."""
    return Completion(
        content=f'{{"verdict": "{chosen}"}}',
        logprobs=tokens('{"', "verdict", '":', ' "', dist, '"}'),
        prompt_tokens=prompt_tokens,
        completion_tokens=3,
        cost_usd=cost_usd,
    )


def pairwise_transport(
    p_good: Callable[[str], float], question: Callable[..., str] = question_of, prompt_tokens: int = 20
) -> ScriptedTransport:
    """A verdict-token judge giving P(the slot holding the "good" response is better) = p_good(question(request))."""

    def reply(request, attempt):  # type: ignore[no-untyped-def]
        a, _ = slots(request)
        p = p_good(question(request))
        p_a = p if a.startswith("good") else 1 - p
        dist = dict(sorted({"A": p_a, "B": 1 - p_a}.items(), key=lambda kv: -kv[1]))
        return verdict_completion(next(iter(dist)), dist, prompt_tokens, 0.001)

    return ScriptedTransport(reply)


def pairwise_judge(p_good: Callable[[str], float], name: str, **kwargs) -> PairwiseJudge:  # type: ignore[no-untyped-def]
    return PairwiseJudge(
        f"openai/{name}", name=name, method="probability", transport=pairwise_transport(p_good), cache=False, **kwargs
    )


def pairs(kinds: list[str], offset: int = 0) -> pd.DataFrame:
    """One pair per entry of `kinds` (the question names its kind, e.g. "easy 3"); the good response sits in
    slot a on even rows, b on odd ones; `label` names the good slot."""
    rows = []
    for i, kind in enumerate(kinds):
        good_first = i % 2 == 0
        good, bad = f"good {offset + i}", f"bad {offset + i}"
        rows.append(
            {
                "question": f"{kind} {offset + i}",
                "response_a": good if good_first else bad,
                "response_b": bad if good_first else good,
                "label": "A" if good_first else "B",
            }
        )
    return pd.DataFrame(rows)
