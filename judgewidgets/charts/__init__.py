"""Altair charts of judging results (altair is imported only when a chart is drawn)."""

from ._panel import panel_chart

__all__ = ["panel_chart"]
