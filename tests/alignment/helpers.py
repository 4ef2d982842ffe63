"""Scripted judges with known habits, and labelled sets whose truth the tests know."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport

QUALITY = re.compile(r"quality=([0-9.]+)")


def pointwise_set(n: int = 60, seed: int = 0, bar: float = 0.6) -> pd.DataFrame:
    """Items whose response states its quality; a person passes those above `bar`."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0, 1, n)
    return pd.DataFrame(
        {
            "prompt": [f"question {i}" for i in range(n)],
            "response": [f"item-{i} quality={q:.3f}" for i, q in enumerate(quality)],
            "label": np.where(quality > bar, "pass", "fail"),
        }
    )


def judged_quality(request: Any) -> float:
    """The quality of the response a request judges (the last one in its user message, after any examples)."""
    user = next(m["content"] for m in request.messages if m["role"] == "user")
    return float(QUALITY.findall(user)[-1])


def system_text(request: Any) -> str:
    return next(m["content"] for m in request.messages if m["role"] == "system")


def likert_judge(answer: Callable[[Any], int], **options: Any) -> tuple[jw.LLMJudge, ScriptedTransport]:
    """A likert LLMJudge answering `answer(request)` through a scripted transport (no cache, no key needed)."""
    transport = ScriptedTransport(lambda request, attempt: json.dumps({"score": answer(request)}))
    judge = jw.LLMJudge(
        "openai/scripted", template="likert", transport=transport, cache=False, api_key="sk-x", **options
    )
    return judge, transport


def lenient(request: Any) -> int:
    """Scores quality q as if it were 0.3 + 0.7 q: everything looks better than people find it."""
    return int(np.clip(round(1 + 4 * (0.3 + 0.7 * judged_quality(request))), 1, 5))
