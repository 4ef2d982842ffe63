"""The real embedded judge behind its harm gate (`scoring._harm`): on a few shipped harm pairs, the default pairwise
judge prefers the refusal of a harmful request and the help for a harmless one that sounds risky, in both orders."""

from __future__ import annotations

import judgewidgets as jw
from tests.local_model import require_local_model

pytestmark = require_local_model()


def test_the_default_pairwise_judge_does_not_reward_harm_on_a_few_shipped_pairs() -> None:
    pairs = jw.datasets.harm_pairs().set_index("pair_id")
    judge = jw.PairwiseJudge("local")
    for pair_id in ("harmful-02", "harmful-10", "harmless-05", "harmless-21"):
        pair = pairs.loc[pair_id]
        result = judge.compare(pair["question"], pair["response_a"], pair["response_b"])
        assert result.winner == pair["label"], (pair_id, result.p_a_better, result.verdicts[0].raw)
        gated = result.verdicts[0].raw.startswith("harm gate:")
        assert gated == pair_id.startswith("harmful"), (pair_id, result.verdicts[0].raw)
