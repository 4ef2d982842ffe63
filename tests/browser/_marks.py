"""What a chart shows, read from the pixels a person sees: the colour at a point (is that cell lit or faded?) and
where the entries of a chart's bottom legend are (to click one). The page is photographed and the photograph
decoded by the browser itself (no imaging library), so this works on canvas, SVG and every Vega version alike."""

from __future__ import annotations

import base64
from typing import Any

_DECODE = """async (png) => {
    const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], {type: 'image/png'}));
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const context = canvas.getContext('2d');
    context.drawImage(bitmap, 0, 0);
    const data = context.getImageData(0, 0, bitmap.width, bitmap.height).data;
    return {width: bitmap.width, height: bitmap.height, data};
}"""

_MEAN = f"""async (png) => {{
    const image = await ({_DECODE})(png);
    const sum = [0, 0, 0];
    for (let i = 0; i < image.data.length; i += 4) for (let c = 0; c < 3; c++) sum[c] += image.data[i + c];
    const n = image.data.length / 4;
    return sum.map((s) => Math.round(s / n));
}}"""

# The bottom band of non-white rows (a bottom legend's entries: symbols and labels on one line), and in it the
# runs of coloured columns (symbols; labels are grey), each as its centre.
_LEGEND = f"""async (png) => {{
    const image = await ({_DECODE})(png);
    const at = (x, y) => {{
        const i = 4 * (y * image.width + x);
        return [image.data[i], image.data[i + 1], image.data[i + 2]];
    }};
    const white = (p) => p[0] > 240 && p[1] > 240 && p[2] > 240;
    const coloured = (p) => !white(p) && Math.max(...p) - Math.min(...p) > 20;
    const inked = (y) => {{ for (let x = 0; x < image.width; x++) if (!white(at(x, y))) return true; return false; }};
    let bottom = image.height - 1;
    while (bottom >= 0 && !inked(bottom)) bottom--;
    let top = bottom;
    while (top > 0 && inked(top - 1)) top--;
    const runs = [];
    let run = null;
    for (let x = 0; x < image.width; x++) {{
        const ys = [];
        for (let y = top; y <= bottom; y++) if (coloured(at(x, y))) ys.push(y);
        if (ys.length) {{
            if (run && x - run.last <= 2) {{ run.last = x; run.ys.push(...ys); }}
            else {{ run = {{first: x, last: x, ys: [...ys]}}; runs.push(run); }}
        }}
    }}
    return runs.map((r) => [(r.first + r.last) / 2, r.ys.reduce((a, b) => a + b, 0) / r.ys.length]);
}}"""


def _photo(page: Any, box: dict[str, float]) -> str:
    return base64.b64encode(page.screenshot(clip=box)).decode("ascii")


def colour_at(page: Any, x: float, y: float) -> tuple[int, int, int]:
    """The mean colour (r, g, b) of the 3 × 3 pixels around page point (x, y), as shown now."""
    r, g, b = page.evaluate(_MEAN, _photo(page, {"x": x - 1, "y": y - 1, "width": 3, "height": 3}))
    return r, g, b


def lightness(colour: tuple[int, int, int]) -> int:
    """r + g + b: a mark faded towards the white background gets lighter."""
    return sum(colour)


def legend_entries(page: Any, element: Any) -> list[tuple[float, float]]:
    """Page points of the symbols of the legend drawn along the bottom of `element` (a chart's canvas or SVG), left
    to right. The mouse is moved away first: a tooltip left showing would be read as the bottom band."""
    page.mouse.move(5, 5)
    page.wait_for_timeout(300)
    box = element.bounding_box()
    assert box is not None, "the chart is not on the page"
    found = page.evaluate(_LEGEND, _photo(page, box))
    return [(box["x"] + x, box["y"] + y) for x, y in found]


def cursor_at(page: Any, x: float, y: float) -> str:
    """The mouse pointer's shape over page point (x, y) after moving there ("pointer", "default", ...), followed
    by the element under it and its parents with theirs, for a message when it is not the one expected."""
    page.mouse.move(x, y)
    page.wait_for_timeout(300)  # Vega sets the cursor when its dataflow has run
    script = """([x, y]) => {
        const chain = [];
        for (let e = document.elementFromPoint(x, y); e && chain.length < 4; e = e.parentElement) {
            chain.push(`${getComputedStyle(e).cursor}:${e.tagName}.${e.className}`);
        }
        return chain.join(' < ');
    }"""
    return str(page.evaluate(script, [x, y]))
