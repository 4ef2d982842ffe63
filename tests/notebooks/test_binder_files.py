"""The Binder files and badge are in place (the expensive run of every notebook is test_binder_notebooks)."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_binder_files_are_complete() -> None:
    assert (ROOT / "binder" / "requirements.txt").exists() and os.access(ROOT / "binder" / "postBuild", os.X_OK)
    notebooks = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert "quickstart.ipynb" in notebooks and len(notebooks) >= 6
    readme = (ROOT / "README.md").read_text()
    assert "mybinder.org/badge_logo.svg" in readme and "notebooks/quickstart.ipynb" in readme


def test_one_command_sets_up_the_tutorials_and_the_readme_and_tutorials_page_say_it() -> None:
    import pytest

    tomllib = pytest.importorskip("tomllib")  # Python 3.11 and later
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {requirement.split(">")[0].split("=")[0].split(";")[0].strip() for requirement in extras["notebooks"]}
    assert {"jupyterlab", "ipywidgets", "anywidget", "ray"} <= names  # Ray: the scale tutorial's second half
    command = 'pip install -c constraints.txt -e ".[local,notebooks]" && jupyter lab notebooks/'
    for page in ("README.md", "docs/tutorials/index.md", "docs/getting-started.md"):
        assert command in (ROOT / page).read_text(), page
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert 'pip install --no-cache-dir -c constraints.txt -e ".[local,notebooks]"' in post_build
