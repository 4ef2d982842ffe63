"""Checks that nothing of a README is lost from the documentation site: every section heading, every table row,
every code block and every number of README.md must appear somewhere in docs/.

The README is kept to one screen and everything else lives on the site, so whatever a README holds (today's, or
one from git history before it was trimmed) must be found in docs/*.md:

- a heading as a heading (any level), or under the new name listed in RENAMED;
- a table row as a line (whitespace collapsed);
- a fenced code block as the same code (whitespace and trailing commas aside: ruff re-wraps Markdown's Python);
- a number (206, 94.3, 2,836) as a number somewhere in the text;
- a paragraph or list item of prose as one of the site's, word for word or nearly (links aside, a similarity of
  at least 0.9: a paragraph the site rewords further, or an older wording left on the site, is reported); a
  paragraph of three links or more is navigation and is not looked for.

    python docs/scripts/check_readme_moved.py                  # the README as it is now
    python docs/scripts/check_readme_moved.py --rev 518d13b    # the README of that commit

Exit status 0 when everything was found, 1 with the list of what was not.
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# README headings whose sections were split or renamed on the site: the new headings, each of which must exist.
RENAMED: dict[str, tuple[str, ...]] = {
    "Judges, templates and panels": ("Judges and templates", "Templates", "Panels"),
    "Quickstart": ("Quickstart: your first panel",),
}

FENCE = re.compile(r"^(```+|~~~+)")
LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])")
ITEM = re.compile(r"^(?:[-*] |\d+\. )")
SIMILAR = 0.9
NAVIGATION_LINKS = 3
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _prose(text: str) -> str:
    """A paragraph as the check compares it: links as their text, whitespace collapsed."""
    return _collapse(LINK.sub(r"\1", text))


def _code(text: str) -> str:
    """Code as the check compares it: no whitespace, semicolons or trailing commas, so a block the formatter (ruff
    formats the Markdown's Python) has re-wrapped is still the same code."""
    return re.sub(r",([)\]}])", r"\1", "".join(text.split()).replace(";", ""))


def _heading_text(line: str) -> str:
    return _collapse(line.lstrip("#").strip().replace("`", "")).rstrip(":")


@dataclass
class Document:
    """A Markdown text split into what the check compares: headings, table rows, code blocks, numbers."""

    headings: list[str] = field(default_factory=list)
    table_rows: list[str] = field(default_factory=list)
    code_blocks: list[str] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    numbers: set[str] = field(default_factory=set)
    lines: set[str] = field(default_factory=set)
    flat: str = ""

    @classmethod
    def parse(cls, text: str) -> Document:
        doc = cls()
        fence: str | None = None
        block: list[str] = []
        prose: list[str] = []

        def end_paragraph() -> None:
            text = " ".join(prose)
            if prose and len(LINK.findall(text)) < NAVIGATION_LINKS:  # a row of links is navigation, not content
                doc.paragraphs.append(_prose(text))
            prose.clear()

        for raw in text.splitlines():
            line = raw.rstrip()
            opened = FENCE.match(line.strip())
            # A backtick fence's info string has no backtick (CommonMark): ```` ```json ```` starts a code span.
            if fence is None and opened and "`" not in line.strip()[len(opened.group(1)) :]:
                end_paragraph()
                fence, block = opened.group(1), []
                continue
            if fence is not None:
                if line.strip().startswith(fence) and not line.strip()[len(fence) :].strip():
                    doc.code_blocks.append("\n".join(block))
                    fence = None
                else:
                    block.append(line)
                continue
            if line.startswith("#") and re.match(r"^#{1,6} ", line):
                end_paragraph()
                doc.headings.append(_heading_text(line))
            elif line.lstrip().startswith("|"):
                end_paragraph()
                if not re.fullmatch(r"\|?[\s|:-]+\|?", line.strip()):
                    doc.table_rows.append(_collapse(line))
            elif not line.strip() or line.lstrip().startswith(("!!!", "<", "[![", "![")):
                end_paragraph()
            else:
                if ITEM.match(line.lstrip()):
                    end_paragraph()
                prose.append(ITEM.sub("", line.strip()))
        end_paragraph()
        content = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("<", "[![")))
        doc.numbers = set(NUMBER.findall(content))  # not in HTML lines: an image's width is no measured number
        doc.lines = {_collapse(line) for line in text.splitlines()}
        doc.flat = _collapse(text)
        return doc


def docs_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(DOCS.rglob("*.md")))


def missing(readme: str, docs: str) -> list[str]:
    """What of `readme` is not in `docs`, one line per thing, empty when nothing is lost."""
    ours, site = Document.parse(readme), Document.parse(docs)
    lost: list[str] = []
    site_headings = set(site.headings)
    for heading in ours.headings:
        targets = RENAMED.get(heading, (heading,))
        lost += [f"heading: {heading!r} (looked for {target!r})" for target in targets if target not in site_headings]
    lost += [f"table row: {row}" for row in ours.table_rows if row not in site.lines]
    site_code = _code(docs)
    for block in ours.code_blocks:
        if _code(block) and _code(block) not in site_code:
            lost.append(f"code block: {block.splitlines()[0] if block.strip() else block!r} ...")
    lost += [f"number: {number}" for number in sorted(ours.numbers - site.numbers)]
    site_prose = _prose(docs)
    for paragraph in ours.paragraphs:
        if paragraph in site_prose or paragraph.rstrip(":") in site_headings:  # "From the shell:" as a heading
            continue
        best = max((similarity(paragraph, theirs) for theirs in site.paragraphs), default=0.0)
        if best < SIMILAR:
            lost.append(f"paragraph ({best:.2f} at best): {paragraph[:100]}...")
    return lost


def similarity(ours: str, theirs: str) -> float:
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    return matcher.ratio() if matcher.real_quick_ratio() >= SIMILAR and matcher.quick_ratio() >= SIMILAR else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readme", nargs="?", default=str(ROOT / "README.md"), help="a README file (default README.md)")
    parser.add_argument("--rev", help="check README.md as it was at this git revision instead")
    args = parser.parse_args(argv)
    if args.rev:
        readme = subprocess.run(
            ["git", "show", f"{args.rev}:README.md"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        source = f"README.md at {args.rev}"
    else:
        readme, source = Path(args.readme).read_text(encoding="utf-8"), args.readme
    lost = missing(readme, docs_text())
    counts = Document.parse(readme)
    summary = (
        f"{len(counts.headings)} headings, {len(counts.table_rows)} table rows, {len(counts.code_blocks)} code blocks, "
        f"{len(counts.paragraphs)} paragraphs, {len(counts.numbers)} numbers"
    )
    if lost:
        print(f"{source}: {len(lost)} things not found in docs/ (of {summary}):")
        print("\n".join(f"  {item}" for item in lost))
        return 1
    print(f"{source}: every one of its {summary} is in docs/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
