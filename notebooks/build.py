"""Builds the tutorial notebooks from their sources, one file per notebook: notebooks/src/<name>.py becomes
notebooks/<name>.ipynb (the .ipynb files are committed, so that Binder and GitHub show them).

A source is a jupytext "percent" script: `# %%` starts a code cell, `# %% [markdown]` a markdown cell whose lines
are commented out, and a magic line (`%load_ext`, `%%judge`) is commented out too; `jupytext --to ipynb` reads
the same files. The build ruff-formats the code cells (ruff is in the test extra) and writes the formatted code
back to the source; a test runs the check, so a source and its notebook never drift apart.

    python notebooks/build.py          # write every notebook in notebooks/src/
    python notebooks/build.py --check  # exit 1, naming each notebook that differs from its source
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).parent
CELL = re.compile(r"^# %%( \[markdown\])?$")
MAGIC = re.compile(r"^(%%?[A-Za-z]|!)")


def read(source: Path) -> nbformat.NotebookNode:
    """The notebook a percent script describes, with stable cell ids (an unchanged source rebuilds identically)."""
    cells: list[tuple[bool, list[str]]] = []  # (markdown?, lines)
    for line in source.read_text(encoding="utf-8").splitlines():
        if marker := CELL.match(line):
            cells.append((marker.group(1) is not None, []))
        elif not cells:
            raise ValueError(f"{source}: text before the first `# %%` cell marker")
        elif cells[-1][0]:
            cells[-1][1].append(line[2:] if line.startswith("# ") else line.removeprefix("#"))
        else:
            cells[-1][1].append(line[2:] if MAGIC.match(line[2:]) and line.startswith("# ") else line)
    notebook = new_notebook(
        cells=[(new_markdown_cell if md else new_code_cell)("\n".join(lines).strip("\n")) for md, lines in cells]
    )
    for index, cell in enumerate(notebook.cells):
        cell.id = f"{source.stem}-{index}"
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def script(notebook: nbformat.NotebookNode) -> str:
    """The percent script of a notebook (what `read` reads back)."""
    cells = []
    for cell in notebook.cells:
        lines = cell.source.split("\n")
        if cell.cell_type == "markdown":
            cells.append("# %% [markdown]\n" + "\n".join(f"# {line}" if line else "#" for line in lines))
        else:
            cells.append("# %%\n" + "\n".join(f"# {line}" if MAGIC.match(line) else line for line in lines))
    return "\n\n".join(cells) + "\n"


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    stale = []
    for source in sorted((HERE / "src").glob("*.py")):
        target = HERE / f"{source.stem}.ipynb"
        text = nbformat.writes(read(source)) + "\n"
        if not check and shutil.which("ruff"):
            command = ["ruff", "format", "--stdin-filename", target.name, "-"]
            text = subprocess.run(command, input=text, text=True, capture_output=True, check=True).stdout
            source.write_text(script(nbformat.reads(text, as_version=4)), encoding="utf-8")
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(target.name)
        if not check:
            target.write_text(text, encoding="utf-8")
            print("wrote", target)
    if check and stale:
        print("out of date with notebooks/src/ (run python notebooks/build.py):", ", ".join(stale))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
