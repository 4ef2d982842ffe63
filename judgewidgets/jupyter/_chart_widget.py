"""Altair charts as widgets that redraw in place, drawn so that many of them can share one notebook page."""

from __future__ import annotations

from typing import Any

# Vega's SVG renderer names legend gradients from a counter that starts at 0 in every copy of vega, and every
# chart widget loads its own copy: two charts with colour legends on one page both define "gradient_0", and the
# browser paints the second legend with the first chart's colours. The canvas renderer has no such ids.
EMBED_OPTIONS: dict[str, Any] = {"renderer": "canvas"}


def chart_widget(chart: Any) -> Any:
    """`altair.JupyterChart` over `chart`, drawn on canvas (see EMBED_OPTIONS); set `.chart` to redraw it."""
    import altair as alt

    return alt.JupyterChart(chart, embed_options=dict(EMBED_OPTIONS))
