"""The panel builder: pick judges, template or rubric, weights and aggregation, then judge a DataFrame.

`PanelBuilderModel` holds the state and the logic and is tested without a browser; `PanelBuilder` is the thin
ipywidgets view over it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import html
import math
import threading
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .._errors import ConfigurationError, InputError
from ..scoring._commit import CommitFirst
from ..templates import BUILTIN_TEMPLATES

SUGGESTED_MODELS = (
    "local",
    "openai/gpt-4o-mini",
    "openai/gpt-4o",
    "anthropic/claude-3-5-haiku-20241022",
    "gemini/gemini-1.5-flash",
    "ollama/llama3.1",
)
AGGREGATIONS = ("avg", "median", "min", "max", "weighted_avg")
RUBRIC = "rubric (YAML)"
NO_REFERENCE = "(none)"
# The commit-first choices as the builder lists them, and the judges' `commit_first=` each stands for (None: each
# judge's own default, see `commit_first_default`); the same choices as `%%judge --commit-first [all|short]`.
COMMIT_FIRST: dict[str, CommitFirst] = {"judge's default": None, "on": True, "short answers": "short", "off": False}


@dataclass
class JudgeChoice:
    model: str
    weight: float = 1.0


@dataclass
class PanelBuilderModel:
    """Everything the builder knows, with no widget in sight."""

    data: pd.DataFrame | None = None
    judges: list[JudgeChoice] = field(default_factory=list)
    template: str = "likert"
    rubric_yaml: str = ""
    aggregation: str = "avg"
    explanations: bool = False
    prompt_col: str = "prompt"
    response_col: str = "response"
    # The column of reference answers the judges grade against (None: no reference). "reference" by default, kept
    # only when the data has that column.
    reference_col: str | None = "reference"
    # Whether the judges answer each question first and grade against that answer where a row has no reference
    # (`LLMJudge(commit_first=)`: True, "short", False; None keeps each judge's own default).
    commit_first: CommitFirst = None
    judge_kwargs: dict[str, Any] = field(default_factory=dict)
    result: Any = None

    def __post_init__(self) -> None:
        columns = [] if self.data is None else list(self.data.columns)
        if columns:
            if self.prompt_col not in columns:
                self.prompt_col = columns[0]
            if self.response_col not in columns and len(columns) > 1:
                self.response_col = columns[1]
        if self.reference_col == "reference" and "reference" not in columns:
            self.reference_col = None

    # --- judges -------------------------------------------------------------------------------------------

    def add_judge(self, model: str, weight: float = 1.0) -> None:
        model = (model or "").strip()
        if not model:
            raise ConfigurationError("type a model: 'local' or a litellm model string such as openai/gpt-4o-mini")
        if not (isinstance(weight, (int, float)) and math.isfinite(weight) and weight > 0):
            raise ConfigurationError(f"a judge's weight must be a positive number, got {weight!r}")
        self.judges.append(JudgeChoice(model, float(weight)))

    def remove_judge(self, index: int) -> None:
        del self.judges[index]

    @property
    def weighted(self) -> bool:
        return any(j.weight != 1.0 for j in self.judges)

    # --- what it builds -----------------------------------------------------------------------------------

    @property
    def uses_rubric(self) -> bool:
        return self.template == RUBRIC

    def build(self) -> Any:
        """The configured LLMPanel, or a CriterionGrader when a rubric is chosen."""
        from ..rubrics import CriterionGrader
        from ..scoring._judge import LLMJudge
        from ..scoring._panel import LLMPanel

        if not self.judges:
            raise ConfigurationError("add at least one judge")
        if self.uses_rubric:
            judges = [
                LLMJudge(j.model, name=f"judge_{i + 1}", weight=j.weight, **self.judge_kwargs)
                for i, j in enumerate(self.judges)
            ]
            return CriterionGrader(judges=judges, aggregation="weighted" if self.weighted else "majority")
        if self.template not in BUILTIN_TEMPLATES:
            raise ConfigurationError(f"unknown template {self.template!r}")
        return LLMPanel(
            [j.model for j in self.judges],
            template=self.template,
            weights=[j.weight for j in self.judges] if self.weighted or self.aggregation == "weighted_avg" else None,
            explanations=self.explanations,
            commit_first=self.commit_first,
            **self.judge_kwargs,
        )

    def rubric(self) -> Any:
        from ..rubrics import Rubric

        if not self.rubric_yaml.strip():
            raise ConfigurationError("paste a rubric in YAML (a list of criteria with requirement and weight)")
        return Rubric.from_yaml(self.rubric_yaml)

    def _columns(self) -> tuple[pd.Series, pd.Series]:
        if self.data is None or self.data.empty:
            raise InputError("no data: pass a DataFrame, e.g. jw.PanelBuilder(df)")
        for col in (self.prompt_col, self.response_col, self.reference_col):
            if col is not None and col not in self.data.columns:
                raise InputError(f"the data has no column {col!r}; its columns are {list(self.data.columns)}")
        return self.data[self.prompt_col], self.data[self.response_col]

    def references(self) -> list[str | None] | None:
        """The chosen column's reference answers (None for a blank cell), or None when no column is chosen."""
        if self.reference_col is None or self.data is None or self.reference_col not in self.data.columns:
            return None
        return [None if _blank(value) else str(value) for value in self.data[self.reference_col]]

    def estimate(self) -> str:
        """A one-line cost estimate of the run (no call is made)."""
        prompts, responses = self._columns()
        built = self.build()
        if self.uses_rubric:
            calls = len(prompts) * len(self.judges) * len(self.rubric())
            return f"{calls} judge calls ({len(prompts)} items × {len(self.judges)} judges × criteria)"
        estimate = built.estimate_cost(prompts, responses, self.references())
        total = estimate.total_usd
        cost = "unknown (no price for a model)" if total is None else f"${total:.4f}"
        calls = sum(j.calls for j in estimate.judges)
        return f"{calls} judge calls, estimated cost {cost}"

    async def arun(self, progress: Any = True) -> Any:
        """Judge the data with the configured panel (or rubric grader); the result is also kept on `result`."""
        prompts, responses = self._columns()
        built = self.build()
        references = self.references()
        if self.uses_rubric:
            frame = pd.DataFrame({"prompt": prompts.to_numpy(), "response": responses.to_numpy()})
            if references is not None:
                frame["reference"] = references
            self.result = await built.agrade_many(
                self.rubric(), frame, reference_col=None if references is None else "reference", progress=progress
            )
        else:
            self.result = await built.ascore(prompts, responses, references, progress=progress)
        return self.result

    def table(self) -> pd.DataFrame:
        """The result table, led by the chosen aggregation."""
        frame = self.result.to_df()
        if not self.uses_rubric and self.aggregation in frame.columns:
            lead = ["prompt", "response", self.aggregation]
            frame = frame[lead + [c for c in frame.columns if c not in lead]]
        return frame

    def chart(self) -> Any:
        return self.result.verdict_chart() if self.uses_rubric else self.result.chart()


def _blank(value: Any) -> bool:
    """A cell with no reference in it: None, NaN or only whitespace."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    return isinstance(value, str) and not value.strip()


class _BarProgress:
    """Adapts an ipywidgets progress bar (and the status line under it) to the engine's Progress role."""

    def __init__(self, bar: Any, note: Any = None) -> None:
        self.bar = bar
        self.note = note
        self._said = note.value if note is not None else ""

    def advance(self, n: int = 1) -> None:
        self.bar.value = min(self.bar.max, self.bar.value + n)

    def status(self, text: str | None) -> None:
        """Show on the status line how a rate limit holds the run back (the bar turns amber meanwhile)."""
        self.bar.bar_style = "warning" if text else ""
        if self.note is not None:
            self.note.value = f"{self._said} ({html.escape(text)})" if text else self._said

    def close(self) -> None:
        self.bar.bar_style = "success"


class PanelBuilder:
    """An ipywidgets panel builder over a DataFrame. `.panel` is the configured LLMPanel, `.result` the last
    result; `.widget` is what is displayed (the builder also displays itself)."""

    def __init__(self, data: pd.DataFrame | None = None, **judge_kwargs: Any) -> None:
        import ipywidgets as w

        self.model = PanelBuilderModel(data=data, judge_kwargs=judge_kwargs)
        self._future: concurrent.futures.Future[Any] | None = None
        self._shown = threading.Event()
        columns = list(data.columns) if data is not None else []
        self.model_input = w.Combobox(
            placeholder="local, openai/gpt-4o-mini, ...",
            options=list(SUGGESTED_MODELS),
            ensure_option=False,
            description="judge",
            layout=w.Layout(width="360px"),
        )
        self.weight_input = w.BoundedFloatText(
            value=1.0, min=0.01, max=100, step=0.5, description="weight", layout=w.Layout(width="170px")
        )
        self.add_button = w.Button(description="Add judge", icon="plus", button_style="info")
        self.judge_list = w.VBox()
        self.template = w.Dropdown(
            options=[*sorted(BUILTIN_TEMPLATES), RUBRIC], value=self.model.template, description="template"
        )
        self.rubric = w.Textarea(
            placeholder="- name: correct\n  requirement: ...\n  weight: 5",
            description="rubric",
            layout=w.Layout(width="560px", height="120px", display="none"),
        )
        self.aggregation = w.Dropdown(options=list(AGGREGATIONS), value="avg", description="aggregate")
        self.explanations = w.Checkbox(value=False, description="explanations")
        self.prompt_col = w.Dropdown(
            options=columns, value=self.model.prompt_col if columns else None, description="prompt col"
        )
        self.response_col = w.Dropdown(
            options=columns, value=self.model.response_col if columns else None, description="response col"
        )
        self.reference_col = w.Dropdown(
            options=[NO_REFERENCE, *columns],
            value=self.model.reference_col or NO_REFERENCE,
            description="reference col",
        )
        self.commit_first = w.Dropdown(
            options=list(COMMIT_FIRST),
            description="commit first",  # the judges answer a question with no reference, then grade against that
        )
        for labelled in (self.prompt_col, self.response_col, self.reference_col, self.commit_first):
            labelled.style.description_width = "90px"  # "reference col" whole, not "reference ..."
        self.cost = w.HTML("<i>add a judge to see the estimated cost</i>")
        self.run_button = w.Button(description="Run", icon="play", button_style="success")
        self.progress = w.IntProgress(value=0, min=0, max=1, description="progress", layout=w.Layout(width="560px"))
        self.status = w.HTML("")
        self.output = w.Output()
        self.add_button.on_click(lambda _: self._add())
        self.run_button.on_click(lambda _: self.run())
        for control in (
            self.template,
            self.aggregation,
            self.explanations,
            self.prompt_col,
            self.response_col,
            self.reference_col,
            self.commit_first,
            self.rubric,
        ):
            control.observe(self._sync, names="value")
        self.widget = w.VBox(
            [
                w.HTML("<h4>judgewidgets · panel builder</h4>"),
                w.HBox([self.model_input, self.weight_input, self.add_button]),
                self.judge_list,
                w.HBox([self.template, self.aggregation, self.explanations]),
                self.rubric,
                w.HBox([self.prompt_col, self.response_col]),
                w.HBox([self.reference_col, self.commit_first]),
                self.cost,
                w.HBox([self.run_button, self.progress]),
                self.status,
                self.output,
            ]
        )
        self.widget.add_class("judgewidgets-panel-builder")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    # --- thin view ------------------------------------------------------------------------------------------

    @property
    def panel(self) -> Any:
        """The configured LLMPanel (or CriterionGrader with a rubric)."""
        return self.model.build()

    @property
    def result(self) -> Any:
        return self.model.result

    def add_judge(self, model: str, weight: float = 1.0) -> None:
        self.model_input.value = model
        self.weight_input.value = weight
        self._add()

    def _add(self) -> None:
        try:
            self.model.add_judge(self.model_input.value, self.weight_input.value)
        except ConfigurationError as exc:
            self.status.value = f"<span style='color:#b00'>{exc}</span>"
            return
        self.model_input.value = ""
        self._render_judges()
        self._sync()

    def _render_judges(self) -> None:
        import ipywidgets as w

        rows = []
        for index, judge in enumerate(self.model.judges):
            remove = w.Button(description="remove", icon="trash", layout=w.Layout(width="90px"))
            remove.on_click(lambda _, i=index: self._remove(i))
            rows.append(
                w.HBox([w.HTML(f"<code>judge_{index + 1}</code> {judge.model} · weight {judge.weight:g}"), remove])
            )
        self.judge_list.children = tuple(rows)

    def _remove(self, index: int) -> None:
        self.model.remove_judge(index)
        self._render_judges()
        self._sync()

    def _sync(self, *_: Any) -> None:
        m = self.model
        m.template = self.template.value
        m.aggregation = self.aggregation.value
        m.explanations = self.explanations.value
        m.prompt_col = self.prompt_col.value
        m.response_col = self.response_col.value
        m.reference_col = None if self.reference_col.value == NO_REFERENCE else self.reference_col.value
        m.commit_first = COMMIT_FIRST[self.commit_first.value]
        m.rubric_yaml = self.rubric.value
        self.rubric.layout.display = "" if m.uses_rubric else "none"
        try:
            self.cost.value = m.estimate() if m.judges else "<i>add a judge to see the estimated cost</i>"
        except Exception as exc:  # an estimate is advisory: show why it is unavailable
            self.cost.value = f"<i>no estimate: {exc}</i>"

    def run(self) -> concurrent.futures.Future[Any]:
        """Start judging in the background; the table and chart appear below when done (`wait()` blocks)."""
        from .._runner import _background_loop

        self._sync()
        try:
            m = self.model
            prompts, _ = m._columns()
            m.build()
            calls = len(prompts) * len(m.judges) * (len(m.rubric()) if m.uses_rubric else 1)
        except (ConfigurationError, InputError) as exc:
            self.status.value = f"<span style='color:#b00'>{exc}</span>"
            future: concurrent.futures.Future[Any] = concurrent.futures.Future()
            future.set_exception(exc)
            return future
        self.progress.max, self.progress.value, self.progress.bar_style = max(calls, 1), 0, ""
        self.status.value = f"judging {calls} calls…"
        self.run_button.disabled = True
        self._shown.clear()
        loop = _background_loop().loop
        self._future = asyncio.run_coroutine_threadsafe(
            self.model.arun(progress=_BarProgress(self.progress, self.status)), loop
        )
        self._future.add_done_callback(self._show)
        return self._future

    def wait(self, timeout: float | None = None) -> Any:
        """Block until the current run finishes; returns its result."""
        if self._future is None:
            raise RuntimeError("nothing is running: click Run (or call run()) first")
        self._future.result(timeout)
        self._shown.wait(timeout)  # the table and chart are drawn by a callback that runs just after
        return self.model.result

    def _show(self, future: concurrent.futures.Future[Any]) -> None:
        try:
            self._draw(future)
        finally:
            self._shown.set()

    def _draw(self, future: concurrent.futures.Future[Any]) -> None:
        # The last run's table and chart go now, by the widget's state (as the new ones are added), not by a
        # clear_output message: sent from outside a cell, the front end did not always apply it and kept the old
        # table beside the new one.
        self.output.outputs = ()
        self.run_button.disabled = False
        if future.cancelled():
            self.status.value = "cancelled"
            return
        error = future.exception()
        if error is not None:
            self.status.value = f"<span style='color:#b00'>{type(error).__name__}: {error}</span>"
            return
        self.status.value = f"done: {len(self.model.table())} rows"
        calls_failed = getattr(self.model.result, "calls_failed", "")
        if calls_failed:  # where the user looks: the status line and above the table (a warning here has no cell)
            from IPython.display import HTML

            from .._saved import failed_html

            self.status.value += f"; <span style='color:#b00'>{html.escape(calls_failed)}</span>"
            self.output.append_display_data(HTML(failed_html(calls_failed)))
        self.output.append_display_data(self.model.table())
        self.output.append_display_data(self.model.chart())
