"""The notebook layer: `%%judge` magics, the panel builder, live convergence, explorers and the review queue.

Every widget is a thin view over a plain model object (`PanelBuilderModel`, `DisagreementModel`,
`ReviewQueueModel`, `TargetPickerModel`) that is tested without a browser.
"""

from ._builder import PanelBuilder, PanelBuilderModel
from ._cascade import CascadeTargetPicker
from ._explorer import DisagreementExplorer, DisagreementModel
from ._live import LiveConvergence
from ._magics import JudgeMagics, load_ipython_extension, use_offline_charts
from ._views import ReviewQueue, ReviewQueueModel, TournamentView

__all__ = [
    "CascadeTargetPicker",
    "DisagreementExplorer",
    "DisagreementModel",
    "JudgeMagics",
    "LiveConvergence",
    "PanelBuilder",
    "PanelBuilderModel",
    "ReviewQueue",
    "ReviewQueueModel",
    "TournamentView",
    "load_ipython_extension",
    "use_offline_charts",
]
