"""`judgewidgets compare BEFORE AFTER`: two saved runs compared item by item, for a terminal or CI.

Prints what `jw.compare` finds (per judge the main metric and the pass rate, before → after, the change with
its paired-bootstrap interval and the sign test's p-value, items better / worse / same) and the worst
regressions with their texts; the exit status is 1 when a judge fell by more than `--margin`, so a CI step
fails on a regression. The paths, the options and the output file are checked before any run is read; every
usage error (an unknown judge or metric too) exits with status 2.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from .._errors import InputError, RegressionError, SavedRunError
from .._runfiles import META_FILE, read_metadata
from .._tablefiles import check_output, read_table, write_table

EXIT_OK = 0
EXIT_REGRESSION = 1
_TABLES = (".csv", ".jsonl", ".parquet")

EPILOG = """examples:
  judgewidgets score answers.csv --judge local --prompt-col question --response-col answer --save runs/v1
  judgewidgets score answers_v2.csv --judge local --prompt-col question --response-col answer --save runs/v2
  judgewidgets compare runs/v1 runs/v2 --margin 0.02
  judgewidgets compare v1 v2 --runs runs/ --rule interval --show 10 -o changes.csv

BEFORE and AFTER are run folders written by `score --save`, `result.save(...)` or `jw.Runs(...).save(...)`
(with --runs FOLDER, their names in that folder), or .csv/.jsonl/.parquet tables with a `score` column and a
prompt (or question/query) column. Items are paired by what was asked (--on). Exit status: 0 no judge fell by
more than --margin; 1 a judge did (the failing judges and the worst items on stderr); 2 bad usage.
"""


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number")
    return value


def _open_fraction(text: str) -> float:
    value = _number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1 (exclusive)")
    return value


def _unit(text: str) -> float:
    value = _number(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _resamples(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 100:
        raise argparse.ArgumentTypeError(f"{text} is fewer than 100 resamples")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """The `compare` subcommand, added to the `judgewidgets` command's subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "compare",
        help="compare two saved runs item by item; exit 1 on a regression beyond --margin",
        description="Compare two runs of the same items (BEFORE, then AFTER) item by item, with paired intervals.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "before", metavar="BEFORE", help="the earlier run: a saved run folder (or a table with a score column)"
    )
    parser.add_argument("after", metavar="AFTER", help="the later run, judged on the same items")
    parser.add_argument("--runs", type=Path, default=None, metavar="FOLDER", help="BEFORE and AFTER are run names here")
    parser.add_argument(
        "--margin",
        type=_number,
        default=0.0,
        help="how far a judge's metric may fall before the command fails (default 0: any fall fails)",
    )
    parser.add_argument(
        "--rule",
        choices=("estimate", "interval"),
        default="estimate",
        help="estimate (default): fail when the change is below -margin; interval (stricter): fail unless the "
        "interval's lower bound is above -margin",
    )
    parser.add_argument(
        "--metric",
        choices=("mean_score", "pass_rate", "win_rate"),
        default=None,
        help="the metric checked (default: mean_score, or win_rate for pairwise runs)",
    )
    parser.add_argument(
        "--judge",
        action="append",
        default=None,
        metavar="NAME",
        help="check only this judge (repeat for several; 'overall' is the runs' aggregate; default: all)",
    )
    parser.add_argument(
        "--on",
        default="input",
        help="pair items by 'input' (default: a hash of prompt and reference), 'item' (every text), 'position' or "
        "a column both runs keep",
    )
    parser.add_argument("--pass-threshold", type=_unit, default=0.5, help="a score passes at this or above (0.5)")
    parser.add_argument("--confidence", type=_open_fraction, default=0.95, help="interval level (default 0.95)")
    parser.add_argument("--n-boot", type=_resamples, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--show", type=_count, default=5, metavar="N", help="worst regressions shown (default 5)")
    parser.add_argument(
        "-o", "--output", type=Path, default=None, help="also write the per-item table (.csv, .jsonl or .parquet)"
    )
    return parser


def run_path(name: str, runs: Path | None) -> Path:
    """The run folder or table a BEFORE / AFTER argument names, checked (SavedRunError or InputError saying why)."""
    if runs is not None:
        from ._log import Runs

        if not runs.is_dir():
            raise InputError(f"--runs {runs}: no such folder")
        return Runs(runs).path(name)
    path = Path(name).expanduser()
    if path.is_file() and path.name == META_FILE:
        path = path.parent
    if path.is_dir():
        read_metadata(path)  # a saved run of a format this version reads, or a SavedRunError saying why
        return path
    if path.suffix.lower() in _TABLES:
        if not path.is_file():
            raise InputError(f"no such file: {path}")
        return path
    if not path.exists():
        raise SavedRunError(f"no saved run at {path} (no such folder); save one with `score --save {path}`")
    raise InputError(f"cannot compare {path}: give a saved run folder or a .csv, .jsonl or .parquet table")


def _run(path: Path) -> Any:
    """What `jw.compare` takes for a path: the folder itself, or a table read with its `score` column checked."""
    if path.is_dir():
        return path
    frame = read_table(path)
    if "score" not in frame.columns:
        raise InputError(
            f"{path.name} has no `score` column (its columns: {list(frame.columns)}); the `score` command's output "
            "is compared through its saved run: run it with --save FOLDER and compare the folders"
        )
    return frame


def compare_command(args: argparse.Namespace) -> int:
    """Run `judgewidgets compare`: print the comparison; 1 on a regression beyond the margin, else 0."""
    from ._compare import compare

    before, after = run_path(args.before, args.runs), run_path(args.after, args.runs)
    if args.output is not None:
        check_output(args.output)
    comparison = compare(
        _run(before),
        _run(after),
        on=args.on,
        pass_threshold=args.pass_threshold,
        confidence=args.confidence,
        n_boot=args.n_boot,
        seed=args.seed,
    )
    comparison.names = (args.before, args.after)
    judges = [comparison._judge(j) for j in args.judge] if args.judge else None  # unknown names: InputError
    metric = args.metric or comparison.metric
    if metric not in set(comparison.summary["metric"]):
        known = ", ".join(dict.fromkeys(comparison.summary["metric"]))
        raise InputError(f"--metric {metric}: these runs have {known}")
    print(report(comparison, args.show))
    if args.output is not None:
        write_table(comparison.to_df(), args.output)
        print(f"wrote {len(comparison.items)} rows (one per item and judge) to {args.output}")
    try:
        comparison.assert_no_regression(args.margin, metric=metric, judges=judges, rule=args.rule, show=args.show)
    except RegressionError as failed:
        lines = str(failed).splitlines()
        print(f"judgewidgets: regression: {lines[0]}", file=sys.stderr)
        for line in lines[1:]:
            print(f"  {line}", file=sys.stderr)
        return EXIT_REGRESSION
    print(f"no regression beyond the margin {args.margin:g} ({metric}, rule: {args.rule})")
    return EXIT_OK


def report(comparison: Any, show: int) -> str:
    """The comparison as text: one line per judge, the summary table, the method, the worst regressions."""
    settings = comparison.settings
    lines = [comparison.describe(), ""]
    with pd.option_context("display.width", 120, "display.max_columns", 20, "display.precision", 3):
        lines.append(comparison.summary.to_string(index=False))
    lines.append(
        f"intervals: paired bootstrap of the items ({settings['n_boot']} resamples, seed {settings['seed']}, "
        f"{settings['confidence']:.0%}); p-values: exact sign test (McNemar's for pass rates); items paired on "
        f"{settings['on']}"
    )
    for label, judges in (("before", comparison.judges_only_before), ("after", comparison.judges_only_after)):
        if judges:
            lines.append(f"judges only {label}: {', '.join(judges)}")
    for label, only in (("before", comparison.only_before), ("after", comparison.only_after)):
        if len(only):
            lines.append(f"{len(only)} items only {label} (not compared)")
    worst = comparison.regressions(n=show)
    if show and len(worst):
        lines += ["", f"worst regressions ({comparison.judges[0]}):"]
        for i, row in enumerate(worst.to_dict("records"), 1):
            lines.append(f"  {i}. {_one_line(row.get('input'), 70)!r}: {row['before']:.2f} → {row['after']:.2f}")
            responses = [row.get("response_before"), row.get("response_after")]
            if responses[0] == responses[1] and isinstance(responses[0], str):
                lines.append(f"     response (both runs): {_one_line(responses[0], 90)}")
            else:
                for side, response in zip(("before", "after"), responses, strict=True):
                    if isinstance(response, str):
                        lines.append(f"     response {side}: {_one_line(response, 90)}")
            why = row.get("explanation_after")
            if isinstance(why, str) and why:
                lines.append(f"     explanation after: {_one_line(why, 90)}")
    return "\n".join(lines)


def _one_line(value: Any, limit: int) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
