"""Altair charts as widgets that redraw in place, drawn offline and so that many of them can share one page."""

from __future__ import annotations

import functools
from typing import Any

from .._charts import EMBED_OPTIONS

__all__ = ["EMBED_OPTIONS", "chart_widget", "offline_widget_class"]


def chart_widget(chart: Any) -> Any:
    """An `altair.JupyterChart` over `chart` whose JavaScript travels with the widget (no CDN), drawn on canvas
    (see EMBED_OPTIONS); set `.chart` to redraw it."""
    return offline_widget_class()(chart, embed_options=dict(EMBED_OPTIONS))


@functools.cache
def offline_widget_class() -> type:
    """A subclass of `altair.JupyterChart` carrying vega, vega-lite and vega-embed bundled by vl-convert as its
    module. altair's own `JupyterChart.enable_offline()` would do the same to every JupyterChart in the session,
    the user's too; a subclass leaves theirs alone. Made once per process: the bundle takes about a second."""
    import altair as alt
    import vl_convert
    from altair.jupyter.jupyter_chart import load_js_src

    # vl-convert bundles a module that imports from the packages it ships; altair's source opens with CDN imports
    # of the same packages, which the bundle replaces (what enable_offline does).
    lines = load_js_src().split("\n")
    while lines and (not lines[0].strip() or lines[0].startswith(("import", "//"))):
        lines.pop(0)
    version = ".".join(alt.SCHEMA_VERSION.removeprefix("v").split(".")[:2])
    known = version in vl_convert.get_vegalite_versions()
    bundled = vl_convert.javascript_bundle("\n".join(lines), vl_version=version if known else None)
    return type("OfflineJupyterChart", (alt.JupyterChart,), {"_esm": bundled, "__module__": __name__})
