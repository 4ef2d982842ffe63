"""README.md is one screen, and whatever it says is on the documentation site too (docs/scripts/check_readme_moved.py:
its headings, table rows, code blocks, numbers and paragraphs are all found in docs/)."""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TEST_COMMAND = 'pip install -c constraints.txt -e ".[local,test]" && python -m mypy && python -m pytest -q'
SCREEN_LINES = 45  # a laptop's screen of rendered Markdown, the picture aside


def _checker() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        "check_readme_moved", ROOT / "docs" / "scripts" / "check_readme_moved.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_nothing_in_the_readme_is_missing_from_the_docs() -> None:
    check = _checker()
    assert check.missing(README.read_text(encoding="utf-8"), check.docs_text()) == []


def test_the_check_reports_what_the_docs_lack() -> None:
    check = _checker()
    docs = (
        "# Guide\n\n## Kept\n\nA paragraph kept word for word, with 94.3 % in it.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    readme = (
        docs + "\n"
        "## Dropped\n\nA paragraph the site never got, measuring 61.7 %.\n\n| c | d |\n|---|---|\n| 3 | 4 |\n\n"
        "```python\nx = jw.lost()\n```\n"
    )
    lost = "\n".join(check.missing(readme, docs))
    for item in (
        "heading: 'Dropped'",
        "table row: | c | d |",
        "number: 61.7",
        "paragraph",
        "code block: 'x = jw.lost()'",
    ):
        assert item in lost, item
    assert "Kept" not in lost and "94.3" not in lost
    assert check.missing(readme.split("## Dropped")[0], docs) == []


def test_the_readme_is_one_screen_with_the_two_commands_first() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= SCREEN_LINES, f"README.md has {len(lines)} lines: move the new part to docs/"
    blocks = re.findall(r"```(\w*)\n(.*?)\n```", text, re.S)
    assert blocks[0] == ("bash", 'pip install -c constraints.txt -e ".[local]" && judgewidgets demo')
    assert blocks[1] == ("bash", TEST_COMMAND)  # .ci/run runs this line verbatim (tests/test_layout.py)
    picture = re.search(r'<img src="([^"]+)"', text)
    assert picture and (ROOT / picture.group(1)).exists()
    for target in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / target).exists(), target
    assert "mybinder.org/badge_logo.svg" in text and "docs/tutorials/index.md" in text


def test_the_code_points_at_the_docs_not_at_the_readme_for_what_moved() -> None:
    """The README was cut to one screen and its tables moved to docs/: a comment or docstring in the package or the
    benchmarks that names the README names the seed project's (`seed`) or a README.md that exists, and every
    docs/*.md page the code names exists."""
    stale, missing = [], []
    for path in sorted([*(ROOT / "judgewidgets").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            named = re.findall(r"[\w./-]*README\.md", line)
            if "README" in line and "seed" not in line and not named:
                stale.append(f"{where}: {line.strip()}")
            for target in [*named, *re.findall(r"\bdocs/[\w./-]+\.md", line)]:
                if "/" in target and not (ROOT / target).exists():
                    missing.append(f"{where}: {target}")
    assert stale == [], "the README's tables live in docs/ now (docs/benchmarks.md, docs/guide/...)"
    assert missing == []
