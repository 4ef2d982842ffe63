"""IPython magics: `%%judge` scores, grades, compares or rates the items of a cell; `%judge_config` sets defaults.

Session defaults are traitlets on `JudgeMagics`, so `%config JudgeMagics.default_judges = ["local"]` works and
nothing lives in module state.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from traitlets import Int, List, Unicode

from .._constants import DEFAULT_MAX_CONCURRENCY, LOCAL_MAX_CONCURRENCY
from .._display import notebook_frontend
from .._errors import JudgeWidgetsError
from ..engine._budget import check_max_cost
from ._cell import parse_items, parse_tournament
from ._chart_widget import EMBED_OPTIONS

if TYPE_CHECKING:
    from ..scoring._panel import LLMPanel

_MODES = ("score", "rubric", "pairwise", "tournament", "sequential")


@magics_class
class JudgeMagics(Magics):
    """`%%judge` and `%judge_config`. Defaults are configurable: `%config JudgeMagics.default_template = "likert"`."""

    default_judges = List(Unicode(), default_value=["local"], help="Judges used when --judges is not given.").tag(
        config=True
    )
    default_template = Unicode("likert", help="Scoring template used when --template is not given.").tag(config=True)
    cache_dir = Unicode("", help="Folder of the call cache ('' = the user cache folder).").tag(config=True)
    max_concurrency = Int(
        None,
        allow_none=True,
        help=f"Concurrent calls per model for every judge (None = each judge's own: {DEFAULT_MAX_CONCURRENCY}, "
        f"the embedded judge {LOCAL_MAX_CONCURRENCY}).",
    ).tag(config=True)
    api_base = Unicode("", help="Base URL of an OpenAI-compatible server for every judge ('' = none).").tag(config=True)

    @property
    def _shell(self) -> Any:
        """The IPython shell the magics are registered on (IPython types it as optional; a magic always has one)."""
        assert self.shell is not None
        return self.shell

    # --- %judge_config ------------------------------------------------------------------------------------

    @magic_arguments()
    @argument("--judges", help="default judges, comma-separated model strings")
    @argument("--template", help="default scoring template")
    @argument("--cache-dir", help="folder of the call cache")
    @argument(
        "--concurrency",
        help="concurrent calls per model for every judge; 'own' goes back to each judge's own (the default)",
    )
    @argument("--api-base", help="base URL of an OpenAI-compatible server ('' clears it)")
    @line_magic
    def judge_config(self, line: str) -> pd.Series:
        """Set session defaults for %%judge, then show them.

        Example: %judge_config --judges local,openai/gpt-4o-mini --template likert --concurrency 16
        """
        args = _parse(self.judge_config, line)
        if args.judges is not None:
            self.default_judges = _split(args.judges)
        if args.template is not None:
            self.default_template = args.template
        if args.cache_dir is not None:
            self.cache_dir = args.cache_dir
        if args.concurrency is not None:
            self.max_concurrency = _concurrency(args.concurrency)
        if args.api_base is not None:
            self.api_base = args.api_base
        return pd.Series(
            {
                "default_judges": ", ".join(self.default_judges),
                "default_template": self.default_template,
                "cache_dir": self.cache_dir or "(user cache folder)",
                "max_concurrency": self.max_concurrency
                or f"(each judge's own: {DEFAULT_MAX_CONCURRENCY}, local {LOCAL_MAX_CONCURRENCY})",
                "api_base": self.api_base or "(none)",
            },
            name="judgewidgets defaults",
        )

    # --- %%judge ------------------------------------------------------------------------------------------

    @magic_arguments()
    @argument("--judges", "-j", help="comma-separated judge models, e.g. local,openai/gpt-4o-mini")
    @argument("--template", "-t", help="scoring template: likert, continuous, true_false, true_false_uncertain")
    @argument("--rubric", "-r", help="a rubric: a .yaml file, a variable (Rubric or YAML text), or 'cell'")
    @argument("--mode", "-m", choices=_MODES, help="what to do (default: score, or rubric with --rubric)")
    @argument(
        "--aggregation",
        "-a",
        help="score: avg|median|min|max|weighted_avg column to lead with; rubric: majority|weighted|unanimous|any",
    )
    @argument("--weights", help="comma-separated judge weights (adds weighted_avg)")
    @argument("--explanations", "-e", action="store_true", help="ask judges to explain their scores")
    @argument("--data", "-d", help="a DataFrame variable holding the items")
    @argument("--prompt-col", default="prompt", help="column of prompts (default prompt)")
    @argument("--response-col", default="response", help="column of responses (default response)")
    @argument("--reference-col", default=None, help="column of reference answers")
    @argument(
        "--conversation-col",
        "-c",
        default=None,
        help="column of conversations in --data (OpenAI chat message lists, or their JSON) to judge",
    )
    @argument(
        "--target",
        choices=("last_turn", "whole", "each_turn"),
        default=None,
        help="what of each conversation is judged (default: the template's, else last_turn)",
    )
    @argument(
        "--commit-first",
        nargs="?",
        const="all",
        choices=("all", "short", "off"),
        default=None,
        help="the judge's model answers each question first and grades against that answer (rows without a "
        "reference); 'short': only when the answer is a word, number, name or date; 'off': never. Default: 'short' "
        "for the embedded judge under a correctness template, else off",
    )
    @argument("--solver", default=None, help="with --commit-first (implied): this model answers instead")
    @argument("--out", "-o", help="store the result object in this variable")
    @argument("--no-chart", action="store_true", help="show the table only")
    @argument("--api-base", help="base URL of an OpenAI-compatible server for the judges")
    @argument(
        "--max-cost-usd",
        type=float,
        default=None,
        help="budget in dollars: no call starts that could pass it; the items left are shown as not run",
    )
    @argument(
        "--batch",
        action="store_true",
        help="send the calls through the providers' batch APIs (OpenAI, Anthropic) at half the price; rerunning "
        "the cell picks up a batch still running",
    )
    @argument(
        "--batch-retry",
        choices=("live", "batch"),
        default=None,
        help="with --batch: resend what a batch left unanswered live (default) or as a new batch",
    )
    @argument(
        "--method",
        choices=("probability", "pointwise", "verdict", "likelihood"),
        default=None,
        help="pairwise / tournament: how a pair is decided (default: the judge's; 'likelihood' reads the model's "
        "own probability of each reply: the embedded judge or a llama.cpp server)",
    )
    @argument("--format", default="round_robin", help="tournament format: round_robin|swiss|adaptive")
    @argument("--K", type=float, default=10, help="sequential: precision parameter K")
    @argument("--alpha", type=float, default=0.05, help="sequential: significance level")
    @argument("--seed", type=int, default=None, help="seed for shuffling / tournaments")
    @argument("--labels", "-l", help="a person's labels on some items: a .csv/.jsonl/.parquet file or a variable")
    @argument("--label-col", default="label", help="column of the labels (default label)")
    @argument("--id-col", default=None, help="id column shared by --data and the labels, to match them by")
    @argument("--label-scale", default=None, help="LOW,HIGH of numeric labels, e.g. 1,5 (default 0,1)")
    @argument("--pass-threshold", type=float, default=None, help="with --labels: also the pass rate at this score")
    @line_cell_magic
    def judge(self, line: str, cell: str | None = None) -> Any:
        """Judge the items in the cell (or --data DF) and show the table and chart.

        As a line magic (`%judge --data df ...`) it judges a DataFrame; as a cell magic (`%%judge`) the cell
        body holds the items (or a rubric with `--rubric cell`).

        Examples:

            %%judge --judges local,openai/gpt-4o-mini --template likert
            prompt: What is the capital of Australia?
            response: Canberra.

            prompt: How many bones does an adult have?
            response: About 350.

            %judge --data answers --prompt-col question --response-col answer --out scored
            %judge --data chats --conversation-col messages --target each_turn --template likert
            %judge --rubric rubric.yaml --data answers
            %%judge --mode pairwise
            question: Explain recursion.
            a: A function calling itself ...
            b: Recursion is when ...

            %%judge --mode tournament
            questions: [What is 2+2?]
            candidates: {terse: ["4"], verbose: ["The sum of two and two is four."]}

            %%judge --mode sequential --K 5
            prompt: Summarise the plot of Hamlet.
            response: ...

        `{var}` in the cell body is replaced by the variable's value, as in other magics.

        `--method` decides each pair in pairwise and tournament mode: `pointwise` (each reply scored alone, the
        embedded judge's default), `verdict`, `probability`, or `likelihood`, which asks nothing and reads the
        judge model's own probability of each reply after the shared history (the embedded judge or a llama.cpp
        server; the twin conversations' best method):

            %judge --mode pairwise --data pairs --method likelihood

        With `--commit-first`, the judge's own model first answers each question that has no reference (its short
        answer) and the judges grade against that answer; `--solver MODEL` names another model to answer. The
        table then says where each reference came from (`reference_source`) and what was answered. The embedded
        judge does this by default under a template that judges correctness (likert, true_false_uncertain,
        true_false, continuous) when the answer it makes is short (`--commit-first off` turns it off). In every mode:
        score, rubric (on the criteria about correctness), pairwise and tournament (one answer per question for
        both orders and all candidates), sequential.

            %%judge --template true_false_uncertain --commit-first
            prompt: How many days are in a leap year?
            response: 365.

        With `--labels` (score mode), a person's labels on some of the items correct the judge's aggregate score:
        the mean score and, with `--pass-threshold T`, the pass rate (score ≥ T) are estimated by PPI++
        (`jw.estimate_quality`) and shown beside the judge's own and the labels' alone; `--out NAME` also keeps
        them in `NAME_estimates`. The labels are a file (.csv, .jsonl such as a LabelStore's, .parquet) or a
        variable (a DataFrame, LabelQueue or LabelStore), pass/fail or scores (`--label-scale 1,5`), matched to
        the items by `--id-col`, by their texts, or by a label store's item keys; they are checked before any call.
        With `--conversation-col C` each label is a conversation's (target last_turn or whole), matched by
        `--id-col`, by the labels table's own column C (the conversation itself), or by its judged texts.

            %judge --data answers --labels labels.csv --pass-threshold 0.5 --out scored
            %judge --data chats --conversation-col messages --labels verdicts --pass-threshold 0.5

        `--max-cost-usd D` is the run's budget: no call starts once the spend so far and the calls in flight
        (at their estimated cost) would pass D dollars; the items left are shown as not run (kind "budget") and
        the same cell with a larger budget pays only for them, the cache answering the rest.

            %judge --data answers --judges openai/gpt-4o-mini --max-cost-usd 0.50

        `--batch` sends the calls through the providers' batch APIs at half the price (score, rubric, pairwise and
        tournament modes); the batch is written down before it is submitted, so the same cell run again after a
        restart waits for it instead of paying twice (`jw.batches()` lists them).

            %judge --data answers --judges openai/gpt-4o-mini anthropic/claude-3-5-haiku-latest --batch
        """
        args = _parse(self.judge, line)
        cell = cell or ""
        body = self._shell.var_expand(cell, depth=1) if "{" in cell else cell
        mode = args.mode or ("rubric" if args.rubric else "score")
        self._check_conversation_options(args, mode)
        if (args.batch or args.batch_retry) and mode not in _BATCH_MODES:
            raise UsageError(f"--batch judges in --mode {', '.join(_BATCH_MODES)}, not --mode {mode}")
        if args.method and mode not in ("pairwise", "tournament"):
            raise UsageError(f"--method decides a pair (--mode pairwise or tournament), not --mode {mode}")
        try:
            check_max_cost(args.max_cost_usd)
        except ValueError as exc:
            raise UsageError(f"--max-cost-usd: {exc}") from None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                labels = self._labels(args, body, mode)  # checked before any call
                result, table, chart = getattr(self, f"_run_{mode}")(args, body)
                estimates = self._estimates(args, table, labels)
        except KeyboardInterrupt:
            raise UsageError(
                "interrupted: the judgments that finished are in the cache; run the cell again to resume"
            ) from None
        except (JudgeWidgetsError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        if args.out:
            self._shell.user_ns[args.out] = result
            if estimates:
                self._shell.user_ns[f"{args.out}_estimates"] = estimates
        calls_failed = getattr(result, "calls_failed", "")
        if calls_failed:  # above the table, as the result's own HTML has it (warned too, under the cell)
            from .._saved import failed_html

            display({"text/plain": calls_failed, "text/html": failed_html(calls_failed)}, raw=True)
        display(table)
        failures = _failures(result)
        if failures is not None:
            display(failures)
        for estimate in estimates.values():
            display(estimate)
        if chart is not None and not args.no_chart:
            return chart
        return None

    # --- modes --------------------------------------------------------------------------------------------

    def _judge_kwargs(self, args: Any) -> dict[str, Any]:
        # Unset, each judge keeps its own limit: the embedded judge has one slot and takes one call at a time,
        # so its calls queue in the engine rather than inside its timeout.
        kwargs: dict[str, Any] = {} if self.max_concurrency is None else {"max_concurrency": self.max_concurrency}
        if self.cache_dir:
            from ..engine import CallCache

            kwargs["cache"] = CallCache(Path(self.cache_dir).expanduser() / "calls.sqlite")
        api_base = args.api_base or self.api_base
        if api_base:
            kwargs["api_base"] = api_base
        if args.commit_first:
            from ..scoring._commit import commit_first_option

            kwargs["commit_first"] = commit_first_option(args.commit_first)
        if args.solver:
            from ..scoring._commit import solver_at

            kwargs["solver"] = solver_at(args.solver, api_base or None, kwargs.get("cache", True))
        return kwargs

    def _judges(self, args: Any) -> list[str]:
        return _split(args.judges) if args.judges else list(self.default_judges)

    def _items(self, args: Any, body: str) -> pd.DataFrame:
        if args.data:
            frame = self._shell.user_ns.get(args.data)
            if frame is None:
                raise UsageError(f"--data {args.data}: no such variable in the notebook")
            if not isinstance(frame, pd.DataFrame):
                raise UsageError(f"--data {args.data} is a {type(frame).__name__}, not a pandas DataFrame")
            columns = {args.prompt_col: "prompt", args.response_col: "response"}
            if args.reference_col:
                columns[args.reference_col] = "reference"
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise UsageError(
                    f"--data {args.data} has no column {', '.join(map(repr, missing))}; "
                    f"its columns are {list(frame.columns)}"
                )
            return frame[list(columns)].rename(columns=columns).reset_index(drop=True)
        return parse_items(body)

    def _check_conversation_options(self, args: Any, mode: str) -> None:
        """UsageError, before any call, for conversation options that cannot apply."""
        if args.target and not args.conversation_col:
            raise UsageError("--target goes with --conversation-col")
        if not args.conversation_col:
            return
        if not args.data:
            raise UsageError("--conversation-col names a column of --data DF")
        if mode not in ("score", "rubric", "sequential"):
            raise UsageError(f"--conversation-col: --mode {mode} reads conversations from its DataFrame's columns")

    def _conversations(self, args: Any) -> pd.DataFrame | None:
        """The --data DataFrame when its --conversation-col holds the conversations to judge, else None."""
        if not args.conversation_col:
            return None
        frame = self._shell.user_ns.get(args.data)
        if not isinstance(frame, pd.DataFrame):
            raise UsageError(f"--data {args.data} must name a DataFrame with a column {args.conversation_col!r}")
        return frame

    def _labels(self, args: Any, body: str, mode: str) -> tuple[pd.Series, bool] | None:
        """The labels of `--labels` on the items' positions, on [0, 1], and whether they are pass/fail; None
        without `--labels`. Every problem is a UsageError, before any judge is called."""
        from ._labels import encode, item_frame, match_labels, parse_scale, read_labels

        if not args.labels:
            options = (("--pass-threshold", args.pass_threshold), ("--label-scale", args.label_scale))
            given = [option for option, value in (*options, ("--id-col", args.id_col)) if value is not None]
            if given:
                raise UsageError(f"{', '.join(given)} goes with --labels")
            return None
        if mode != "score":
            raise UsageError(f"--labels corrects the score mode's aggregate; not --mode {mode}")
        if args.pass_threshold is not None and not 0.0 <= args.pass_threshold <= 1.0:
            raise UsageError(f"--pass-threshold must be a normalised score in [0, 1], got {args.pass_threshold}")
        chats = self._conversations(args)
        if chats is None:
            items = self._items(args, body)
        else:  # one label per conversation: checked (and each_turn refused) before any call
            from .._rows import row_items

            judged = row_items(
                chats,
                conversation_col=args.conversation_col,
                target=args.target,
                default_target=self._panel(args).default_target,
                reference_col=args.reference_col,
                why="--labels gives one label per conversation",
            )
            items = item_frame(judged)
        ids = None
        if args.id_col:
            frame = self._shell.user_ns.get(args.data) if args.data else None
            if not isinstance(frame, pd.DataFrame) or args.id_col not in frame.columns:
                raise UsageError(f"--id-col {args.id_col}: needs --data DF with a column {args.id_col!r}")
            ids = frame[args.id_col].tolist()
        columns = {"prompt": args.prompt_col, "response": args.response_col, "reference": args.reference_col}
        table = read_labels(args.labels, self._shell.user_ns)
        matched = match_labels(
            items,
            table,
            label_col=args.label_col,
            id_col=args.id_col,
            ids=ids,
            text_cols=columns,
            conversation_col=args.conversation_col,
        )
        return encode(matched, parse_scale(args.label_scale))

    def _estimates(self, args: Any, table: pd.DataFrame, labels: tuple[pd.Series, bool] | None) -> dict[str, Any]:
        """The aggregate score's estimates corrected by the labels (none without them)."""
        if labels is None:
            return {}
        from ._labels import estimates

        column = args.aggregation or ("weighted_avg" if "weighted_avg" in table.columns else "avg")
        scores = table[column].astype(float).reset_index(drop=True)
        return estimates(scores, labels[0], labels[1], args.pass_threshold)

    def _panel(self, args: Any) -> LLMPanel:
        """The panel of the score mode, built from the options and the session defaults (nothing called yet)."""
        from ..scoring._panel import LLMPanel

        weights = [float(w) for w in _split(args.weights)] if args.weights else None
        return LLMPanel(
            self._judges(args),
            template=args.template or self.default_template,
            weights=weights,
            explanations=args.explanations,
            **self._judge_kwargs(args),
        )

    def _run_score(self, args: Any, body: str) -> tuple[Any, pd.DataFrame, Any]:
        chats = self._conversations(args)
        items = self._items(args, body) if chats is None else pd.DataFrame()
        if chats is None and "response" not in items:
            raise UsageError("every item needs a `response:`")
        panel = self._panel(args)
        if chats is not None:
            result = panel.score(
                data=chats,
                conversation_col=args.conversation_col,
                reference_col=args.reference_col,
                target=args.target,
                max_cost_usd=args.max_cost_usd,
                **_batching(args),
            )
        else:
            result = panel.score(
                items["prompt"],
                items["response"],
                items.get("reference"),
                max_cost_usd=args.max_cost_usd,
                **_batching(args),
            )
        table = result.to_df()
        if args.aggregation:
            if args.aggregation not in table.columns:
                raise UsageError(
                    f"--aggregation {args.aggregation!r}: choose avg, median, min, max or weighted_avg "
                    "(weighted_avg needs --weights)"
                )
            lead = ["prompt", "response", args.aggregation]
            table = table[lead + [c for c in table.columns if c not in lead]]
        return result, table, result.chart()

    def _rubric(self, args: Any, body: str) -> Any:
        from ..rubrics import Rubric

        source = args.rubric
        if source == "cell":
            return Rubric.from_yaml(body)
        value = self._shell.user_ns.get(source)
        if isinstance(value, Rubric):
            return value
        if isinstance(value, str):
            return Rubric.from_yaml(value)
        if Path(source).expanduser().exists():
            return Rubric.from_yaml(Path(source).expanduser())
        raise UsageError(f"--rubric {source!r} is neither a variable holding a Rubric or YAML, a file, nor 'cell'")

    def _run_rubric(self, args: Any, body: str) -> tuple[Any, pd.DataFrame, Any]:
        from ..rubrics import CriterionGrader

        if not args.rubric:
            raise UsageError("--mode rubric needs --rubric FILE|VARIABLE|cell")
        rubric = self._rubric(args, body)
        if args.rubric == "cell" and not args.data:
            raise UsageError("with --rubric cell the cell holds the rubric; pass the items with --data DF")
        kwargs = self._judge_kwargs(args)
        grader = CriterionGrader(
            judges=self._judges(args), aggregation=args.aggregation or "majority", seed=args.seed, **kwargs
        )
        chats = self._conversations(args)
        if chats is not None:
            result = grader.grade_many(
                rubric,
                chats,
                conversation_col=args.conversation_col,
                reference_col=args.reference_col,
                target=args.target,
                max_cost_usd=args.max_cost_usd,
                **_batching(args),
            )
            return result, result.to_df(), result.verdict_chart()
        items = self._items(args, "" if args.rubric == "cell" else body)
        data = items.rename(columns={"prompt": "prompt", "response": "response"})
        result = grader.grade_many(
            rubric,
            data,
            reference_col="reference" if "reference" in data else None,
            max_cost_usd=args.max_cost_usd,
            **_batching(args),
        )
        return result, result.to_df(), result.verdict_chart()

    def _run_pairwise(self, args: Any, body: str) -> tuple[Any, pd.DataFrame, Any]:
        from ..pairwise import PairwiseJudge

        if args.data:
            items = self._shell.user_ns.get(args.data)
            if not isinstance(items, pd.DataFrame):
                raise UsageError(f"--data {args.data} must name a DataFrame with question, response_a, response_b")
        else:
            items = parse_items(body).rename(columns={"prompt": "question"})
        missing = {"question", "response_a", "response_b"} - set(items.columns)
        if {"history", "conversation_a"} & set(items.columns):
            missing = set()  # conversations: compare_many reads history / conversation_a, conversation_b
        if missing:
            raise UsageError(f"pairwise items need question, a and b; missing {sorted(missing)}")
        judge = PairwiseJudge(self._judges(args)[0], method=args.method, **self._judge_kwargs(args))
        table = judge.compare_many(items, max_cost_usd=args.max_cost_usd, **_batching(args))
        return table, table, None

    def _run_tournament(self, args: Any, body: str) -> tuple[Any, pd.DataFrame, Any]:
        from ..pairwise import PairwiseJudge, Tournament

        questions, candidates = parse_tournament(body)
        judge = PairwiseJudge(self._judges(args)[0], method=args.method, **self._judge_kwargs(args))
        tournament = Tournament(judge=judge, format=args.format, seed=args.seed or 0)
        result = tournament.run(questions, candidates, max_cost_usd=args.max_cost_usd, **_batching(args))
        return result, result.ranking, result.chart()

    def _run_sequential(self, args: Any, body: str) -> tuple[Any, pd.DataFrame, Any]:
        from ..sequential import SequentialRater
        from ._live import LiveConvergence

        rater = SequentialRater(
            judges=self._judges(args),
            K=args.K,
            alpha=args.alpha,
            seed=args.seed if args.seed is not None else 0,
            **self._judge_kwargs(args),
        )
        chats = self._conversations(args)
        if chats is not None:
            frame = rater.rate_many(
                chats,
                conversation_col=args.conversation_col,
                reference_col=args.reference_col,
                target=args.target,
                max_cost_usd=args.max_cost_usd,
            )
            return frame, frame, frame.chart() if hasattr(frame, "chart") else None
        items = self._items(args, body)
        if len(items) == 1:
            live = LiveConvergence()
            display(live.widget)
            result = rater.rate(
                items.loc[0, "prompt"],
                items.loc[0, "response"],
                on_update=live.update,
                max_cost_usd=args.max_cost_usd,
            )
            live.update(result)
            summary = pd.DataFrame(
                [
                    {
                        "mean": result.mean,
                        "half_width": result.half_width,
                        "n": result.n,
                        "status": getattr(result, "status", None),
                    }
                ]
            )
            return result, summary, None
        frame = rater.rate_many(items, max_cost_usd=args.max_cost_usd)
        return frame, frame, frame.chart() if hasattr(frame, "chart") else None


_BATCH_MODES = ("score", "rubric", "pairwise", "tournament")


def _batching(args: Any) -> dict[str, Any]:
    """The run method's batch arguments of `--batch` / `--batch-retry`."""
    return {"batch": True, "batch_retry": args.batch_retry} if args.batch else {}


def _failures(result: Any) -> Any:
    """The failed judgments of a scoring run, kind first, so a refused input stands apart from an outage."""
    errors = getattr(result, "errors", None)
    if not isinstance(errors, pd.DataFrame) or errors.empty or "kind" not in errors:
        return None
    from .._review import FAILURE_KINDS

    table = errors[["item", "judge", "kind", "error"]].copy()
    table.insert(3, "what to do", [FAILURE_KINDS.get(kind, "") for kind in table["kind"]])
    return table


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _parse(magic: Any, line: str) -> Any:
    try:
        return parse_argstring(magic, line)
    except UsageError:
        raise
    except SystemExit:
        raise UsageError(f"could not read the options {line!r}; see %judge? for the list") from None
    except Exception as exc:  # argparse errors surface as UsageError in IPython
        raise UsageError(f"{exc}; see %%judge? for the options") from None


def use_offline_charts() -> bool:
    """Render every Altair chart, the user's own too, through JupyterChart with the JavaScript bundled by
    vl-convert, so that charts show without reaching a CDN. The package's own charts need none of this (they draw
    offline by themselves); this switches altair's renderer for the session, so it is only done when called.
    Returns False, changing nothing, without vl-convert."""
    import importlib.util

    if importlib.util.find_spec("vl_convert") is None:
        return False
    import altair as alt

    alt.JupyterChart.enable_offline()
    alt.renderers.enable("jupyter", offline=True, embed_options=dict(EMBED_OPTIONS))
    return True


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def show_magic_help_as_output(shell: Any, data: Any, start: int = 0, screen_lines: int = 0) -> None:
    """IPython's `show_in_pager` hook for the help of our magics (`%%judge?`, `%judge_config?`) in a kernel: the
    help becomes the cell's output. A kernel otherwise sends help as a pager payload of its execute reply, which
    JupyterLab shows but nbconvert, nbclient and papermill drop, so `%%judge?` printed nothing there.
    Anything else, and everything in terminal IPython, goes on to the pager (TryNext)."""
    from IPython.core.error import TryNext

    bundle = data if isinstance(data, dict) else {"text/plain": str(data)}
    text = _ANSI.sub("", str(bundle.get("text/plain", "")))
    usages = ("%judge [", "%judge_config [")
    if not notebook_frontend() or not any(usage in text for usage in usages):
        raise TryNext
    display(bundle, raw=True)


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext judgewidgets` registers the magics, and in a kernel shows their help (`%%judge?`) as the cell's
    output. It leaves altair's renderer alone: the package's charts draw offline by themselves, in notebooks and
    in terminal IPython (`use_offline_charts()` and `use_file_charts()` switch the renderer for every chart)."""
    ipython.register_magics(JudgeMagics)
    hooks = getattr(ipython.hooks, "show_in_pager", None)
    chain = list(hooks) if hooks is not None and hasattr(hooks, "__iter__") else []
    if not any(getattr(command, "__func__", None) is show_magic_help_as_output for _, command in chain):
        ipython.set_hook("show_in_pager", show_magic_help_as_output, 50)


def _concurrency(text: str) -> int | None:
    """`--concurrency`'s value: a whole number of calls at least 1, or 'own' (None: each judge's own)."""
    if text.strip().lower() == "own":
        return None
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--concurrency must be a whole number of calls or 'own', got {text!r}") from None
    if value < 1:
        raise UsageError("--concurrency must be at least 1")
    return value
