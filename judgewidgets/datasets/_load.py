"""Loaders of the shipped judgment data, as tables in the shape the pairwise tools read."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from typing import Any

import pandas as pd

from .._errors import InputError

LLMBAR_SUBSETS = ("Natural", "Adversarial-Neighbor", "Adversarial-GPTInst", "Adversarial-GPTOut", "Adversarial-Manual")
_SHORT = {name.removeprefix("Adversarial-").lower(): name for name in LLMBAR_SUBSETS}
_PANDALM_LABELS = {"0": "tie", "1": "A", "2": "B"}


def _records(path: str) -> list[dict[str, Any]]:
    with resources.files("judgewidgets").joinpath(f"data/{path}").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def subset_name(subset: str) -> str:
    """The LLMBar subset a name means ("Natural", "Adversarial-GPTInst", or short: "gptinst", "manual")."""
    if subset in LLMBAR_SUBSETS:
        return subset
    name = _SHORT.get(str(subset).lower().removeprefix("adversarial-"))
    if name is None:
        raise InputError(f"unknown LLMBar subset {subset!r}; use one of {', '.join(LLMBAR_SUBSETS)}")
    return name


def llmbar(subsets: str | Sequence[str] = LLMBAR_SUBSETS) -> pd.DataFrame:
    """LLMBar's pairs (Zeng et al., ICLR 2024; MIT): one output follows the instruction, the other does not.

    Columns subset, pair_id, question, response_a (output_1), response_b (output_2), label ("A" when output_1
    is the better one, else "B"). Natural has 100 pairs; the four Adversarial subsets 319 in all.
    """
    names = [subset_name(s) for s in ([subsets] if isinstance(subsets, str) else subsets)]
    if not names:
        raise InputError("no LLMBar subset named")
    rows = []
    for name in names:
        for record in _records(f"llmbar/{name}.jsonl"):
            rows.append(
                {
                    "subset": name,
                    "pair_id": record["pair_id"],
                    "question": record["input"],
                    "response_a": record["output_1"],
                    "response_b": record["output_2"],
                    "label": "A" if int(record["label"]) == 1 else "B",
                }
            )
    return pd.DataFrame(rows)


def majority(labels: Sequence[str]) -> str | None:
    """The label most annotators gave, or None when no label has a majority."""
    top, count = Counter(labels).most_common(1)[0]
    return top if count > len(labels) / 2 else None


def _text(value: object) -> str:
    """A field as the text the model wrote: six PandaLM responses are the word "True", stored as JSON `true`."""
    return value if isinstance(value, str) else str(value)


def pandalm() -> pd.DataFrame:
    """PandaLM's human-annotated test set (Wang et al., 2023; Apache-2.0): 999 pairs, three annotators each.

    Columns pair_id, question (instruction, then the input when there is one), response_a, response_b,
    annotator1..3 ("A", "B", "tie") and label, their majority (None on the 3 items where all three differ).
    """
    rows = []
    for record in _records("pandalm/testset-v1.jsonl"):
        votes = [_PANDALM_LABELS[str(record[f"annotator{k}"])] for k in (1, 2, 3)]
        question = _text(record["instruction"]) + (f"\n\n{_text(record['input'])}" if record.get("input") else "")
        rows.append(
            {
                "pair_id": int(record["idx"]),
                "question": question,
                "response_a": _text(record["response1"]),
                "response_b": _text(record["response2"]),
                **{f"annotator{k}": vote for k, vote in zip((1, 2, 3), votes)},
                "label": majority(votes),
            }
        )
    return pd.DataFrame(rows)


def arena_hard() -> pd.DataFrame:
    """Arena-Hard-Auto's 1,348 judged battles (Apache-2.0): question_id, model_a, model_b, winner."""
    return pd.DataFrame(_records("arena_hard/battles.jsonl"))


def _mt_bench_questions() -> dict[int, dict[str, Any]]:
    return {int(r["question_id"]): r for r in _records("mt_bench/question.jsonl")}


def _turns(values: object) -> tuple[str | None, str | None]:
    """Two answers, one per turn, with an empty one as None (the references leave some turns blank)."""
    first, second = values if isinstance(values, list) else ("", "")
    return (first or None), (second or None)


def mt_bench() -> pd.DataFrame:
    """MT-Bench's 80 two-turn questions (Zheng et al., NeurIPS 2023; lm-sys/FastChat, Apache-2.0), one row each.

    Columns question_id (81-160), category (writing, roleplay, reasoning, math, coding, extraction, stem,
    humanities: ten each), turn_1 and turn_2 (the user's two messages), reference_1 and reference_2 (the authors'
    short reference answers, given for 39 questions; None elsewhere or where a turn has none), gpt4_reference_1 and
    gpt4_reference_2 (GPT-4's answers to the reasoning, math and coding questions 101-130, which MT-Bench's judge
    prompts show as the reference; a few are wrong, e.g. 104 and 111, where the authors' references are right).
    """
    gpt4 = {int(r["question_id"]): r["choices"][0]["turns"] for r in _records("mt_bench/reference_answer/gpt-4.jsonl")}
    rows = []
    for qid, record in _mt_bench_questions().items():
        reference = _turns(record.get("reference"))
        by_gpt4 = _turns(gpt4.get(qid))
        rows.append(
            {
                "question_id": qid,
                "category": record["category"],
                "turn_1": record["turns"][0],
                "turn_2": record["turns"][1],
                "reference_1": reference[0],
                "reference_2": reference[1],
                "gpt4_reference_1": by_gpt4[0],
                "gpt4_reference_2": by_gpt4[1],
            }
        )
    frame = pd.DataFrame(rows)
    answers = [c for c in frame.columns if "reference" in c]
    frame[answers] = frame[answers].astype(object).where(frame[answers].notna(), None)  # None, not NaN
    return frame


def mt_bench_pairs() -> pd.DataFrame:
    """27 second-turn comparisons on MT-Bench questions, written for judgewidgets: one reply right, one wrong.

    Each `history` is the question's first user turn, an assistant's first answer and the second user turn (OpenAI
    chat messages); response_a and response_b are two replies to it, and label ("A" | "B", alternating) names the
    right one. kind says how the other goes wrong: "wrong" (a mistake on its own), "history" (contradicts or
    ignores the earlier turns) or "instruction" (breaks an instruction of either turn: a persona, a form, a
    constraint); flaw says what it gets wrong. Also pair_id, question_id and category. `PairwiseJudge.compare_many`
    reads the frame as it is (`history`, `response_a`, `response_b`, `label`).
    """
    questions = _mt_bench_questions()
    rows = []
    for record in _records("mt_bench/turn2_pairs.jsonl"):
        question = questions[int(record["question_id"])]
        history = [
            {"role": "user", "content": question["turns"][0]},
            {"role": "assistant", "content": record["answer_1"]},
            {"role": "user", "content": question["turns"][1]},
        ]
        rows.append(
            {
                "pair_id": record["pair_id"],
                "question_id": record["question_id"],
                "category": question["category"],
                "history": history,
                "response_a": record["response_a"],
                "response_b": record["response_b"],
                "label": record["label"],
                "kind": record["kind"],
                "flaw": record["flaw"],
            }
        )
    return pd.DataFrame(rows)


# The clear-cut conversations (data/conversations/clear_cut.jsonl, written for judgewidgets): twins that share their
# history and differ in the assistant's last reply, one good and one bad for a reason that is not a matter of taste.
CONVERSATION_KINDS = ("forgets_constraint", "contradicts", "ignores_correction", "unsafe_repeat", "wrong_tool")
_REPLY_ROLES = ("assistant", "tool", "function")


def _kinds(kinds: str | Sequence[str] | None) -> list[str]:
    chosen = list(CONVERSATION_KINDS) if kinds is None else [kinds] if isinstance(kinds, str) else list(kinds)
    unknown = [k for k in chosen if k not in CONVERSATION_KINDS]
    if unknown or not chosen:
        raise InputError(f"unknown conversation kind(s) {unknown or chosen!r}; use {', '.join(CONVERSATION_KINDS)}")
    return chosen


def conversations(kinds: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Twin conversations in the OpenAI chat format, one row each (90: 45 pairs, 9 per kind; Apache-2.0).

    Columns id, pair_id, kind, label (1 the good twin, 0 the bad one), template (the built-in conversation
    template naming the quality at stake), note (what the bad twin's last reply does wrong) and messages (a list
    of message dicts, ending with the assistant's turn). The twins of a pair share every message but the last.
    Kinds: forgets_constraint (breaks a constraint the user set in the first turn), contradicts (contradicts the
    assistant's own earlier statement), ignores_correction (uses what the user corrected), unsafe_repeat (gives in
    substance what it refused before), wrong_tool (calls the wrong tool, or the right one with arguments against
    the user). `kinds` keeps only those.
    """
    chosen = _kinds(kinds)
    rows = [r for r in _records("conversations/clear_cut.jsonl") if r["kind"] in chosen]
    columns = ["id", "pair_id", "kind", "label", "template", "note", "messages"]
    return pd.DataFrame([{c: r[c] for c in columns} for r in rows], columns=columns)


def _split(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The history (up to the last message that is not the assistant's) and the assistant's last turn."""
    start = len(messages)
    while start > 0 and messages[start - 1]["role"] in _REPLY_ROLES:
        start -= 1
    return messages[:start], messages[start:]


def conversation_pairs(kinds: str | Sequence[str] | None = None) -> pd.DataFrame:
    """The twins of `conversations()` side by side, one row per pair, in the shape `PairwiseJudge.compare_many`
    reads: pair_id, kind, template, note, history (the shared messages), good and bad (each twin's last turn as
    a list of messages), and response_a, response_b, label ("A" | "B"): the good reply is A in every other pair
    of the whole set (so a pair keeps its slots whichever `kinds` are chosen).
    """
    chosen = _kinds(kinds)
    frame = conversations()
    rows = []
    for position, (pair_id, twins) in enumerate(frame.groupby("pair_id", sort=False)):
        by_label = {int(t["label"]): t for t in twins.to_dict("records")}
        history, good = _split(by_label[1]["messages"])
        bad = _split(by_label[0]["messages"])[1]  # the twins share their history (tests/test_conversation_data.py)
        first = position % 2 == 0
        rows.append(
            {
                "pair_id": pair_id,
                "kind": by_label[1]["kind"],
                "template": by_label[1]["template"],
                "note": by_label[1]["note"],
                "history": history,
                "good": good,
                "bad": bad,
                "response_a": good if first else bad,
                "response_b": bad if first else good,
                "label": "A" if first else "B",
            }
        )
    return pd.DataFrame([r for r in rows if r["kind"] in chosen]).reset_index(drop=True)


# The harm pairs (data/harm/pairs.jsonl, written for judgewidgets): a request and two replies, one right and one
# wrong for a reason of harm, not of taste.
HARM_KINDS = ("harmful_request", "harmless_request")


def harm_pairs(kinds: str | Sequence[str] | None = None) -> pd.DataFrame:
    """50 pairs testing that a judge never rewards harm, written for judgewidgets (Apache-2.0), one row each.

    Two kinds, 25 pairs each: "harmful_request" (the request asks for help hurting someone or breaking the law
    against others; the right reply declines, the wrong one goes along), and "harmless_request" (a harmless
    request, often worded to sound risky, such as killing a Python process; the right reply helps, the wrong one
    refuses for no reason). The wrong replies to harmful requests describe the harm in general terms only, never
    operational detail. Columns pair_id, kind, subset (= kind, for `jw.meta_evaluate`), topic, question, good,
    bad, note (what the wrong reply does), and response_a, response_b, label ("A" | "B"): the right reply is A in
    every other pair of each kind, so the label says nothing. `kinds` keeps only those.
    """
    chosen = list(HARM_KINDS) if kinds is None else [kinds] if isinstance(kinds, str) else list(kinds)
    unknown = [k for k in chosen if k not in HARM_KINDS]
    if unknown or not chosen:
        raise InputError(f"unknown harm pair kind(s) {unknown or chosen!r}; use {', '.join(HARM_KINDS)}")
    rows = []
    for record in _records("harm/pairs.jsonl"):
        if record["kind"] not in chosen:
            continue
        first = int(record["pair_id"].rsplit("-", 1)[1]) % 2 == 1
        rows.append(
            {
                **record,
                "subset": record["kind"],
                "response_a": record["good"] if first else record["bad"],
                "response_b": record["bad"] if first else record["good"],
                "label": "A" if first else "B",
            }
        )
    return pd.DataFrame(rows)
