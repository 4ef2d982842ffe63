"""MkDocs hook: the API reference's pages, made from the package at build time.

- One page per public subpackage, `reference/<name>.md`: its module docstring and every name in its `__all__`,
  rendered by mkdocstrings from the docstrings. The pages and their navigation entries are generated (after
  `reference/index.md` and `reference/judgewidgets.md`, which are written by hand), so a new subpackage gets its
  page without anyone remembering to add it.
- On `reference/index.md`, two tables in place of their markers: the subpackages with the first line of their
  docstrings, and every name of `judgewidgets.__all__` linked to where it is documented.

Each name is documented once: on the page of the public subpackage whose `__all__` lists it (`LLMJudge` on
judgewidgets.scoring's page), or on `reference/judgewidgets.md` when no subpackage does (the errors, `Item`,
`Vote`, ...). The index links every name through mkdocs-autorefs, so a name no page documents is an unresolved
reference, which `mkdocs build --strict` refuses; tests/docs checks the same from the built site's inventory.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
SUBPACKAGES_MARKER = "<!-- subpackages -->"
NAMES_MARKER = "<!-- public-names -->"
NAV_SECTION = "API reference"
TOP_LEVEL = "the package: the exceptions, the records every judge kind shares, the review policy, a few helpers"

# Public subpackages that `judgewidgets.__all__` does not list (it lists the others).
UNLISTED_SUBPACKAGES = ("engine", "jupyter", "local", "rubrics", "testing")
# The reference's order: by capability, as the user guide goes; subpackages not named here follow, by name.
ORDER = (
    "scoring",
    "templates",
    "rubrics",
    "pairwise",
    "sequential",
    "agreement",
    "meta_eval",
    "datasets",
    "alignment",
    "labels",
    "estimates",
    "cascade",
    "aspects",
    "pipeline",
    "conversations",
    "runs",
    "jupyter",
    "engine",
    "distributed",
    "local",
    "testing",
)

PAGE = """# judgewidgets.{name}

::: judgewidgets.{name}
    options:
      show_root_heading: false
      show_root_toc_entry: false
"""


def _package() -> types.ModuleType:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module("judgewidgets")


def subpackages() -> list[str]:
    """The public subpackages in the reference's order; each has a page reference/<name>.md."""
    jw = _package()
    listed = {name for name in jw.__all__ if isinstance(getattr(jw, name), types.ModuleType)}
    found = listed | set(UNLISTED_SUBPACKAGES)
    return [name for name in ORDER if name in found] + sorted(found - set(ORDER))


def where_documented() -> dict[str, str]:
    """Every name of `judgewidgets.__all__` (but `__version__`) and the identifier it is documented under (for a
    subpackage, its module name: its page is reference/<name>.md)."""
    jw = _package()
    modules = {name: importlib.import_module(f"judgewidgets.{name}") for name in subpackages()}
    places: dict[str, str] = {}
    for name in jw.__all__:
        if name == "__version__":
            continue
        value = getattr(jw, name)
        if isinstance(value, types.ModuleType):
            places[name] = value.__name__
            continue
        owner = next(
            (
                sub
                for sub, module in modules.items()
                if name in getattr(module, "__all__", ()) and getattr(module, name) is value
            ),
            None,
        )
        places[name] = f"judgewidgets.{owner}.{name}" if owner else f"judgewidgets.{name}"
    return places


def summary(value: object) -> str:
    """The first paragraph of a docstring on one line, safe inside a Markdown table cell."""
    doc = inspect.getdoc(value) or ""
    first = doc.strip().split("\n\n", 1)[0].replace("\n", " ")
    return first.replace("|", "\\|")


def subpackages_table() -> str:
    rows = ["| page | what is there |", "|---|---|", f"| [judgewidgets](judgewidgets.md) | {TOP_LEVEL} |"]
    for name in subpackages():
        module = importlib.import_module(f"judgewidgets.{name}")
        rows.append(f"| [judgewidgets.{name}]({name}.md) | {summary(module)} |")
    return "\n".join(rows)


def names_table() -> str:
    jw = _package()
    rows = ["| name | what it is | documented in |", "|---|---|---|"]
    for name, identifier in sorted(where_documented().items(), key=lambda item: item[0].lower()):
        value = getattr(jw, name)
        if isinstance(value, types.ModuleType):  # a subpackage: its own page
            rows.append(f"| [`{name}`]({name}.md) | {summary(value)} | `{identifier}` |")
            continue
        page = identifier.rsplit(".", 1)[0] if identifier.count(".") > 1 else "judgewidgets"
        rows.append(f"| [`{name}`][{identifier}] | {summary(value)} | `{page}` |")
    return "\n".join(rows)


def on_config(config: Any) -> Any:
    """The reference section of the nav: the hand-written pages it lists, then one entry per subpackage."""
    for section in config["nav"] or []:
        if isinstance(section, dict) and NAV_SECTION in section:
            entries = section[NAV_SECTION]
            listed = {str(entry if isinstance(entry, str) else next(iter(entry.values()))) for entry in entries}
            entries += [
                {f"judgewidgets.{name}": f"reference/{name}.md"}
                for name in subpackages()
                if f"reference/{name}.md" not in listed
            ]
    return config


def on_files(files: Files, config: Any) -> Files:
    for name in subpackages():
        if files.get_file_from_path(f"reference/{name}.md") is None:
            files.append(File.generated(config, f"reference/{name}.md", content=PAGE.format(name=name)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri == "reference/index.md":
        markdown = markdown.replace(SUBPACKAGES_MARKER, subpackages_table()).replace(NAMES_MARKER, names_table())
    return markdown
