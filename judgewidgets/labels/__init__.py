"""A person's labels as data: a durable, append-only label store and the labelling queue's logic.

`LabelStore(path)` keeps every label in a JSON Lines file the moment it is given (crash-safe, safe for several
notebooks at once); `LabelQueueModel` is the logic of `jw.LabelQueue` (and `jw.ReviewQueue` keeps its labels in
a LabelStore too).
"""

from ._kinds import KINDS, LabelKind
from ._queue import LabelQueueModel
from ._store import LabelRecord, LabelStore, LabelsView, content_key, item_key

__all__ = [
    "KINDS",
    "LabelKind",
    "LabelQueueModel",
    "LabelRecord",
    "LabelStore",
    "LabelsView",
    "content_key",
    "item_key",
]
