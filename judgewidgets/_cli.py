"""The `judgewidgets` command: score a CSV/JSONL/Parquet file with a panel of judges, or run the demo."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ._errors import JudgeWidgetsError
from .templates import BUILTIN_TEMPLATES

_READERS = {".csv": pd.read_csv, ".jsonl": lambda p: pd.read_json(p, lines=True), ".parquet": pd.read_parquet}

_EPILOG = """examples:
  judgewidgets demo
  judgewidgets score answers.csv --judge local --template likert -o scored.csv
  judgewidgets score answers.jsonl --judge openai/gpt-4o-mini --judge anthropic/claude-3-5-haiku-20241022 \\
      --judge local --template true_false_uncertain --prompt-col question --response-col answer -o scored.parquet
  judgewidgets score answers.csv --judge openai/my-model --api-base http://127.0.0.1:8000/v1 -o out.csv
"""


def read_table(path: Path) -> pd.DataFrame:
    """A DataFrame from .csv, .jsonl or .parquet; anything else is an error naming the supported kinds."""
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        raise JudgeWidgetsError(f"cannot read {path.name}: use a .csv, .jsonl or .parquet file")
    if not path.exists():
        raise JudgeWidgetsError(f"input file not found: {path}")
    return reader(path)


def write_table(frame: pd.DataFrame, path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    elif suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        raise JudgeWidgetsError(f"cannot write {path.name}: use a .csv, .jsonl or .parquet output file")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judgewidgets",
        description="LLM-as-a-judge evaluation: score responses with a panel of judges.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    score = commands.add_parser(
        "score",
        help="score the responses in a table with one or more judges",
        description="Score every row of INPUT with each --judge and write the per-judge and aggregated table.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("input", type=Path, help="a .csv, .jsonl or .parquet file with prompts and responses")
    score.add_argument(
        "--judge",
        action="append",
        required=True,
        metavar="MODEL",
        help="a judge model: 'local' (embedded, no key) or any litellm model string; repeat for a panel",
    )
    score.add_argument(
        "--template",
        default="likert",
        choices=sorted(BUILTIN_TEMPLATES),
        help="scoring template (default likert)",
    )
    score.add_argument("--prompt-col", default="prompt", help="column holding the prompts (default prompt)")
    score.add_argument("--response-col", default="response", help="column holding the responses (default response)")
    score.add_argument("--reference-col", default=None, help="optional column of reference answers")
    score.add_argument("-o", "--output", type=Path, required=True, help="output file: .csv, .jsonl or .parquet")
    score.add_argument("--weights", type=float, nargs="+", default=None, help="one weight per judge")
    score.add_argument("--explanations", action="store_true", help="ask each judge to explain its score")
    score.add_argument("--api-base", default=None, help="base URL of an OpenAI-compatible server for the judges")
    score.add_argument("--max-concurrency", type=int, default=32, help="concurrent calls per model (default 32)")
    score.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk call cache")
    score.add_argument("--estimate", action="store_true", help="print the estimated cost and stop (no calls)")
    score.add_argument("--quiet", action="store_true", help="no progress bar")

    demo = commands.add_parser(
        "demo", help="score the bundled example set with a small panel on the embedded local judge"
    )
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _score(args: argparse.Namespace) -> int:
    from ._panel import LLMPanel

    frame = read_table(args.input)
    columns = [args.prompt_col, args.response_col] + ([args.reference_col] if args.reference_col else [])
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise JudgeWidgetsError(
            f"{args.input.name} has no column {', '.join(map(repr, missing))}; its columns are {list(frame.columns)}"
        )
    kwargs: dict[str, object] = {"max_concurrency": args.max_concurrency}
    if args.api_base:
        kwargs["api_base"] = args.api_base
    if args.no_cache:
        kwargs["cache"] = False
    panel = LLMPanel(args.judge, template=args.template, weights=args.weights, explanations=args.explanations, **kwargs)
    references = frame[args.reference_col] if args.reference_col else None
    if args.estimate:
        print(panel.estimate_cost(frame[args.prompt_col], frame[args.response_col], references))
        return 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = panel.score(frame[args.prompt_col], frame[args.response_col], references, progress=not args.quiet)
    table = result.to_df()
    extra = frame.drop(columns=[c for c in columns if c in frame.columns])
    write_table(pd.concat([extra.reset_index(drop=True), table], axis=1), args.output)
    _print_summary(result, args.output)
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    return 0


def _print_summary(result: object, output: Path | None) -> None:
    from ._results import PanelResult

    assert isinstance(result, PanelResult)
    summary = result.summary()
    aggregates = result.to_df()[["avg", "median", "min", "max", "disagreement"]].mean()
    with pd.option_context("display.width", 120, "display.max_columns", 20, "display.precision", 3):
        print(summary.to_string())
        print()
        print("mean of aggregates: " + ", ".join(f"{k} {v:.3f}" for k, v in aggregates.items()))
    failed = int(summary["failed"].sum())
    if failed:
        from ._review import FAILURE_KINDS

        kinds = result.errors["kind"].value_counts()
        print(f"{failed} vote(s) failed:")
        for kind, count in kinds.items():
            print(f"  {count} {kind} ({FAILURE_KINDS.get(str(kind), 'see the error')})")
        first = result.errors.groupby("kind")["error"].first()
        for error in first:
            print(f"  e.g. {error[:300]}")
    if output is not None:
        print(f"wrote {len(result.items)} rows to {output}")


def _demo(args: argparse.Namespace) -> int:
    from ._examples import load_example
    from ._judge import LLMJudge
    from ._panel import LLMPanel

    examples = load_example()
    panel = LLMPanel(
        [
            LLMJudge("local", template="likert", name="local_likert", probability_weighted=True),
            LLMJudge("local", template="true_false_uncertain", name="local_verdict"),
            LLMJudge("local", template="continuous", name="local_0_100"),
        ]
    )
    print(f"Scoring {len(examples)} example answers with {panel!r} (embedded Qwen2.5-Coder-1.5B judge)...")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = panel.score(examples["prompt"], examples["response"], progress=not args.quiet)
        table = result.to_df()
    table.insert(0, "label", examples["label"])
    table["prompt"] = table["prompt"].str.slice(0, 38)
    table["response"] = table["response"].str.slice(0, 38)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.precision", 2):
        print(table.drop(columns=["disagreement"]).to_string(index=False))
        print()
        print("Mean panel score by label:", table.groupby("label")["avg"].mean().round(3).to_dict())
        print()
    _print_summary(result, None)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "score":
            return _score(args)
        return _demo(args)
    except (JudgeWidgetsError, ValueError) as exc:
        print(f"judgewidgets: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished judgments are in the cache and will not be paid for again", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
