"""What the labelled-data rubric benchmarks share: the judge options, the labelled cases, the judge, the CSV."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

import judgewidgets as jw


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    """--model, --api-base, --fresh and --out, as every labelled-data benchmark reads them."""
    parser.add_argument("--model", default="local", help="the judge's model (default: the embedded judge)")
    parser.add_argument("--api-base", default=None, help="grade with --model on this OpenAI-compatible server")
    parser.add_argument("--fresh", action="store_true", help="a new, empty call cache")
    parser.add_argument("--out", default=None, help="write every graded case to this CSV")


def load_cases(path: Path) -> list[dict[str, Any]]:
    """The labelled cases of a JSON-lines file, one per line."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def call_cache(args: argparse.Namespace) -> bool | str:
    """The call cache the options name: the persistent one, or with --fresh one new cache for the whole run."""
    if getattr(args, "cache", None) is None:
        args.cache = str(Path(tempfile.mkdtemp()) / "calls.sqlite") if args.fresh else True
    return bool(args.cache) if isinstance(args.cache, bool) else str(args.cache)


def judge_factory(args: argparse.Namespace) -> Callable[..., jw.LLMJudge]:
    """A function building the judge the options name (with any further LLMJudge options): the model as given,
    or served at --api-base; the persistent call cache, or with --fresh one new cache for the whole run."""
    cache = call_cache(args)
    server = {"api_base": args.api_base, "api_key": "sk-benchmark"} if args.api_base else {}
    model = f"openai/{args.model}" if args.api_base else args.model

    def judge(**options: Any) -> jw.LLMJudge:
        return jw.LLMJudge(model, cache=cache, **server, **options)

    return judge


def write_rows(rows: list[dict[str, Any]], out: str | None) -> None:
    """Every graded case to the --out CSV, when one is named."""
    if out:
        pd.DataFrame(rows).to_csv(out, index=False)
