"""Charts that draw anywhere, with no network and no setup.

Every chart the package returns goes through `offline(chart)`: the same altair chart (every method, `|`, `&`,
`+`, `.to_dict()`, `.save()` work), of a subclass whose display is what the notebook draws by itself. A notebook
gets the Vega-Lite JSON under `application/vnd.vegalite.v5+json`, which JupyterLab and Notebook 7 render with the
Vega they ship (JupyterLab 4.6 renders Vega-Lite 3 to 5, not altair 6's v6 type), beside an SVG drawn here by
vl-convert for whatever cannot (an nbconvert HTML export, GitHub, a classic notebook). Terminal IPython
gets a self-contained HTML file and one line naming it. Nothing is fetched from a CDN, and altair's renderer
setting is left alone: a user who enabled a renderer of their own sees our charts through it.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
import tempfile
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any, TypeVar

import altair as alt

from ._display import notebook_frontend

__all__ = [
    "EMBED_OPTIONS",
    "VEGALITE_MIME",
    "chart_folder",
    "notebook_bundle",
    "offline",
    "save_chart_html",
    "terminal_bundle",
]

# The Vega-Lite type the notebooks' own renderers accept (JupyterLab's vega5-extension: v3, v4 and v5).
VEGALITE_MIME = "application/vnd.vegalite.v5+json"
_V5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"

# Vega's SVG renderer names legend gradients from a counter that starts at 0 in every copy of vega, and every
# chart widget loads its own copy: two charts with colour legends on one page both define "gradient_0", and the
# browser paints the second legend with the first chart's colours. The canvas renderer has no such ids.
EMBED_OPTIONS: MappingProxyType[str, Any] = MappingProxyType({"renderer": "canvas"})

Bundle = tuple[dict[str, Any], dict[str, Any]]
C = TypeVar("C", bound=alt.TopLevelMixin)


class _DrawnOffline(alt.TopLevelMixin):
    """Display without a CDN (see the module docstring); charts composed from this one with `|`, `&` and `+`
    display the same way."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any] | Bundle | None:
        if alt.renderers.active != "default":  # the user's own choice of renderer decides
            return super()._repr_mimebundle_(include, exclude)
        spec = self.to_dict()
        if not notebook_frontend() and _ipython_shell() is not None:
            return terminal_bundle(spec), {}
        data, metadata = notebook_bundle(spec, altair_name=_altair_class(self).__name__)
        if include:
            data = {k: v for k, v in data.items() if k in include}
        if exclude:
            data = {k: v for k, v in data.items() if k not in exclude}
        return data, metadata

    def save(self, fp: str | Path | IO[Any], format: Any = None, *args: Any, **kwargs: Any) -> None:
        """altair's `save`; an HTML file carries its JavaScript (`inline=True`) unless told otherwise, so that it
        opens offline too."""
        kind = format or (Path(fp).suffix.removeprefix(".") if isinstance(fp, (str, Path)) else None)
        if kind == "html" and "inline" in inspect.signature(alt.TopLevelMixin.save).parameters:
            kwargs.setdefault("inline", True)
        super().save(fp, format, *args, **kwargs)

    def __or__(self, other: Any) -> Any:
        return offline(super().__or__(other))

    def __and__(self, other: Any) -> Any:
        return offline(super().__and__(other))

    def __add__(self, other: Any) -> Any:
        return offline(super().__add__(other))

    def __repr__(self) -> str:
        return f"alt.{_altair_class(self).__name__}(...)"


class OfflineChart(_DrawnOffline, alt.Chart):
    """`alt.Chart` drawn offline."""


class OfflineLayerChart(_DrawnOffline, alt.LayerChart):
    """`alt.LayerChart` drawn offline."""


class OfflineHConcatChart(_DrawnOffline, alt.HConcatChart):
    """`alt.HConcatChart` drawn offline."""


class OfflineVConcatChart(_DrawnOffline, alt.VConcatChart):
    """`alt.VConcatChart` drawn offline."""


class OfflineConcatChart(_DrawnOffline, alt.ConcatChart):
    """`alt.ConcatChart` drawn offline."""


class OfflineFacetChart(_DrawnOffline, alt.FacetChart):
    """`alt.FacetChart` drawn offline."""


class OfflineRepeatChart(_DrawnOffline, alt.RepeatChart):
    """`alt.RepeatChart` drawn offline."""


_KINDS: tuple[type[_DrawnOffline], ...] = (
    OfflineChart,
    OfflineLayerChart,
    OfflineHConcatChart,
    OfflineVConcatChart,
    OfflineConcatChart,
    OfflineFacetChart,
    OfflineRepeatChart,
)


def offline(chart: C) -> C:
    """`chart` as the same chart of the subclass that displays offline; a chart of another kind comes back as it
    is."""
    if isinstance(chart, _DrawnOffline):
        return chart
    source: Any = chart
    for kind in _KINDS:
        if type(chart) is _altair_class(kind):
            made: Any = kind(*source._args, **source._kwds)  # what altair's own copy() does
            return made
    return chart


def _altair_class(chart: Any) -> type:
    """The altair class an offline chart (or chart class) stands for."""
    kind = chart if isinstance(chart, type) else type(chart)
    return next(base for base in kind.__mro__ if base.__module__.startswith("altair."))


def _ipython_shell() -> Any:
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def notebook_bundle(spec: dict[str, Any], altair_name: str = "Chart") -> Bundle:
    """(data, metadata) a notebook displays: the Vega-Lite spec the frontend draws, an SVG for exports and
    frontends without a Vega-Lite renderer (left out when vl-convert cannot draw the spec), and a line of text."""
    data: dict[str, Any] = {VEGALITE_MIME: {**spec, "$schema": _V5_SCHEMA}}
    svg = _svg(spec)
    if svg is not None:
        data["image/svg+xml"] = svg
    data["text/plain"] = f"<alt.{altair_name}: a Vega-Lite chart; .save('chart.html') keeps it as a file>"
    embed = {**EMBED_OPTIONS, **(alt.renderers.options.get("embed_options") or {})}
    return data, {VEGALITE_MIME: {"embed_options": embed}}


def _svg(spec: dict[str, Any]) -> str | None:
    """The chart drawn as SVG by vl-convert, with the Vega-Lite version the spec was written for; None when it
    cannot be drawn here (it asks for data from a URL, which is never fetched, or Vega-Lite rejects it)."""
    import vl_convert

    try:
        return str(vl_convert.vegalite_to_svg(spec, vl_version=_vl_version(spec), allowed_base_urls=[]))
    except ValueError:
        return None


def _vl_version(spec: dict[str, Any]) -> str | None:
    """ "6.4" for a spec whose $schema is .../vega-lite/v6.4.1.json, when vl-convert ships that version; None
    (vl-convert's newest) otherwise."""
    import vl_convert

    name = str(spec.get("$schema", "")).rsplit("/", 1)[-1].removeprefix("v").removesuffix(".json")
    wanted = ".".join(name.split(".")[:2])
    return wanted if wanted in vl_convert.get_vegalite_versions() else None


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


def terminal_bundle(spec: dict[str, Any]) -> dict[str, str]:
    """What terminal IPython shows for a chart: the chart saved as an HTML file, and one line naming it."""
    views = len(spec.get("hconcat") or spec.get("vconcat") or spec.get("concat") or [spec])
    what = "chart" if views == 1 else f"chart of {views} views"
    return {"text/plain": f"<{what} saved to {save_chart_html(spec)}: open it in a browser>"}
