"""Charts where nothing can draw them: terminal IPython shows a chart as a self-contained HTML file and one line
naming it. The package's own charts do so by themselves (judgewidgets/_charts.py); `use_file_charts()` makes
altair show every chart that way, for a user who asks for it."""

from __future__ import annotations

from typing import Any

from .._charts import chart_folder, save_chart_html, terminal_bundle

__all__ = ["FILE_RENDERER", "chart_folder", "save_chart_html", "use_file_charts"]

FILE_RENDERER = "judgewidgets_file"


def _render(spec: dict[str, Any], **metadata: Any) -> dict[str, str]:
    return terminal_bundle(spec)


def use_file_charts() -> bool:
    """Make altair show every chart, the user's own too, as a saved HTML file (for terminal IPython). Returns
    False, changing nothing, without vl-convert."""
    import importlib.util

    if importlib.util.find_spec("vl_convert") is None:
        return False
    import altair as alt

    if FILE_RENDERER not in alt.renderers.names():
        alt.renderers.register(FILE_RENDERER, _render)
    alt.renderers.enable(FILE_RENDERER)
    return True
