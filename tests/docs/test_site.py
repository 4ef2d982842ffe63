"""The documentation site (mkdocs.yml, docs/): it builds with `mkdocs build --strict` (a broken link, a missing
reference or an unresolved name fails), every public name has a docstring and a place in the API reference, and
no page loads anything from another host. The build is skipped, saying why, only where the docs packages are not
installed (`pip install -e ".[docs]"`; the test extra has them)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
import types
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import nbformat
import pytest
import yaml

import judgewidgets as jw

from .site import Loads, build_site

ROOT = Path(__file__).resolve().parents[2]
BUILD_BUDGET_S = 180  # measured ~12 s on a quiet 2-core machine; this only catches a runaway (e.g. execute: true)


def _hook(name: str) -> types.ModuleType:
    """A module of docs/hooks/, loaded the way MkDocs loads a hook (by path)."""
    pytest.importorskip("mkdocs")
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    destination = tmp_path_factory.mktemp("site")
    done, seconds = build_site(destination)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    print(f"\nmkdocs build --strict: {seconds:.1f} s")
    assert seconds < BUILD_BUDGET_S, f"the site took {seconds:.0f} s to build"
    yield destination


def test_the_site_builds_strictly_with_every_section(site: Path) -> None:
    for page in (
        "index.html",
        "getting-started.html",
        "guide/judges.html",
        "guide/cascades.html",
        "tutorials/index.html",
        "tutorials/quickstart.html",
        "reference/index.html",
        "reference/scoring.html",
        "benchmarks.html",
        "changelog.html",
        "contributing.html",
    ):
        assert (site / page).exists(), page
    assert (site / "assets" / "panel-chart.png").exists()
    tutorial = (site / "tutorials" / "quickstart.html").read_text(encoding="utf-8")
    assert "jupyter-wrapper" in tutorial and "jw.load_example()" in tutorial


def test_every_tutorial_is_a_page_and_no_notebook_is_executed(site: Path) -> None:
    """The site never runs a notebook (CI does, in tests/notebooks), and every tutorial is a page."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # no !!python tags in it
    jupyter = next(p["mkdocs-jupyter"] for p in config["plugins"] if isinstance(p, dict) and "mkdocs-jupyter" in p)
    assert jupyter["execute"] == "false"
    for notebook in (ROOT / "notebooks").glob("*.ipynb"):
        page = site / "tutorials" / f"{notebook.stem}.html"
        assert page.exists(), f"{notebook.name} is not a page of the site"
        assert "jupyter-wrapper" in page.read_text(encoding="utf-8")


def test_no_page_loads_anything_from_another_host(site: Path) -> None:
    """No web font, no CDN script or stylesheet: the site works offline and tells no third party who reads it."""
    remote: list[str] = []
    for page in site.rglob("*.html"):
        parser = Loads()
        parser.feed(page.read_text(encoding="utf-8"))
        remote += [f"{page.relative_to(site)}: {url}" for url in parser.urls if urlparse(url).netloc]
    assert remote == []
    for sheet in site.rglob("*.css"):
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", sheet.read_text(encoding="utf-8")), sheet
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in home and "fonts.gstatic.com" not in home


def _own_doc(value: object) -> str:
    doc = value.__dict__.get("__doc__") if inspect.isclass(value) else getattr(value, "__doc__", None)
    return (doc or "").strip()


def _documented_names() -> list[tuple[str, object]]:
    """Every name of judgewidgets.__all__ and every class or function in a public subpackage's __all__."""
    reference = _hook("reference")
    names: list[tuple[str, object]] = [(f"jw.{n}", getattr(jw, n)) for n in jw.__all__ if n != "__version__"]
    for sub in reference.subpackages():
        module = importlib.import_module(f"judgewidgets.{sub}")
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                names.append((f"jw.{sub}.{name}", value))
    return names


def test_every_public_name_has_a_docstring() -> None:
    missing = [name for name, value in _documented_names() if not _own_doc(value)]
    assert missing == [], f"public names without a docstring of their own: {missing}"


def _inventory(site: Path) -> set[str]:
    """The names mkdocstrings rendered (objects.inv: four header lines, then zlib-compressed entries)."""
    data = (site / "objects.inv").read_bytes()
    body = data.split(b"\n", 4)[4]
    return {line.split(" ", 1)[0] for line in zlib.decompress(body).decode().splitlines() if line.strip()}


def test_every_public_name_is_in_the_api_reference(site: Path) -> None:
    reference = _hook("reference")
    rendered = _inventory(site)
    subpackages = reference.subpackages()
    for sub in subpackages:
        assert (site / "reference" / f"{sub}.html").exists(), f"judgewidgets.{sub} has no reference page"
    places = reference.where_documented()
    assert set(places) == set(jw.__all__) - {"__version__"}
    for name, identifier in places.items():
        if not isinstance(getattr(jw, name), types.ModuleType):
            assert identifier in rendered, f"jw.{name} is not rendered in the API reference (as {identifier})"
    for sub in subpackages:
        module = importlib.import_module(f"judgewidgets.{sub}")
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                assert f"judgewidgets.{sub}.{name}" in rendered, f"jw.{sub}.{name} is not in the API reference"
    index = (site / "reference" / "index.html").read_text(encoding="utf-8")
    assert all(f"<code>{name}</code>" in index for name in places), "the index of public names is incomplete"


# The tutorials hook: executed copies when they match, otherwise the committed notebooks, never a widget CDN.


def _notebook(cells: list[Any], **metadata: Any) -> dict[str, Any]:
    """A valid nbformat 4 notebook as a plain dict (what the hook reads from a file)."""
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata.update(kernelspec={"name": "python3", "display_name": "Python 3", "language": "python"})
    notebook.metadata.update(metadata)
    return json.loads(nbformat.writes(notebook))


WIDGET = nbformat.v4.new_output(
    "display_data",
    data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2, "version_minor": 0},
        "text/plain": "HBox(children=(...))",
    },
)
STATE = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2, "version_minor": 0}}
RESULT = nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=1)
md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def test_an_executed_copy_of_the_same_cells_is_shown_with_its_outputs(tmp_path: Path) -> None:
    tutorials = _hook("tutorials")
    notebooks, executed = tmp_path / "notebooks", tmp_path / "executed"
    notebooks.mkdir(), executed.mkdir()
    committed = _notebook([md("# Title", id="a"), code("x = 1\nx", id="b")])
    committed["cells"][1]["source"] = "x = 1\nx"  # a string here, a list of lines in the executed copy: same text
    (notebooks / "demo.ipynb").write_text(json.dumps(committed))
    ran = _notebook([md("# Title", id="a"), code("x = 1\nx", id="b", outputs=[RESULT, WIDGET])], widgets=STATE)
    (executed / "demo.ipynb").write_text(json.dumps(ran))
    notebook, with_outputs = tutorials.choose("demo", notebooks, executed)
    assert with_outputs
    page = tutorials.prepare(notebook, "demo", with_outputs)
    assert "widgets" not in page["metadata"]
    outputs = page["cells"][2]["outputs"]
    assert outputs[0]["data"] == {"text/plain": ["1"]} and outputs[1]["data"] == {"text/plain": tutorials.WIDGET_NOTE}
    assert page["cells"][1]["cell_type"] == "markdown" and "CI's run" in page["cells"][1]["source"]
    assert "widget-view" in json.dumps(notebook), "prepare must not change the notebook it was given"

    ran["cells"][1]["source"] = "x = 2\nx"  # executed from an older version of the notebook: not shown
    (executed / "demo.ipynb").write_text(json.dumps(ran))
    notebook, with_outputs = tutorials.choose("demo", notebooks, executed)
    assert not with_outputs and notebook == committed
    (executed / "demo.ipynb").unlink()
    notebook, with_outputs = tutorials.choose("demo", notebooks, executed)
    assert (
        not with_outputs and "without its outputs" in tutorials.prepare(notebook, "demo", False)["cells"][1]["source"]
    )


def test_a_tutorial_page_with_widget_outputs_loads_nothing_from_another_host(tmp_path: Path) -> None:
    """nbconvert would add the widget manager's script from a CDN for a notebook with widget state: the hook's
    prepared notebook, rendered as mkdocs-jupyter renders it, has none."""
    pytest.importorskip("mkdocs_jupyter")
    from mkdocs_jupyter import convert

    tutorials = _hook("tutorials")
    ran = _notebook([md("# Title", id="a"), code("w", id="b", outputs=[WIDGET])], widgets=STATE)
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps(tutorials.prepare(ran, "demo", True)))
    parser = Loads()
    parser.feed(convert.nb2html(str(path), execute=False, custom_mathjax_url=""))
    assert [url for url in parser.urls if urlparse(url).netloc] == []
