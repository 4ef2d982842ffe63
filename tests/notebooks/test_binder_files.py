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
