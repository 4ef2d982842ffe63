"""What a real kernel records, run the way nbconvert runs a notebook (nbclient, no browser): a chart shown without
`%load_ext` is the Vega-Lite spec plus an SVG and no CDN script, so an exported HTML file shows it offline; altair's
renderer is untouched; and `%%judge?` prints its help into the notebook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

nbclient = pytest.importorskip("nbclient")

CELLS = [
    """import altair as alt

import judgewidgets as jw
from judgewidgets.testing import ScriptedTransport

renderer = alt.renderers.active
judges = [
    jw.LLMJudge(f"openai/{name}", name=name, transport=ScriptedTransport(lambda r, a, s=score: f'{{"score": {s}}}'))
    for name, score in (("strict", 2), ("lenient", 5))
]
result = jw.LLMPanel(judges).score(["What is 2+2?", "Capital of France?"], ["4", "Paris"], progress=False)""",
    "result.chart()",
    "print('renderer unchanged:', alt.renderers.active == renderer)",
    "%load_ext judgewidgets",
    "%%judge?",
]


def run_notebook(cells: list[str], folder: Path) -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": folder}}
    ).execute()
    return notebook


def test_a_chart_without_load_ext_and_the_magic_help_as_nbconvert_records_them(tmp_path: Path) -> None:
    from nbconvert import HTMLExporter

    notebook = run_notebook(CELLS, tmp_path)
    (chart,) = notebook.cells[1].outputs
    assert chart["output_type"] == "execute_result"
    assert set(chart["data"]) == {"application/vnd.vegalite.v5+json", "image/svg+xml", "text/plain"}
    assert "cdn" not in str(chart["data"]) and "<script" not in str(chart["data"])
    assert notebook.cells[2].outputs[0]["text"].strip() == "renderer unchanged: True"
    help_text = "".join(str(o.get("data", {}).get("text/plain", o.get("text", ""))) for o in notebook.cells[4].outputs)
    assert "--judges" in help_text and "--template" in help_text and "Examples" in help_text

    page, _ = HTMLExporter().from_notebook_node(notebook)
    (tmp_path / "export.html").write_text(page, encoding="utf-8")
    assert 'data-mime-type="image/svg+xml"' in page and 'src="data:image/svg+xml;base64,' in page
    assert "cdn.jsdelivr" not in page and "vega@" not in page  # no chart script to fetch
