"""The `judgewidgets` command: score a CSV/JSONL/Parquet file with a panel of judges (and keep the run with
`--save`), compare two saved runs (`compare`, in `runs/_command.py`), or run the demo.

Everything that can be wrong with the command line (flags, input file and columns, output kind and folder,
the folder to save the run in, model strings) is reported before the first call, with exit status 2. After the
calls, one line per judge says how many of its calls failed and why; the exit status is 1 when a judge failed
on every row (or on more than `--max-failed-fraction` of them), so scripts and CI notice a run that produced
nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ._errors import CallsFailedWarning, ConfigurationError, InputError, JudgeWidgetsError
from ._tablefiles import check_output, read_table, write_table
from .templates import BUILTIN_TEMPLATES

if TYPE_CHECKING:
    from .scoring._panel import LLMPanel
    from .scoring._results import PanelResult

EXIT_OK = 0
EXIT_JUDGES_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

_AGGREGATES = ("avg", "median", "min", "max", "weighted_avg", "disagreement")
DEMO_WIDTH = 100  # the demo's item blocks wrap their texts at this many columns

_EPILOG = """examples:
  judgewidgets score answers.csv --judge local --template likert \\
      --prompt-col question --response-col answer --reference-col reference -o scored.csv
  judgewidgets score answers.jsonl --judge openai/gpt-4o-mini --judge anthropic/claude-3-5-haiku-20241022 \\
      --judge local --template true_false_uncertain --prompt-col question --response-col answer -o scored.parquet
  judgewidgets score answers.csv --judge mine=openai/my-model --api-base http://127.0.0.1:8000/v1 -o out.csv
  judgewidgets score chats.jsonl --judge local --conversation-col messages --target each_turn -o turns.csv
  judgewidgets score answers.csv --judge openai/gpt-4o-mini --estimate      # the cost, no calls
  judgewidgets score answers.csv --judge local --save runs/v1 -o scored.csv  # keep the run, to compare later
  judgewidgets compare runs/v1 runs/v2 --margin 0.02                         # exit 1 on a regression
  judgewidgets demo

A column of reference answers (--reference-col) is what most helps a small judge such as `local`.
A column of conversations (--conversation-col: OpenAI chat message lists in JSONL or Parquet, or their JSON text
in CSV) is judged on its last turn, the whole conversation or each turn (--target); with each_turn the output
has one row per turn (the input row repeated, and a turn column).
The output keeps every input column under its own name and adds one score column per judge (named after its
model, or NAME in --judge NAME=MODEL), avg, median, min, max, disagreement, and <judge>_error where calls
failed. Exit status: 0 done; 1 a judge failed on every row (or beyond --max-failed-fraction); 2 bad usage,
nothing was called; 130 interrupted (finished judgments stay in the call cache).
"""


def check_save(folder: Path, overwrite: bool, source: Path | None = None) -> None:
    """Raise before any call when a run cannot be saved in `folder`: a file in its place (the input, say), a run
    already there without --overwrite, a folder holding other files, or no permission to write."""
    from ._runfiles import check_target

    if source is not None and folder.exists() and source.exists() and folder.resolve() == source.resolve():
        raise InputError(f"--save {folder} is the input file; give a folder (e.g. runs/v1)")
    check_target(folder, overwrite)
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    if not os.access(existing, os.W_OK):
        raise InputError(f"cannot save the run in {folder}: {existing} is not writable")


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not at least 1")
    return value


def _dollars(text: str) -> float:
    from .engine._budget import check_max_cost

    try:
        value = check_max_cost(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of dollars >= 0") from None
    assert value is not None
    return value


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
        help="a judge: 'local' (embedded, no key) or any litellm model string, optionally NAME=MODEL to name its "
        "column; repeat for a panel",
    )
    score.add_argument(
        "--template",
        default="likert",
        choices=sorted(BUILTIN_TEMPLATES),
        help="scoring template (default likert)",
    )
    score.add_argument("--prompt-col", default="prompt", help="column holding the prompts (default prompt)")
    score.add_argument("--response-col", default="response", help="column holding the responses (default response)")
    score.add_argument(
        "--reference-col", default=None, help="column of reference answers (recommended: it helps small judges most)"
    )
    score.add_argument(
        "--conversation-col",
        default=None,
        help="column of conversations to judge instead of prompts and responses (message lists, or their JSON)",
    )
    score.add_argument(
        "--target",
        choices=("last_turn", "whole", "each_turn"),
        default=None,
        help="with --conversation-col: what is judged (default: the template's, else last_turn)",
    )
    score.add_argument(
        "--commit-first",
        nargs="?",
        const="all",
        choices=("all", "short", "off"),
        default=None,
        help="for rows without a reference, a model first answers each question (a short answer) and the judges "
        "grade against that answer ('short': only when it is a word, number, name or date; 'off': never); a given "
        "reference always wins (see docs: it misleads where the model is wrong). Default: 'short' for the embedded "
        "judge under a correctness template (likert, true_false_uncertain, true_false, continuous), else off",
    )
    score.add_argument(
        "--solver",
        default=None,
        metavar="MODEL",
        help="with --commit-first (implied): this model answers instead of each judge's own ('local' or a litellm "
        "model string; served at --api-base when one is given)",
    )
    score.add_argument("-o", "--output", type=Path, default=None, help="output file: .csv, .jsonl or .parquet")
    score.add_argument(
        "--save",
        type=Path,
        default=None,
        metavar="FOLDER",
        help="also keep the run in FOLDER (Parquet + run.json, as result.save): jw.load and `judgewidgets compare` "
        "read it",
    )
    score.add_argument("--overwrite", action="store_true", help="replace a run already saved in the --save folder")
    score.add_argument("--weights", type=float, nargs="+", default=None, help="one weight per judge")
    score.add_argument("--explanations", action="store_true", help="ask each judge to explain its score")
    score.add_argument("--api-base", default=None, help="base URL of an OpenAI-compatible server for the judges")
    score.add_argument(
        "--max-concurrency",
        type=_positive,
        default=None,
        help="concurrent calls per model (default 32; the embedded judge takes one at a time)",
    )
    score.add_argument(
        "--max-failed-fraction",
        type=_fraction,
        default=1.0,
        metavar="F",
        help="exit with status 1 when a judge's calls failed on more than this fraction of rows (0 to 1; "
        "default 1: only when a judge failed on every row)",
    )
    score.add_argument(
        "--max-cost-usd",
        type=_dollars,
        default=None,
        metavar="D",
        help="budget in dollars: no call starts that could take the spend past D; the rows left are written "
        "with '<judge>_error' 'budget: not run ...' and a rerun with a larger budget pays only for them",
    )
    score.add_argument(
        "--batch",
        action="store_true",
        help="send the calls through the providers' batch APIs (OpenAI, Anthropic) at half the price; the batch is "
        "written down first, so the same command run again waits for it instead of paying twice",
    )
    score.add_argument(
        "--batch-retry",
        choices=("live", "batch"),
        default=None,
        help="with --batch: resend what a batch left unanswered live (default) or as a new batch",
    )
    score.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk call cache")
    score.add_argument("--estimate", action="store_true", help="print the estimated cost and stop (no calls)")
    score.add_argument("--quiet", action="store_true", help="no progress bar")

    from .runs._command import add_parser as add_compare

    add_compare(commands)

    demo = commands.add_parser(
        "demo", help="score the bundled example set with a small panel on the embedded local judge"
    )
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def parse_judges(values: Sequence[str]) -> list[tuple[str, str]]:
    """(name, model) per `--judge`: `MODEL` is named after the model, `NAME=MODEL` after NAME."""
    judges = []
    for value in values:
        name, equals, model = value.partition("=")
        if not equals:
            name, model = value, value
        name, model = name.strip(), model.strip()
        if not name or not model:
            raise ConfigurationError(f"--judge {value!r}: give MODEL or NAME=MODEL")
        judges.append((name, model))
    names = [name for name, _ in judges]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigurationError(
            f"--judge {repeated[0]!r} is given twice; tell them apart with NAME=MODEL (e.g. --judge a={repeated[0]})"
        )
    return judges


def _check_columns(frame: pd.DataFrame, args: argparse.Namespace, judge_names: Sequence[str]) -> None:
    texts = [args.conversation_col] if args.conversation_col else [args.prompt_col, args.response_col]
    wanted = texts + ([args.reference_col] if args.reference_col else [])
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise InputError(
            f"{args.input.name} has no column {', '.join(map(repr, missing))}; its columns are {list(frame.columns)}"
            " (name yours with --prompt-col, --response-col, --reference-col, --conversation-col)"
        )
    added = {*judge_names, *_AGGREGATES, *(["turn"] if args.conversation_col else [])}
    added |= {f"{n}_{suffix}" for n in judge_names for suffix in ("explanation", "error")}
    clashes = [c for c in frame.columns if c in added]
    if clashes:
        raise InputError(
            f"{args.input.name} already has the column(s) {', '.join(map(repr, clashes))}, which the output adds; "
            "rename them, or name the judges with --judge NAME=MODEL"
        )


def _missing_keys(judges: Sequence[tuple[str, str]], api_base: str | None) -> dict[str, list[str]]:
    """Per judge name, the API key variables its model needs that are not set (none with --api-base)."""
    if api_base:
        return {}
    from ._failures import missing_key_variables

    found = {name: missing_key_variables(model) for name, model in judges}
    return {name: keys for name, keys in found.items() if keys}


def _score(args: argparse.Namespace) -> int:
    from .engine._litellm import is_local_model
    from .scoring._commit import commit_first_option, solver_at
    from .scoring._judge import LLMJudge
    from .scoring._panel import LLMPanel

    if args.output is None and args.save is None and not args.estimate:
        raise InputError(
            "say where to write the scores with -o/--output (.csv, .jsonl or .parquet), or keep the run with --save"
        )
    if args.output is not None:
        check_output(args.output, args.input)
    if args.save is not None:
        check_save(args.save, args.overwrite, args.input)
    if args.target and not args.conversation_col:
        raise InputError("--target goes with --conversation-col")
    judges = parse_judges(args.judge)
    texts = [args.conversation_col] if args.conversation_col else [args.prompt_col, args.response_col]
    frame = read_table(args.input, [c for c in (*texts, args.reference_col) if c])
    _check_columns(frame, args, [name for name, _ in judges])
    kwargs: dict[str, Any] = {"max_concurrency": args.max_concurrency, "cache": not args.no_cache}
    remote = {"api_base": args.api_base} if args.api_base else {}
    panel = LLMPanel(
        [
            LLMJudge(model, template=args.template, name=name, **kwargs, **({} if is_local_model(model) else remote))
            for name, model in judges
        ],
        weights=args.weights,
        explanations=args.explanations,
        commit_first=commit_first_option(args.commit_first),
        solver=solver_at(args.solver, args.api_base, kwargs["cache"]),
    )
    panel.check()
    references = frame[args.reference_col] if args.reference_col else None
    if args.conversation_col:
        inputs: dict[str, Any] = {
            "data": frame,
            "conversation_col": args.conversation_col,
            "reference_col": args.reference_col,
            "target": args.target,
        }
    else:
        inputs = {"prompts": frame[args.prompt_col], "responses": frame[args.response_col], "references": references}
    estimate = panel.estimate_cost(**inputs, batch=args.batch)  # checks rows
    missing_keys = _missing_keys(judges, args.api_base)
    for name, keys in missing_keys.items():
        _say(f"note: {' or '.join(keys)} is not set; judge {name!r} will likely fail")
    if args.estimate:
        print(estimate)
        unknown = [j for j in estimate.judges if j.unknown_model]
        for j in unknown:
            _say(f"error: judge {j.judge!r}: {j.unknown_model} (with --api-base, a server of your own may name it)")
        return EXIT_USAGE if unknown else EXIT_OK
    if args.max_cost_usd is not None and args.no_cache:
        _say("note: with --no-cache a rerun with a larger --max-cost-usd pays again for the rows already judged")
    batching = {"batch": True, "batch_retry": args.batch_retry} if args.batch else {}
    result = panel.score(**inputs, progress=not args.quiet, max_cost_usd=args.max_cost_usd, **batching)
    cached = "" if args.no_cache else "; the judgments are in the call cache, so running again costs nothing"
    table = _output_table(frame, result)
    if args.output is not None:
        try:
            write_table(table, args.output)
        except OSError as exc:
            raise InputError(f"could not write {args.output}: {exc}{cached}") from exc
    if args.save is not None:
        try:
            result.save(args.save, overwrite=args.overwrite)
        except OSError as exc:
            raise InputError(f"could not save the run in {args.save}: {exc}{cached}") from exc
    _print_summary(result)
    if args.output is not None:
        print(f"wrote {len(table)} rows to {args.output}")
    if args.save is not None:
        print(f"saved the run in {args.save} (jw.load({str(args.save)!r}); judgewidgets compare BEFORE {args.save})")
    return _report_failures(result, args.max_failed_fraction, missing_keys)


def _quiet_table(result: PanelResult) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: reported per judge instead
        return result.to_df()


def _output_table(frame: pd.DataFrame, result: PanelResult) -> pd.DataFrame:
    """The input, columns and names unchanged, then each judge's score, the aggregates, the explanations and,
    for judges with failures, `<judge>_error`."""
    scored = _quiet_table(result).drop(columns=["prompt", "response", "reference"], errors="ignore")
    if "conversation" in scored:  # judged conversations: each row's own input row (one per turn with each_turn)
        frame = frame.iloc[scored.pop("conversation").tolist()]
        if scored["turn"].isna().all():
            scored = scored.drop(columns=["turn"])
    errors = result.votes.pivot(index="item", columns="judge", values="error").reindex(range(len(frame)))
    for judge in result.judges:
        if judge in errors and errors[judge].notna().any():
            scored[f"{judge}_error"] = errors[judge].to_numpy()
    return pd.concat([frame.reset_index(drop=True), scored.reset_index(drop=True)], axis=1)


def _print_summary(result: PanelResult) -> None:
    summary = result.summary()
    # A terminal's width: a column only where it says something (calls a budget did not run, prompt-cache reads and
    # writes, reasoning tokens, a price at all, a list price other than what was paid).
    zero = ("not_run", "prompt_cache_read_tokens", "prompt_cache_write_tokens", "reasoning_tokens")
    quiet = {c for c in zero if c in summary and not summary[c].fillna(0).astype(float).any()}
    quiet |= {c for c in ("cost_usd", "list_cost_usd") if c in summary and summary[c].isna().all()}
    if "list_cost_usd" in summary and summary["list_cost_usd"].equals(summary.get("cost_usd")):
        quiet.add("list_cost_usd")
    summary = summary.drop(columns=sorted(quiet))
    with pd.option_context("display.width", 120, "display.max_columns", 20, "display.precision", 3):
        print(summary.to_string())


def told_apart(result: PanelResult, questions: Sequence[str], labels: Sequence[str]) -> pd.DataFrame:
    """Per judge, then for the panel's average: the mean score on the good answers and on the bad ones, and on how
    many questions the good answer scored strictly above the bad one (a question with a failed score counts as not
    ordered). What the demo's footer shows: whether the judges tell a good answer from a bad one."""
    table = _quiet_table(result)
    columns = {**{judge: judge for judge in result.judges}, "panel average": "avg"}
    frame = table[list(columns.values())].assign(question=list(questions), label=list(labels))
    rows = []
    for name, column in columns.items():
        by = frame.pivot_table(index="question", columns="label", values=column, aggfunc="mean", dropna=False)
        good, bad = by.get("good"), by.get("bad")
        if good is None or bad is None:
            raise ValueError("told_apart needs labels 'good' and 'bad'")
        ordered = int((good > bad).sum())
        rows.append({"judge": name, "good": good.mean(), "bad": bad.mean(), "ordered": ordered, "questions": len(by)})
    return pd.DataFrame(rows)


def _report_failures(result: PanelResult, max_failed_fraction: float, missing_keys: dict[str, list[str]]) -> int:
    """One stderr line per judge with failed calls; status 1 when one failed on every row or beyond the limit."""
    from ._failures import judge_failures

    status = EXIT_OK
    for failures in judge_failures(result.vote_list, result.judges):
        if not failures.failed:
            continue
        line = failures.line()
        keys = missing_keys.get(failures.judge)
        if keys and failures.cause != "API key missing":
            line += f"; {' or '.join(keys)} is not set"
        _say(line)
        if failures.all_failed or failures.fraction > max_failed_fraction:
            status = EXIT_JUDGES_FAILED
    if status != EXIT_OK:
        limit = "every row" if max_failed_fraction >= 1 else f"more than {max_failed_fraction:g} of the rows"
        _say(f"error: a judge failed on {limit}; its failed rows are NaN in the output")
    return status


def _say(message: str) -> None:
    print(f"judgewidgets: {message}", file=sys.stderr)


def demo_panel() -> LLMPanel:
    """The demo's panel: three templates on the embedded judge, each read from its probabilities (the 0-100
    `continuous` template is not among them: the small judge answers it with 0 or 100 and nothing between)."""
    from .scoring._judge import LLMJudge
    from .scoring._panel import LLMPanel

    return LLMPanel(
        [
            LLMJudge("local", template="likert", name="local_likert", probability_weighted=True),
            LLMJudge("local", template="true_false_uncertain", name="local_verdict"),
            LLMJudge("local", template="true_false", name="local_true_false"),
        ]
    )


def _demo(args: argparse.Namespace) -> int:
    """Score the bundled example set (each question with a good and a bad answer) against its references."""
    from ._examples import load_example
    from .scoring._readable import readable_table

    examples = load_example()
    panel = demo_panel()
    print(
        f"Scoring {len(examples)} answers ({examples['prompt'].nunique()} questions, each with a good and a bad "
        f"answer, judged against its reference answer) with {panel!r} (the embedded Qwen2.5-Coder-1.5B judge)..."
    )
    result = panel.score(examples["prompt"], examples["response"], examples["reference"], progress=not args.quiet)
    print()
    print(readable_table(result, label=examples["label"]).to_text(width=DEMO_WIDTH))
    print()
    _print_summary(result)
    print()
    apart = told_apart(result, examples["prompt"], examples["label"])
    print("Good against bad answers: a judge that tells them apart scores each good answer above the bad answer to")
    print("the same question.")
    width = max(len(name) for name in apart["judge"]) + 2
    print(f"{'judge':<{width}}{'good':>6}{'bad':>7}   good above bad")
    for row in apart.itertuples():
        print(f"{row.judge:<{width}}{row.good:>6.2f}{row.bad:>7.2f}   on {row.ordered} of {row.questions} questions")
    return _report_failures(result, 1.0, {})


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if args.command == "score":
                return _score(args)
            if args.command == "compare":
                from .runs._command import compare_command

                return compare_command(args)
            return _demo(args)
        except (JudgeWidgetsError, ValueError) as exc:
            _say(f"error: {exc}")
            return EXIT_USAGE
        except KeyboardInterrupt:
            _say("interrupted; finished judgments are in the cache and will not be paid for again")
            return EXIT_INTERRUPTED
        finally:
            _print_warnings(caught)


def _print_warnings(caught: Sequence[warnings.WarningMessage]) -> None:
    """Our own warnings as one plain line each, without source paths; the libraries' import-time warnings
    (pydantic about litellm's types, ...) say nothing a command-line user can act on, so they are dropped."""
    package = str(Path(__file__).resolve().parent)
    seen = set()
    for warning in caught:
        message = str(warning.message)
        if issubclass(warning.category, CallsFailedWarning):
            continue  # the command names each judge's failed calls itself, one line each
        if message not in seen and str(Path(warning.filename).resolve()).startswith(package):
            seen.add(message)
            _say(f"warning: {message}")


if __name__ == "__main__":
    raise SystemExit(main())
