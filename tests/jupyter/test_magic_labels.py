"""`%judge --labels`: a person's labels correct the aggregate score (PPI++) beside the judge's own; every problem
with the labels is a UsageError before any call. A real IPython shell against the loopback server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from IPython.core.error import UsageError

import judgewidgets as jw
from judgewidgets.testing import OpenAITestServer, json_score
from tests.jupyter.shell import magic_shell

LENIENT = '[[reply:{"score": 5}]]'  # the judge's answer planted in the response: it passes everything but two


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(json_score(5)) as running:
        yield running


@pytest.fixture
def ip(server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    for shell in magic_shell(server, monkeypatch):
        shell.user_ns["answers"] = answers()
        yield shell


def answers(n: int = 20) -> pd.DataFrame:
    """n answers the judge scores 5 (all but the last two, scored 1); the person passes the even ones."""
    return pd.DataFrame(
        {
            "id": [f"a{i}" for i in range(n)],
            "question": [f"Question {i}?" for i in range(n)],
            "answer": [f"Answer {i}. " + ('[[reply:{"score": 1}]]' if i >= n - 2 else LENIENT) for i in range(n)],
            "truth": ["pass" if i % 2 == 0 else "fail" for i in range(n)],
        }
    )


LINE = "--data answers --prompt-col question --response-col answer --no-chart --out scored"


def test_labels_by_id_correct_the_mean_and_the_pass_rate(ip) -> None:  # type: ignore[no-untyped-def]
    labelled = answers().iloc[:10][["id", "truth"]]
    ip.user_ns["mine"] = labelled
    ip.run_line_magic("judge", f"{LINE} --labels mine --label-col truth --id-col id --pass-threshold 0.5")
    estimates = ip.user_ns["scored_estimates"]
    assert set(estimates) == {"mean", "pass_rate"}
    passed = estimates["pass_rate"]
    assert passed.n_items == 20 and passed.n_labelled == 10
    assert passed.judge_only[0] == pytest.approx(18 / 20)  # the judge's own pass rate: lenient
    assert passed.labels_only[0] == pytest.approx(0.5)  # the person passed 5 of the 10 labelled
    same = jw.estimate_quality(ip.user_ns["scored"], labelled.set_index(pd.RangeIndex(10))["truth"], "pass_rate")
    assert passed.estimate == pytest.approx(same.estimate) and passed.low == pytest.approx(same.low)
    assert estimates["mean"].metric == "mean" and estimates["mean"].n_labelled == 10


def test_labels_by_texts_from_a_csv_and_by_a_label_store(ip, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    frame = answers()
    texts = tmp_path / "labels.csv"
    frame.iloc[:8][["question", "answer", "truth"]].rename(columns={"truth": "label"}).to_csv(texts, index=False)
    ip.run_line_magic("judge", f"{LINE} --labels {texts} --pass-threshold 0.5")
    by_texts = ip.user_ns["scored_estimates"]["pass_rate"]
    assert by_texts.n_labelled == 8 and by_texts.labels_only[0] == pytest.approx(0.5)
    store = tmp_path / "store.jsonl"
    queue = jw.LabelQueue(
        frame.iloc[:6].rename(columns={"question": "prompt", "answer": "response"})[["prompt", "response"]],
        kind="pass_fail",
        store=store,
    )
    for row in range(6):
        queue.model.label("pass" if row % 2 == 0 else "fail", row=row)
    ip.user_ns["queue"] = queue
    for source in (str(store), "queue"):  # the store's file (item keys), the queue itself (its texts)
        ip.run_line_magic("judge", f"{LINE} --labels {source}")
        mean = ip.user_ns["scored_estimates"]["mean"]
        assert mean.n_labelled == 6 and mean.labels_only[0] == pytest.approx(0.5)


def test_score_labels_on_a_scale(ip) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["scores"] = pd.DataFrame({"id": ["a0", "a1", "a2", "a3"], "label": [5, 1, 3, 5]})
    ip.run_line_magic("judge", f"{LINE} --labels scores --id-col id --label-scale 1,5 --pass-threshold 0.6")
    estimates = ip.user_ns["scored_estimates"]
    assert estimates["mean"].labels_only[0] == pytest.approx((1 + 0 + 0.5 + 1) / 4)
    assert estimates["pass_rate"].labels_only[0] == pytest.approx(0.5)  # 5 and 5 pass at 0.6, 1 and 3 do not


def test_inline_items_match_labels_by_their_texts(ip) -> None:  # type: ignore[no-untyped-def]
    cell = "".join(f"prompt: Q{i}?\nresponse: R{i} {LENIENT}\n\n" for i in range(4))
    ip.user_ns["few"] = pd.DataFrame(
        {"prompt": ["Q0?", "Q1?"], "response": [f"R0 {LENIENT}", f"R1 {LENIENT}"], "label": [True, False]}
    )
    ip.run_cell_magic("judge", "--labels few --no-chart --out inline", cell)
    assert ip.user_ns["inline_estimates"]["mean"].n_items == 4


def test_without_out_the_estimates_are_shown_not_kept(ip) -> None:  # type: ignore[no-untyped-def]
    ip.user_ns["mine"] = answers().iloc[:4][["id", "truth"]]
    ip.user_ns.pop("r_estimates", None)
    ip.run_line_magic(
        "judge",
        "--data answers --prompt-col question --response-col answer --no-chart --labels mine "
        "--label-col truth --id-col id",
    )
    assert "r_estimates" not in ip.user_ns


@pytest.mark.parametrize(
    ("extra", "labels", "message"),
    [
        ("--labels nowhere.csv", None, "no such variable in the notebook, nor a file"),
        ("--labels mine", pd.DataFrame({"id": ["a0", "a1"], "verdict": ["pass", "fail"]}), "no 'label' column"),
        ("--labels mine --id-col id", pd.DataFrame({"id": ["a0", "zz"], "label": ["pass", "fail"]}), "not judged"),
        ("--labels mine --id-col id", pd.DataFrame({"id": ["a0", "a0"], "label": ["pass", "fail"]}), "twice"),
        ("--labels mine --id-col id", pd.DataFrame({"id": ["a0", "a1"], "label": ["pass", "maybe"]}), "neither"),
        ("--labels mine --id-col id", pd.DataFrame({"id": ["a0"], "label": ["pass"]}), "2 or more"),
        ("--labels mine --id-col id", pd.DataFrame({"id": ["a0", "a1"], "label": [4, 5]}), "--label-scale"),
        ("--labels mine", pd.DataFrame({"x": ["a0", "a1"], "label": [1, 0]}), "cannot name its items"),
        ("--labels mine --id-col nope", pd.DataFrame({"id": ["a0", "a1"], "label": [1, 0]}), "column 'nope'"),
        ("--labels mine --mode pairwise", pd.DataFrame({"id": ["a0"], "label": [1]}), "not --mode pairwise"),
        ("--pass-threshold 0.5", None, "--pass-threshold goes with --labels"),
        ("--labels mine --id-col id --pass-threshold 2", pd.DataFrame({"id": ["a0"], "label": [1]}), r"\[0, 1\]"),
        ("--labels mine --id-col id --label-scale 5,1", pd.DataFrame({"id": ["a0", "a1"], "label": [1, 0]}), "LOW"),
    ],
)
def test_bad_labels_are_usage_errors_before_any_call(
    ip, server: OpenAITestServer, extra: str, labels: pd.DataFrame | None, message: str
) -> None:  # type: ignore[no-untyped-def]
    if labels is not None:
        ip.user_ns["mine"] = labels
    calls = server.stats.total
    with pytest.raises(UsageError, match=message):
        ip.run_line_magic("judge", f"--data answers --prompt-col question --response-col answer {extra}")
    assert server.stats.total == calls


def test_the_help_documents_the_labels(ip) -> None:  # type: ignore[no-untyped-def]
    doc = ip.magics_manager.registry["JudgeMagics"].judge.__doc__
    for option in ("--labels", "--pass-threshold", "--id-col", "--label-scale", "NAME_estimates"):
        assert option in doc
