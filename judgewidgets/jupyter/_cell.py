"""Reading the items a `%%judge` cell holds: YAML, or readable `prompt:` / `response:` blocks."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import yaml

from .._errors import InputError

_ALIASES = {
    "question": "prompt",
    "q": "prompt",
    "answer": "response",
    "a": "response_a",
    "b": "response_b",
    "response a": "response_a",
    "response b": "response_b",
    "ref": "reference",
}
_KEY = re.compile(r"^([A-Za-z_][A-Za-z_ ]*?)\s*:\s?(.*)$")
_KNOWN = {"prompt", "response", "reference", "context", "response_a", "response_b", "baseline"}


def _key(name: str) -> str:
    name = name.strip().lower()
    return _ALIASES.get(name, name.replace(" ", "_"))


def parse_items(text: str) -> pd.DataFrame:
    """Items from a cell body: a YAML list of mappings, or blocks of `key: value` lines.

    A new `prompt:` (or a `---` line) starts the next item, and values may continue over several lines.
    Keys: prompt (question), response (answer), reference, context; for pairwise cells a / b."""
    text = text.strip("\n")
    if not text.strip():
        raise InputError("the cell holds no items: write `prompt:` / `response:` blocks, or pass --data DF")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        data = None
    if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
        rows = [{_key(str(k)): ("" if v is None else str(v)) for k, v in row.items()} for row in data]
    else:
        rows = _blocks(text)
    frame = pd.DataFrame(rows)
    unknown = set(frame.columns) - _KNOWN
    if unknown:
        raise InputError(
            f"unknown key(s) {sorted(unknown)} in the cell; use prompt, response, reference, context, a, b"
        )
    return frame


def _blocks(text: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    current: dict[str, list[str]] = {}
    last: str | None = None

    def close() -> None:
        nonlocal current, last
        if current:
            rows.append({k: "\n".join(v).strip() for k, v in current.items()})
        current, last = {}, None

    for line in text.splitlines():
        if line.strip() == "---":
            close()
            continue
        match = _KEY.match(line)
        if match and _key(match.group(1)) in _KNOWN:
            key = _key(match.group(1))
            if key in current and key == "prompt":
                close()
            elif key in current:
                raise InputError(f"key {key!r} appears twice in one item; separate items with a blank line or ---")
            current[key] = [match.group(2)]
            last = key
        elif last is not None:
            current[last].append(line)
        elif line.strip():
            raise InputError(f"cannot read {line.strip()!r}: every item starts with `prompt:` (or `question:`)")
    close()
    return rows


def parse_tournament(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """`questions: [...]` and `candidates: {name: [responses...]}` from a YAML cell body."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"the tournament cell is not valid YAML: {exc}") from None
    if not isinstance(data, dict) or "questions" not in data or "candidates" not in data:
        raise InputError(
            "a tournament cell needs YAML with `questions:` (a list) and `candidates:` (name: [responses])"
        )
    questions = [str(q) for q in data["questions"]]
    candidates = {str(name): [str(r) for r in responses] for name, responses in dict(data["candidates"]).items()}
    return questions, candidates
