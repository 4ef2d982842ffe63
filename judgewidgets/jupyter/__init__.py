"""The notebook layer: `%%judge` magics, the panel builder, live convergence, explorers, the review queue and
the labelling queue.

Every widget is a thin view over a plain model object (`PanelBuilderModel`, `DisagreementModel`,
`ReviewQueueModel`, `TournamentModel`, `RubricModel`, `TargetPickerModel`, `LabelQueueModel`) that is tested
without a browser.
"""

from ..labels import LabelQueueModel
from ._alignment import AlignmentView
from ._builder import PanelBuilder, PanelBuilderModel
from ._cascade import CascadeTargetPicker
from ._explorer import DisagreementExplorer, DisagreementModel
from ._label_queue import LabelQueue
from ._live import LiveConvergence
from ._magics import JudgeMagics, load_ipython_extension, use_offline_charts
from ._rubric import RubricModel, RubricView
from ._terminal import use_file_charts
from ._views import ReviewQueue, ReviewQueueModel, TournamentModel, TournamentView

__all__ = [
    "AlignmentView",
    "CascadeTargetPicker",
    "DisagreementExplorer",
    "DisagreementModel",
    "JudgeMagics",
    "LabelQueue",
    "LabelQueueModel",
    "LiveConvergence",
    "PanelBuilder",
    "PanelBuilderModel",
    "ReviewQueue",
    "ReviewQueueModel",
    "RubricModel",
    "RubricView",
    "TournamentModel",
    "TournamentView",
    "load_ipython_extension",
    "use_file_charts",
    "use_offline_charts",
]
