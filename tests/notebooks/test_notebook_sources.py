"""Every tutorial notebook is built from its own source in notebooks/src/ and matches it exactly."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_notebook_is_built_from_its_source() -> None:
    sources = {p.stem for p in (ROOT / "notebooks" / "src").glob("*.py")}
    notebooks = {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert sources == notebooks and "quickstart" in sources
    check = subprocess.run(
        [sys.executable, ROOT / "notebooks" / "build.py", "--check"], capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_check_names_a_notebook_that_drifted(tmp_path: Path) -> None:
    work = tmp_path / "notebooks"
    (work / "src").mkdir(parents=True)
    (work / "build.py").write_text((ROOT / "notebooks" / "build.py").read_text())
    (work / "src" / "tiny.py").write_text("# %% [markdown]\n# # Title\n\n# %%\n# %load_ext judgewidgets\nx = 1\nx\n")
    build = [sys.executable, work / "build.py"]
    assert subprocess.run(build, capture_output=True, check=False).returncode == 0
    cells = (work / "tiny.ipynb").read_text()
    assert '"# Title"' in cells and '"%load_ext judgewidgets\\n"' in cells
    assert subprocess.run([*build, "--check"], capture_output=True, check=False).returncode == 0
    (work / "src" / "tiny.py").write_text("# %%\nx = 2\n")
    drifted = subprocess.run([*build, "--check"], capture_output=True, text=True, check=False)
    assert drifted.returncode == 1 and "tiny.ipynb" in drifted.stdout


def test_the_tutorials_page_lists_every_tutorial() -> None:
    """The list moved from the README to the documentation site's tutorials page with the rest of the README."""
    page = (ROOT / "docs" / "tutorials" / "index.md").read_text(encoding="utf-8")
    listing = page[page.index("Tutorials in `notebooks/`") :].split("\n\n", 1)[0]
    for notebook in (ROOT / "notebooks").glob("*.ipynb"):
        assert f"`{notebook.stem}`" in listing, f"docs/tutorials/index.md's tutorial list leaves out {notebook.stem}"
        assert f"]({notebook.stem}.ipynb)" in page, f"docs/tutorials/index.md's table leaves out {notebook.stem}"
