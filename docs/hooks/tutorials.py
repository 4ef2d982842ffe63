"""MkDocs hook: the tutorial notebooks of notebooks/ as pages under tutorials/, with their outputs when there are some.

The notebooks are committed without outputs; CI executes them (tests/notebooks) and keeps the executed copies in
artifacts/notebooks/. For each tutorial the site shows the executed copy when one is there and its cells are the
committed notebook's cells (a copy left from an older version is not shown), and otherwise the committed notebook,
with a note saying the outputs are not included and where to run it. So `mkdocs build --strict` works on a fresh
clone, and a build after CI's notebook run shows what the notebooks printed and drew. Nothing is executed here.

Before a notebook becomes a page:
- widget outputs (the panel builder, progress bars) become a line saying a widget was here: the site has no kernel
  to draw them, and nbconvert would fetch the widget manager's JavaScript from a CDN to try;
- the notebook's saved widget state is dropped for the same reason.
Charts need nothing: judgewidgets puts an SVG beside every Vega-Lite chart, and the page shows the SVG.

A notebook the nav does not list yet is added at the end of its Tutorials section, titled by its first heading.
`JUDGEWIDGETS_EXECUTED_NOTEBOOKS` names another folder of executed copies.
"""

from __future__ import annotations

import atexit
import copy
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
EXECUTED_ENV = "JUDGEWIDGETS_EXECUTED_NOTEBOOKS"
BINDER = "https://mybinder.org/v2/gh/judgewidgets/judgewidgets/main?urlpath=lab/tree/notebooks/{name}.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = "(an interactive widget: run the notebook to use it)"
NAV_SECTION = "Tutorials"

log = logging.getLogger("mkdocs.hooks.tutorials")
_staging: Path | None = None


def executed_folder() -> Path:
    """Where CI's executed copies are (artifacts/notebooks/ unless the environment names another folder)."""
    return Path(os.environ.get(EXECUTED_ENV, ROOT / "artifacts" / "notebooks"))


def _cells(notebook: dict[str, Any]) -> list[tuple[str, str]]:
    def text(source: str | list[str]) -> str:
        return "".join(source) if isinstance(source, list) else source

    return [(cell["cell_type"], text(cell["source"])) for cell in notebook["cells"]]


def choose(name: str, notebooks: Path = NOTEBOOKS, executed: Path | None = None) -> tuple[dict[str, Any], bool]:
    """The notebook to show for tutorial `name`, and whether it is an executed copy with outputs."""
    committed = json.loads((notebooks / f"{name}.ipynb").read_text(encoding="utf-8"))
    candidate = (executed or executed_folder()) / f"{name}.ipynb"
    if candidate.exists():
        try:
            ran = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            log.info("tutorials: %s is unreadable (%s); showing the committed notebook", candidate, error)
        else:
            if _cells(ran) == _cells(committed):
                return ran, True
            log.info("tutorials: %s was executed from other cells; showing the committed notebook", candidate)
    return committed, False


def prepare(notebook: dict[str, Any], name: str, executed: bool) -> dict[str, Any]:
    """The notebook as the site shows it: widgets as a line of text, a note when there are no outputs."""
    page = copy.deepcopy(notebook)
    page.get("metadata", {}).pop("widgets", None)
    for cell in page["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data")
            if isinstance(data, dict) and WIDGET_VIEW in data:
                output["data"] = {"text/plain": WIDGET_NOTE}
    binder = BINDER.format(name=name)
    if executed:
        note = f"*The outputs below are from CI's run of this notebook. [Run it yourself on Binder]({binder}).*"
    else:
        note = (
            "*This page shows the notebook without its outputs: CI runs every tutorial and the site shows that run "
            f"when it is built after it. [Run it on Binder]({binder}), or locally with `jupyter lab "
            f"notebooks/{name}.ipynb` (no API key needed).*"
        )
    at = 1 if page["cells"] and page["cells"][0]["cell_type"] == "markdown" else 0
    page["cells"].insert(at, {"cell_type": "markdown", "metadata": {}, "source": note, "id": f"{name}-site-note"})
    return page


def _stage() -> Path:
    global _staging
    if _staging is None:
        _staging = Path(tempfile.mkdtemp(prefix="judgewidgets-docs-"))
        atexit.register(shutil.rmtree, _staging, ignore_errors=True)
    return _staging


def title(notebook: dict[str, Any], name: str) -> str:
    """A tutorial's title for the nav: its first heading, else its file name."""
    for kind, source in _cells(notebook):
        if kind == "markdown":
            for line in source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return name.replace("_", " ").capitalize()


def on_config(config: Any) -> Any:
    """A notebook the nav's Tutorials section does not list yet is appended to it, under its own title."""
    for section in config["nav"] or []:
        if isinstance(section, dict) and NAV_SECTION in section:
            entries = section[NAV_SECTION]
            listed = {str(entry if isinstance(entry, str) else next(iter(entry.values()))) for entry in entries}
            for source in sorted(NOTEBOOKS.glob("*.ipynb")):
                if f"tutorials/{source.name}" not in listed:
                    notebook = json.loads(source.read_text(encoding="utf-8"))
                    entries.append({title(notebook, source.stem): f"tutorials/{source.name}"})
    return config


@event_priority(100)  # before mkdocs-jupyter's on_files, which turns .ipynb files into pages
def on_files(files: Files, config: Any) -> Files:
    staging = _stage()
    (staging / "tutorials").mkdir(exist_ok=True)
    for source in sorted(NOTEBOOKS.glob("*.ipynb")):
        notebook, executed = choose(source.stem)
        page = staging / "tutorials" / source.name
        page.write_text(json.dumps(prepare(notebook, source.stem, executed), indent=1), encoding="utf-8")
        files.append(File(f"tutorials/{source.name}", str(staging), config["site_dir"], config["use_directory_urls"]))
        log.info("tutorials: %s %s", source.stem, "with CI's outputs" if executed else "as committed (no outputs)")
    return files
