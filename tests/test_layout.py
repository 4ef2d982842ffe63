"""The package's layout: subpackages and root modules import one another without cycles."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "judgewidgets"


def _imports() -> dict[str, set[str]]:
    """{unit: units it imports}, a unit being a subpackage or a root module (the package's __init__ aside: it is
    the facade that imports everything). Imports inside functions count too."""
    edges: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        if parts == ("__init__.py",):
            continue
        unit, package = parts[0].removesuffix(".py"), list(parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "judgewidgets":
                target = node.module.split(".")[1:]
            else:
                continue
            target = target or [node.names[0].name]
            if target[0].removesuffix(".py") != unit:
                edges.setdefault(unit, set()).add(target[0])
    return edges


def test_no_import_cycles_between_subpackages_and_root_modules() -> None:
    edges = _imports()

    def reachable(start: str) -> set[str]:
        seen: set[str] = set()
        stack = [start]
        while stack:
            for nxt in edges.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    cycles = sorted({tuple(sorted((a, b))) for a, targets in edges.items() for b in targets if a in reachable(b)})
    assert cycles == []
    # The layers: the engine imports no judge kind, scoring none of its peers, the peers not the layers above.
    assert not edges["engine"] & {"scoring", "pairwise", "rubrics", "sequential", "aspects", "pipeline"}
    assert not edges["scoring"] & {"pairwise", "rubrics", "sequential", "aspects", "pipeline", "jupyter"}
    for peer in ("pairwise", "rubrics", "sequential"):
        assert not edges[peer] & {"aspects", "pipeline", "jupyter", "_cli"}, peer


def test_scoring_is_a_subpackage_beside_its_peers() -> None:
    for name in ("engine", "scoring", "pairwise", "rubrics", "sequential", "aspects", "pipeline", "jupyter"):
        assert (PACKAGE / name / "__init__.py").exists(), name
    for moved in ("_judge", "_panel", "_results", "_aggregate", "_cost", "_generate", "_ask"):
        assert not (PACKAGE / f"{moved}.py").exists(), moved


def test_the_package_says_it_is_typed() -> None:
    """py.typed (PEP 561) tells type checkers to read the package's own hints; CI runs mypy on it (.ci/run)."""
    assert (PACKAGE / "py.typed").exists()
    ci = (PACKAGE.parent / ".ci" / "run").read_text()
    readme = (PACKAGE.parent / "README.md").read_text()
    command = 'pip install -c constraints.txt -e ".[local,test]" && python -m mypy && python -m pytest -q'
    assert command in ci and command in readme
