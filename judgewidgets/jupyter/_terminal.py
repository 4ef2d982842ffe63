"""Charts where nothing can draw them: in terminal IPython a chart is saved as a self-contained HTML file and
shown as one line naming it, instead of a widget's `<JupyterChart object at 0x...>`."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["FILE_RENDERER", "chart_folder", "save_chart_html", "use_file_charts"]

FILE_RENDERER = "judgewidgets_file"


def chart_folder() -> Path:
    """Where terminal sessions' charts are saved: a judgewidgets-charts folder in the system's temporary folder."""
    return Path(tempfile.gettempdir()) / "judgewidgets-charts"


def save_chart_html(spec: dict[str, Any], folder: Path | None = None) -> Path:
    """Write a Vega-Lite spec as an HTML file that draws it offline (the JavaScript bundled by vl-convert), named
    by the spec's hash so showing the same chart twice writes one file."""
    import vl_convert

    blob = json.dumps(spec, sort_keys=True, default=str).encode()
    target = (folder or chart_folder()) / f"chart-{hashlib.sha256(blob).hexdigest()[:12]}.html"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(vl_convert.vegalite_to_html(spec, bundle=True), encoding="utf-8")
    return target


def _render(spec: dict[str, Any], **metadata: Any) -> dict[str, str]:
    views = len(spec.get("hconcat") or spec.get("vconcat") or spec.get("concat") or [spec])
    what = "chart" if views == 1 else f"chart of {views} views"
    return {"text/plain": f"<{what} saved to {save_chart_html(spec)}: open it in a browser>"}


def use_file_charts() -> bool:
    """Make altair show charts as saved HTML files (for terminal IPython). Returns False, changing nothing,
    without vl-convert."""
    import importlib.util

    if importlib.util.find_spec("vl_convert") is None:
        return False
    import altair as alt

    if FILE_RENDERER not in alt.renderers.names():
        alt.renderers.register(FILE_RENDERER, _render)
    alt.renderers.enable(FILE_RENDERER)
    return True
