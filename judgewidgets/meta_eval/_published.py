"""Published judges' numbers on the shipped sets, quoted so a measured judge can be read beside them."""

from __future__ import annotations

import pandas as pd

# LLMBar (Zeng et al., ICLR 2024), "Vanilla" prompting with rules, each pair judged in both orders: accuracy
# averaged over the two orders and positional agreement (both orders give the same verdict), in percent, from
# the statistics files the authors publish (princeton-nlp/LLMBar, Dataset/LLMBar/*/evaluators/*/Vanilla).
_LLMBAR = [
    ("Natural", "GPT-4", 95.5, 95.0),
    ("Natural", "PaLM2", 83.0, 80.0),
    ("Natural", "ChatGPT", 81.5, 71.0),
    ("Natural", "LLaMA2-70B-Chat", 80.5, 79.0),
    ("Natural", "Falcon-180B-Chat", 74.0, 52.0),
    ("Adversarial-Neighbor", "GPT-4", 78.7, 93.3),
    ("Adversarial-Neighbor", "PaLM2", 62.7, 67.2),
    ("Adversarial-Neighbor", "ChatGPT", 19.4, 71.6),
    ("Adversarial-Neighbor", "LLaMA2-70B-Chat", 24.6, 77.6),
    ("Adversarial-Neighbor", "Falcon-180B-Chat", 50.4, 42.5),
    ("Adversarial-GPTInst", "GPT-4", 86.4, 94.6),
    ("Adversarial-GPTInst", "PaLM2", 73.4, 68.5),
    ("Adversarial-GPTInst", "ChatGPT", 26.6, 62.0),
    ("Adversarial-GPTInst", "LLaMA2-70B-Chat", 30.4, 72.8),
    ("Adversarial-GPTInst", "Falcon-180B-Chat", 50.0, 30.4),
    ("Adversarial-GPTOut", "GPT-4", 77.7, 93.6),
    ("Adversarial-GPTOut", "PaLM2", 59.6, 66.0),
    ("Adversarial-GPTOut", "ChatGPT", 41.5, 59.6),
    ("Adversarial-GPTOut", "LLaMA2-70B-Chat", 56.4, 72.3),
    ("Adversarial-GPTOut", "Falcon-180B-Chat", 54.3, 29.8),
    ("Adversarial-Manual", "GPT-4", 80.4, 82.6),
    ("Adversarial-Manual", "PaLM2", 65.2, 87.0),
    ("Adversarial-Manual", "ChatGPT", 34.8, 52.2),
    ("Adversarial-Manual", "LLaMA2-70B-Chat", 37.0, 65.2),
    ("Adversarial-Manual", "Falcon-180B-Chat", 51.1, 50.0),
]

# PandaLM's test set (Wang et al., 2023): the verdicts of gpt-3.5-turbo and PandaLM-7B that the authors release
# (WeOpenML/PandaLM, data/gpt-3.5-turbo-testset-v1.json and data/pandalm-7b-testset-v1.json), scored by us
# against the majority of the three human annotators on all 999 pairs. gpt-3.5-turbo's 25 unreadable answers
# count as wrong. One order each, so no positional agreement.
_PANDALM = [
    ("gpt-3.5-turbo", 69.8, 0.476, 0.527, 0.753, 0.759, 0.070),
    ("PandaLM-7B", 66.8, 0.435, 0.574, 0.697, 0.724, 0.302),
]


def published() -> pd.DataFrame:
    """The published judges' rows, in the columns of `MetaEvaluation.table` (source "published")."""
    rows = [
        {
            "judge": judge,
            "dataset": "llmbar",
            "subset": subset,
            "n": None,
            "accuracy": accuracy / 100,
            "positional_agreement": agreement / 100,
            "source": "published",
        }
        for subset, judge, accuracy, agreement in _LLMBAR
    ]
    rows += [
        {
            "judge": judge,
            "dataset": "pandalm",
            "subset": "test",
            "n": 999,
            "accuracy": accuracy / 100,
            "kappa": kappa,
            "macro_f1": macro_f1,
            "f1_A": f1_a,
            "f1_B": f1_b,
            "f1_tie": f1_tie,
            "source": "published",
        }
        for judge, accuracy, kappa, macro_f1, f1_a, f1_b, f1_tie in _PANDALM
    ]
    return pd.DataFrame(rows)
