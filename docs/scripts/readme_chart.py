"""Draws docs/assets/panel-chart.png, the chart picture of the README and the site's home page, with no model.

A panel of three judges scores the bundled example set (4 questions x 2 answers, with references); the judges are
scripted (judgewidgets.testing.ScriptedTransport): each gives the good answers and the bad answers the Likert
scores below, so the picture shows what `result.chart()` draws for a panel that mostly agrees and disagrees on a
few items. The chart is rendered to PNG by vl-convert, as the package's own offline charts are.

    python docs/scripts/readme_chart.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import vl_convert

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport

OUT = Path(__file__).resolve().parents[1] / "assets" / "panel-chart.png"

# Likert answers (1-5) per judge, for the good and the bad answer of each of the four questions, in order.
SCRIPT = {
    "strict": {"good": [5, 4, 5, 4], "bad": [1, 1, 2, 1]},
    "lenient": {"good": [5, 5, 5, 5], "bad": [2, 3, 4, 2]},
    "terse": {"good": [4, 5, 4, 5], "bad": [1, 2, 1, 3]},
}


def main() -> None:
    examples = jw.load_example()
    position = {}  # response text -> (label, index of its question among that label's answers)
    for label in ("good", "bad"):
        for index, response in enumerate(examples.loc[examples.label == label, "response"]):
            position[response] = (label, index)

    def judge(name: str) -> jw.LLMJudge:
        def reply(request, attempt):  # type: ignore[no-untyped-def]
            response = re.search(r"<response>\n(.*?)\n</response>", request.messages[-1]["content"], re.S)
            label, index = position[response.group(1)]  # type: ignore[union-attr]
            verdict = {"matches_reference": "yes" if label == "good" else "no", "score": SCRIPT[name][label][index]}
            return json.dumps(verdict)

        return jw.LLMJudge(
            f"openai/{name}", template="likert", name=name, transport=ScriptedTransport(reply), cache=False
        )

    panel = jw.LLMPanel([judge(name) for name in SCRIPT])
    result = panel.score(examples.prompt, examples.response, examples.reference, progress=False)
    chart = result.chart()
    spec = chart.to_dict() if hasattr(chart, "to_dict") else chart.chart.to_dict()
    OUT.write_bytes(vl_convert.vegalite_to_png(spec, scale=1.5))
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
