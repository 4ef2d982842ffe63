"""Pairwise judging, position-bias diagnostics, tournaments and ratings with intervals.

```python
pj = jw.PairwiseJudge(model="local", aspects=["accuracy", "clarity"])
r = pj.compare(question, response_a, response_b)       # r.winner, r.consistent, r.confidence
tr = jw.Tournament(pj, format="adaptive").run(questions, {"v1": [...], "v2": [...], "v3": [...]})
tr.ranking, tr.chart()
tr.corrected(human_labels).ranking                       # ratings corrected with a few human verdicts (PPI++)
jw.bradley_terry(battles_df)                             # any (model_a, model_b, winner) table
jw.position_bias(verdicts_df)                           # any table of verdicts in both orders
```
"""

from ._adaptive import Adaptive
from ._batch import PairwiseTable
from ._bias import flips_by_gap, position_bias, verdicts_long
from ._corrected import CorrectedRanking, corrected_ranking
from ._formats import PairingFormat, RoundRobin, Swiss
from ._games import kendall_tau
from ._judge import BUILTIN_ASPECTS, Comparison, PairwiseComparer, PairwiseJudge
from ._panel import PairwisePanel, PanelComparison
from ._ratings import BradleyTerry, Elo, RatingMethod, StrengthFit, WinRate, bradley_terry, elo, win_rate
from ._records import OrderVerdict, PairExample, PairwiseResult
from ._scales import AB_TIE, FIVE_LEVEL, Scale
from ._state import TournamentState
from ._tournament import Tournament, TournamentResult

__all__ = [
    "AB_TIE",
    "BUILTIN_ASPECTS",
    "FIVE_LEVEL",
    "Adaptive",
    "BradleyTerry",
    "Comparison",
    "CorrectedRanking",
    "Elo",
    "OrderVerdict",
    "PairExample",
    "PairingFormat",
    "PairwiseComparer",
    "PairwiseJudge",
    "PairwisePanel",
    "PairwiseResult",
    "PairwiseTable",
    "PanelComparison",
    "RatingMethod",
    "RoundRobin",
    "Scale",
    "StrengthFit",
    "Swiss",
    "Tournament",
    "TournamentResult",
    "TournamentState",
    "WinRate",
    "bradley_terry",
    "corrected_ranking",
    "elo",
    "flips_by_gap",
    "kendall_tau",
    "position_bias",
    "verdicts_long",
    "win_rate",
]
