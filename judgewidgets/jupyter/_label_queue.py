"""The labelling widget: a thin view over LabelQueueModel, made for the keyboard."""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from typing import Any

from .._errors import InputError
from ..estimates import estimate_quality
from ..labels import LabelQueueModel, LabelStore
from ..labels._kinds import LabelValue
from ..labels._plan import LabelPlan
from ._explorer import _score

_HIDDEN = "<p><i>The judges' verdicts stay hidden until you have labelled this item.</i></p>"


class LabelQueue:
    """`jw.LabelQueue(df_or_result, kind="pass_fail", store="labels.jsonl")`: label items one at a time.

    Every label is written to `store` the moment it is given (a kernel restart or a crash loses none), and
    reopening the same store resumes at the first unlabelled item. The judges' verdicts on an item stay hidden
    until you have labelled it. Keyboard: type a label in the box and press Enter (p / f, a / b / t, or a
    score; > next, < previous, c clear, go 17 to show item 17), or Tab through the buttons. `kind` is
    "pass_fail", "score" (with `scale=(1, 5)`) or "pairwise"; the other options are LabelQueueModel's. `labels`
    is a DataFrame of the labelled items, ready for `judge.align(queue.labels, label="label")`.

    `order="active", plan=jw.label_plan(result, budget=...)` asks for the items the plan drew, in its order, and
    saves each label with the probability its item was drawn with; the queue then shows the interval so far and,
    with `target_width=`, about how many more labels reach it. The counts follow every label written through
    the store, from this widget or from code in another cell.
    """

    def __init__(
        self,
        data: Any,
        kind: str = "pass_fail",
        store: str | os.PathLike[str] | LabelStore | None = "labels.jsonl",
        *,
        scale: tuple[float, float] | None = None,
        order: str | Sequence[Any] | None = None,
        seed: int = 0,
        plan: LabelPlan | None = None,
        target_width: float | None = None,
        **columns: Any,
    ) -> None:
        import ipywidgets as w

        self.model = LabelQueueModel(
            data,
            kind,
            store,
            scale=scale,
            order=order,
            seed=seed,
            plan=plan,
            target_width=target_width,
            estimator=estimate_quality,
            **columns,
        )
        hint = f"type {self.model.kind.describe()}, then Enter (> next, < previous, c clear, go <item>)"
        self.typed = w.Text(
            placeholder=hint, description="label", continuous_update=False, layout=w.Layout(width="520px")
        )
        self.buttons = [
            w.Button(
                description=f"{option} ({self.model.kind.shortcut(option)})",
                tooltip=f"label this item {option}: type {self.model.kind.shortcut(option)} + Enter",
                tabbable=True,
            )
            for option in self.model.kind.options
        ]
        self.clear_button = w.Button(description="clear (c)", tooltip="remove this item's label", tabbable=True)
        self.note = w.Text(placeholder="a note, saved with the next label (optional)", description="note")
        self.prev_button = w.Button(description="previous (<)", icon="arrow-left", tabbable=True)
        self.next_button = w.Button(description="next (>)", icon="arrow-right", tabbable=True)
        self.unlabelled_button = w.Button(description="next unlabelled", icon="forward", tabbable=True)
        self.header = w.HTML()
        self.card = w.HTML()
        self.verdicts = w.HTML()
        self.last = w.HTML()
        self.status = w.HTML()
        self.readout = w.HTML()
        for option, button in zip(self.model.kind.options, self.buttons):
            button.on_click(lambda _, value=option: self.give(value))
        self.clear_button.on_click(lambda _: self._act(self.model.clear))
        self.prev_button.on_click(lambda _: self._act(lambda: self.model.move(-1)))
        self.next_button.on_click(lambda _: self._act(lambda: self.model.move(1)))
        self.unlabelled_button.on_click(lambda _: self._act(self._to_unlabelled))
        self.typed.observe(self._on_typed, names="value")
        self.label_row = w.HBox([*self.buttons, self.clear_button])
        self.move_row = w.HBox([self.prev_button, self.next_button, self.unlabelled_button])
        # DOM order is the tab order: the typing box, the labels, the note, then moving on.
        self.widget = w.VBox(
            [
                self.header,
                self.readout,
                self.card,
                self.typed,
                self.label_row,
                self.note,
                self.move_row,
                self.status,
                self.verdicts,
                self.last,
            ]
        )
        self.widget.add_class("judgewidgets-label-queue")
        problems = self.model.store.problems
        if problems:
            listed = "".join(f"<li>{html.escape(p)}</li>" for p in problems[:5])
            self.status.value = (
                f"<span style='color:#b00'>{len(problems)} line(s) of the label store could not be read and are "
                f"left out (those items count as unlabelled):</span><ul>{listed}</ul>"
            )
        self.model.subscribe(self._render)
        self._render()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    @property
    def labels(self) -> Any:
        """The labelled items as a DataFrame: the data's columns, then item, label, who, when."""
        return self.model.labels

    @property
    def store(self) -> LabelStore:
        return self.model.store

    def give(self, value: LabelValue) -> None:
        """Label the current item `value` (what a button does), then go on to the next unlabelled one."""
        row = self.model.current
        try:
            self.model.label(value, note=self.note.value.strip() or None, advance=True)
        except InputError as error:
            self.status.value = f"<span style='color:#b00'>{html.escape(str(error))}</span>"
            return
        self.note.value = ""
        self._after_label(row)

    def _on_typed(self, change: Any) -> None:
        text = str(change["new"])
        if not text.strip():
            return
        row = self.model.current
        before = self.model.record(row)
        try:
            done = self.model.submit(text, note=self.note.value.strip() or None)
        except InputError as error:
            self.status.value = f"<span style='color:#b00'>{html.escape(str(error))}</span>"
        else:
            self.status.value = html.escape(done)
            after = self.model.record(row)
            if after is not None and after != before:
                self.note.value = ""
                self._after_label(row)
            else:
                self._render()
        self.typed.value = ""

    def _after_label(self, row: int) -> None:
        """Show what the judges said on the item just labelled, beside the label given."""
        record = self.model.record(row)
        verdicts = self.model.verdicts(row) or {}
        label = html.escape(str(record.label if record else ""))
        self.last.value = f"<p><b>{html.escape(self.model.name(row))}</b>: you said <b>{label}</b>." + (
            f" The judges said:</p>{_table(verdicts)}" if verdicts else "</p>"
        )
        self._render()

    def _to_unlabelled(self) -> None:
        following = self.model.next_unlabelled()
        if following is not None:
            self.model.position = following

    def _act(self, action: Any) -> None:
        action()
        self.status.value = ""
        self._render()

    def _render(self) -> None:
        model = self.model
        row = model.current
        record = model.record(row)
        done = model.n_labelled == model.n_items
        self.header.value = (
            f"<p><b>{html.escape(model.progress())}</b>{' — every item is labelled' if done else ''} · "
            f"showing {html.escape(model.name())} ({html.escape(model.where())})</p>"
        )
        readout = model.readout()
        self.readout.value = f"<p class='judgewidgets-readout'>{html.escape(readout)}</p>" if readout else ""
        texts = model.texts(row)
        extra = "".join(
            f"<p><b>{name.capitalize()}:</b> {_text(texts[name])}</p>"
            for name in ("reference", "context")
            if texts.get(name, "").strip()
        )
        details = model.details(row)
        if details:
            extra += _table(details)
        if "response_a" in texts:
            body = (
                "<table style='width:100%;table-layout:fixed'><tr><th>A</th><th>B</th></tr><tr>"
                f"<td style='vertical-align:top'>{_text(texts['response_a'])}</td>"
                f"<td style='vertical-align:top'>{_text(texts['response_b'])}</td></tr></table>"
            )
        else:
            body = f"<p><b>Response:</b> {_text(texts['response'])}</p>"
        given = (
            f"<p>Your label: <b>{html.escape(str(record.label))}</b> ({html.escape(record.who)}, "
            f"{html.escape(record.when)})</p>"
            if record is not None
            else ""
        )
        self.card.value = (
            f"<p><b>{html.escape(model.name(row))}</b></p>"
            f"<p><b>Prompt:</b> {_text(texts['prompt'])}</p>{body}{extra}{given}"
        )
        verdicts = model.verdicts(row)
        if not model.verdict_cols:
            self.verdicts.value = ""
        elif verdicts is None:
            self.verdicts.value = _HIDDEN
        else:
            self.verdicts.value = f"<p><b>The judges' verdicts</b></p>{_table(verdicts)}"
        for option, button in zip(model.kind.options, self.buttons):
            button.button_style = "success" if record is not None and record.label == option else ""


def _text(value: str) -> str:
    return f"<span style='white-space:pre-wrap'>{html.escape(value)}</span>"


def _table(values: dict[str, Any]) -> str:
    cells = "".join(
        f"<tr><td><code>{html.escape(str(name))}</code></td><td>{_value(value)}</td></tr>"
        for name, value in values.items()
    )
    return f"<table>{cells}</table>"


def _value(value: Any) -> str:
    if isinstance(value, float):
        return _score(value)
    return html.escape("" if value is None else str(value))
