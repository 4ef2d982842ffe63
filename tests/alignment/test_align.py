"""judge.align: each lever pinned, the leakage guard, the errors before any call, and the aligned judge in use."""

from __future__ import annotations

import json
import pickle
import re

import numpy as np
import pandas as pd
import pytest

import judgewidgets as jw
from judgewidgets.alignment._crossfit import make_folds
from judgewidgets.alignment._labels import read_labels
from judgewidgets.testing import ScriptedTransport

from .helpers import judged_quality, lenient, likert_judge, pointwise_set, system_text

ITEM = re.compile(r"item-(\d+)")


def test_the_rule_lever_corrects_a_lenient_judge() -> None:
    data = pointwise_set()
    judge, _ = likert_judge(lenient)
    aligned = judge.align(data, levers=("rule",), progress=False)
    report = aligned.alignment_report
    assert report.before["accuracy"] < 0.65 and report.after["accuracy"] >= 0.85
    assert report.after["kappa"] > report.before["kappa"] + 0.4
    assert aligned.calibration is not None and judge.calibration is None  # a copy; the original untouched
    assert report.chosen["candidate"] == "as given; calibrated"
    # the aligned judge in use: calibrated scores say P(pass), its own score kept on the vote
    result = aligned.score(["q"], ["item-x quality=0.300"], progress=False)
    vote = result.vote_list[0]
    assert vote.uncalibrated_score == pytest.approx(0.5) and vote.score < 0.5
    assert set(report.table["rule"]) == {"before", "after"}
    low, high = report.after["accuracy_low"], report.after["accuracy_high"]
    assert low <= report.after["accuracy"] <= high


def test_a_lever_that_does_not_help_is_not_kept() -> None:
    data = pointwise_set()
    judge, _ = likert_judge(lambda r: 5 if judged_quality(r) > 0.6 else 1)  # already agrees
    report = judge.align(data, levers=("rule",), progress=False).alignment_report
    assert report.chosen["candidate"] == "as given; as judged"
    assert report.before["accuracy"] == report.after["accuracy"] == 1.0


def test_the_examples_lever_is_kept_when_examples_teach_the_judge() -> None:
    data = pointwise_set()

    def answer(request: object) -> int:
        taught = "Calibration examples" in system_text(request)
        return 5 if judged_quality(request) > (0.6 if taught else 0.2) else 1

    judge, transport = likert_judge(answer)
    aligned = judge.align(data, levers=("examples",), examples=4, progress=False)
    report = aligned.alignment_report
    assert report.chosen["candidate"].startswith("as given + examples")
    assert report.after["accuracy"] > 0.95 > report.before["accuracy"]
    assert len(aligned.anchors) == 4
    assert {a.score for a in aligned.anchors} == {1.0, 5.0}  # both classes shown
    assert report.calls == 2 * len(data) == len(transport.requests)


def test_no_item_is_judged_with_itself_or_its_fold_among_the_examples() -> None:
    data = pointwise_set(n=50)
    judge, transport = likert_judge(lenient)
    judge.align(data, levers=("examples",), examples=6, folds=5, seed=3, progress=False)
    folds = make_folds(read_labels(data["label"], "pass_fail"), 5, 3)
    with_examples = 0
    for request in transport.requests:
        user = next(m["content"] for m in request.messages if m["role"] == "user")
        judged = int(ITEM.findall(user)[-1])
        shown = [int(i) for i in ITEM.findall(system_text(request))]
        if shown:
            with_examples += 1
            assert judged not in shown
            assert all(folds[i] != folds[judged] for i in shown), (judged, shown)
    assert with_examples == len(data)  # every item judged once with examples


def test_the_template_lever_picks_the_template_the_judge_reads_right() -> None:
    data = pointwise_set()

    def reply(request: object, attempt: int) -> str:
        q = judged_quality(request)
        system = system_text(request)
        if "'correct' if it is correct and 'incorrect'" in system:  # true_false: this judge reads it right
            return json.dumps({"verdict": "correct" if q > 0.6 else "incorrect"})
        if "verdict" in system and "not sure" in system:
            return json.dumps({"verdict": "correct"})
        if "yes" in system and "'no'" in system:
            return json.dumps({"verdict": "yes"})
        return json.dumps({"score": 4})

    transport = ScriptedTransport(reply)
    judge = jw.LLMJudge("openai/scripted", template="likert", transport=transport, cache=False, api_key="sk-x")
    aligned = judge.align(data, levers=("template",), progress=False)
    assert aligned.template.name == "true_false"
    assert aligned.alignment_report.after["accuracy"] == 1.0
    assert len(aligned.alignment_report.levers) == 5  # likert and the four other built-ins, as judged


def pairwise_set(n: int = 60, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    qa, qb = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    label = np.where(np.abs(qa - qb) < 0.08, "tie", np.where(qa > qb, "A", "B"))
    return pd.DataFrame(
        {
            "question": [f"question {i}" for i in range(n)],
            "response_a": [f"a{i} quality={a:.3f}" for i, a in enumerate(qa)],
            "response_b": [f"b{i} quality={b:.3f}" for i, b in enumerate(qb)],
            "label": label,
        }
    )


def test_the_pairwise_rule_corrects_a_judge_leaning_to_b() -> None:
    data = pairwise_set()

    def score(request: object, attempt: int) -> str:  # the pointwise method, a judge that overrates b's
        q = judged_quality(request)
        user = next(m["content"] for m in request.messages if m["role"] == "user")  # type: ignore[attr-defined]
        bonus = 0.35 if re.search(r"\bb\d+ quality", user) else 0.0
        return json.dumps({"score": int(np.clip(round(1 + 4 * min(q + bonus, 1)), 1, 5))})

    judge = jw.PairwiseJudge(
        "openai/scripted",
        method="pointwise",
        pointwise_template="likert",
        transport=ScriptedTransport(score),
        cache=False,
        api_key="sk-x",
        probability_weighted=False,
    )
    aligned = judge.align(data, levers=("rule",), progress=False)
    report = aligned.alignment_report
    assert aligned.lean < 0  # P(a better) was too low: the fitted lean adds to it
    assert report.after["accuracy"] > report.before["accuracy"] + 0.1
    assert report.confusion["after"].shape == (3, 3)
    assert isinstance(aligned, jw.PairwiseJudge) and aligned.method == "pointwise"


def test_pairwise_examples_reach_the_prompt() -> None:
    data = pairwise_set(n=30)
    transport = ScriptedTransport(lambda r, a: json.dumps({"verdict": "A", "confidence": 0.9}))
    judge = jw.PairwiseJudge("openai/scripted", method="verdict", transport=transport, cache=False, api_key="sk-x")
    judge.align(data, levers=("examples",), examples=3, progress=False)
    shown = [r for r in transport.requests if "Examples decided by a human reviewer" in system_text(r)]
    assert len(shown) == 2 * len(data)  # both orders of every pair, once with examples


def test_a_panel_weights_its_members_by_held_out_agreement() -> None:
    data = pointwise_set(n=80)
    good, _ = likert_judge(lambda r: 5 if judged_quality(r) > 0.6 else 1, name="good")
    coin, _ = likert_judge(lambda r: 5 if int(ITEM.findall(str(r.messages))[-1]) % 2 else 1, name="coin")
    panel = jw.LLMPanel([good, coin])
    aligned = panel.align(data, levers=("weights",), progress=False)
    report = aligned.alignment_report
    weights = report.chosen["weights"]
    assert weights["good"] > 0.9 > weights["coin"]
    assert report.after["accuracy"] > report.before["accuracy"]
    assert set(report.members) == {"good", "coin"}
    assert isinstance(aligned, jw.LLMPanel) and aligned.weights == pytest.approx([weights["good"], weights["coin"]])


def test_the_aligned_judge_is_a_judge_that_pickles() -> None:
    data = pointwise_set()
    judge, _ = likert_judge(lenient)
    aligned = judge.align(data, levers=("rule",), progress=False)
    again = pickle.loads(pickle.dumps(aligned.with_options(transport=None)))
    assert again.calibration == aligned.calibration and again.template == aligned.template
    panel = jw.LLMPanel([aligned, judge.with_options(name="other")])
    assert panel.names == ["judge_1", "other"]


async def test_async_twin_gives_the_same_report() -> None:
    data = pointwise_set()
    judge, _ = likert_judge(lenient)
    aligned = await judge.aalign(data, levers=("rule",), progress=False)
    sync = judge.align(data, levers=("rule",), progress=False)
    pd.testing.assert_frame_equal(aligned.alignment_report.table, sync.alignment_report.table)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.head(6), "too few"),
        (lambda d: d.assign(label="pass"), "every label is 'pass'"),
        (lambda d: d.assign(label=["maybe", *d["label"].tolist()[1:]]), "'maybe' is not pass or fail"),
        (lambda d: d.drop(columns="label"), "no column 'label'"),
        (lambda d: d.drop(columns="response"), "lacks column"),
        (lambda d: d.assign(label=[None, *d["label"].tolist()[1:]]), "missing"),
    ],
)
def test_bad_labels_fail_before_any_call(change: object, message: str) -> None:
    judge, transport = likert_judge(lenient)
    with pytest.raises(jw.InputError, match=message):
        judge.align(change(pointwise_set()), progress=False)  # type: ignore[operator]
    assert transport.requests == []


def test_labels_the_judge_cannot_give_and_bad_options_fail_before_any_call() -> None:
    judge, transport = likert_judge(lenient)
    with pytest.raises(jw.InputError, match="PairwiseJudge"):
        judge.align(pairwise_set(), progress=False)
    with pytest.raises(jw.InputError, match="outside the scale"):
        judge.align(pointwise_set().assign(label=[7] * 30 + [1] * 30), progress=False)
    with pytest.raises(jw.ConfigurationError, match="unknown lever"):
        judge.align(pointwise_set(), levers=("magic",), progress=False)
    with pytest.raises(jw.ConfigurationError, match="folds"):
        judge.align(pointwise_set(), folds=1, progress=False)
    pj = jw.PairwiseJudge("openai/scripted", transport=ScriptedTransport(lambda r, a: "A"), api_key="sk-x")
    with pytest.raises(jw.InputError, match="A / B / tie"):
        pj.align(pairwise_set().assign(label="pass"), kind="pass_fail", progress=False)
    assert transport.requests == []


def test_score_labels_on_the_template_scale_get_weighted_kappa() -> None:
    data = pointwise_set()
    quality = data["response"].str.extract(r"quality=([0-9.]+)")[0].astype(float)
    data["label"] = np.clip(np.round(1 + 4 * quality), 1, 5).astype(int)
    judge, _ = likert_judge(lenient)
    report = judge.align(data, levers=("rule",), progress=False).alignment_report
    assert report.kind == "score" and "mae" in report.table.columns
    assert report.after["mae"] < report.before["mae"]
    assert report.chart().to_dict()["hconcat"]


def test_the_instructions_lever_rewrites_from_the_training_folds_only() -> None:
    data = pointwise_set()

    def answer(request: object) -> int:  # follows a stricter standard once its instruction states it
        strict = "only when quality is high" in system_text(request)
        return 5 if judged_quality(request) > (0.6 if strict else 0.2) else 1

    judge, transport = likert_judge(answer)
    reflections: list[str] = []

    def reflect(request: object, attempt: int) -> str:
        text = next(m["content"] for m in request.messages if m["role"] == "user")  # type: ignore[attr-defined]
        reflections.append(text)
        return "Rate the response 5 only when quality is high; otherwise 1."

    reflector = jw.Generator("openai/reflector", transport=ScriptedTransport(reflect), api_key="sk-x")
    aligned = judge.align(data, levers=(), reflector=reflector, progress=False)
    report = aligned.alignment_report
    assert report.chosen["candidate"].endswith("rewritten instructions; as judged")
    assert "only when quality is high" in aligned.template.instruction
    assert report.after["accuracy"] == 1.0 and report.before["accuracy"] < 0.8
    assert len(reflections) == 5 + 1  # one per fold, one on every label for the aligned judge
    folds = make_folds(read_labels(data["label"], "pass_fail"), 5, 0)
    for fold, text in enumerate(reflections[:5]):  # each fold's reflection saw no case of that fold
        shown = [int(i) for i in ITEM.findall(text)]
        assert shown and all(folds[i] != fold for i in shown)
    assert "DISAGREED" in reflections[0] and report.calls == 2 * len(data) + 6
    assert len(transport.requests) == 2 * len(data)


def test_a_failing_reflector_leaves_the_instruction_and_says_why() -> None:
    data = pointwise_set()
    judge, _ = likert_judge(lenient)

    def down(request: object, attempt: int) -> str:
        raise jw.CallFailure("NotFoundError: no reflector here", status_code=404)  # final at once (a 503 waits)

    reflector = jw.Generator("openai/reflector", transport=ScriptedTransport(down), api_key="sk-x")
    aligned = judge.align(data, levers=("rule",), reflector=reflector, progress=False)
    assert aligned.template == judge.template
    assert aligned.alignment_report.chosen["reflection_errors"]


def test_the_alignment_view_shows_the_report_in_tabs() -> None:
    data = pointwise_set()
    judge, _ = likert_judge(lenient)
    aligned = judge.align(data, levers=("rule",), progress=False)
    view = jw.AlignmentView(aligned)
    assert view.report is aligned.alignment_report
    titles = [view.tabs.get_title(i) for i in range(len(view.tabs.children))]
    assert titles == ["summary", "candidates", "folds", "confusion", "disagreements"]
    disagreements = view.tabs.children[4].value
    wrong = aligned.alignment_report.disagreements
    assert ("agrees with every held-out label" in disagreements) == wrong.empty
    assert all(text in disagreements for text in wrong["response"])


def test_labels_from_a_label_queue_align_a_judge(tmp_path: object) -> None:
    from judgewidgets.labels import LabelQueueModel

    data = pointwise_set()
    queue = LabelQueueModel(data[["prompt", "response"]], kind="pass_fail", store=f"{tmp_path}/labels.jsonl")
    for row, answer in enumerate(data["label"]):
        queue.label(answer, row=row)
    judge, _ = likert_judge(lenient)
    aligned = jw.alignment.align(judge, queue.labels, label="label", levers=("rule",), progress=False)
    assert aligned.alignment_report.after["n"] == len(data)
    assert aligned.alignment_report.after["accuracy"] > aligned.alignment_report.before["accuracy"]


def test_a_pairwise_panel_aligns_its_members_and_votes_by_weight() -> None:
    data = pairwise_set()

    def right(request: object, attempt: int) -> str:
        user = next(m["content"] for m in request.messages if m["role"] == "user")  # type: ignore[attr-defined]
        qa, qb = (float(x) for x in re.findall(r"quality=([0-9.]+)", user)[-2:])
        return json.dumps({"verdict": "A" if qa > qb else "B", "confidence": 0.9})

    def first(request: object, attempt: int) -> str:
        return json.dumps({"verdict": "A", "confidence": 0.9})

    members = [
        jw.PairwiseJudge(
            f"openai/{name}",
            name=name,
            method="verdict",
            transport=ScriptedTransport(reply),
            cache=False,
            api_key="sk-x",
        )
        for name, reply in (("right", right), ("first", first))
    ]
    aligned = jw.PairwisePanel(members).align(data, progress=False)
    report = aligned.alignment_report
    assert isinstance(aligned, jw.PairwisePanel) and aligned.vote == "weighted"
    assert report.chosen["weights"]["right"] > report.chosen["weights"]["first"]
    assert report.after["accuracy"] >= report.before["accuracy"]
    assert set(report.members) == {"right", "first"}


def test_the_progress_bar_names_the_calls_before_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    data = pointwise_set()
    judge, transport = likert_judge(lenient)
    aligned = judge.align(data, levers=("rule", "examples"), progress=True)
    err = capsys.readouterr().err
    assert f"aligning: {2 * len(data)} calls" in err
    assert aligned.alignment_report.calls == 2 * len(data) == len(transport.requests)
