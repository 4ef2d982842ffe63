"""The guard of every test module that runs the embedded model: skip the module when its runtime or weights are
not installed, and mark its tests `local_model`."""

from __future__ import annotations

import pytest

from judgewidgets._errors import LocalModelError
from judgewidgets.local._weights import chunk_paths


def require_local_model() -> pytest.MarkDecorator:
    """Skip the calling module unless xllamacpp and the weights are installed; its `pytestmark`."""
    pytest.importorskip("xllamacpp")
    try:
        chunk_paths()
    except LocalModelError:
        pytest.skip("the embedded judge's weights are not installed", allow_module_level=True)
    return pytest.mark.local_model
