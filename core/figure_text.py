"""A figure's text alternative, as numbers: the cells a sentence names for a reader who cannot see the figure.

The figure's own numbers (the matrix it draws, with its row and column labels) go in; the strongest cells come out,
largest first. Cells that are not finite (masked, not computed) are never named. Words are the app's (locales).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np


class Cell(NamedTuple):
    row: str
    col: str
    value: float


def strongest_cells(
    matrix: np.ndarray, row_labels: Sequence | None = None, col_labels: Sequence | None = None, k: int = 3
) -> list[Cell]:
    """The k largest finite cells of a 2-D matrix, largest first (ties: the earlier row, then column), named by
    their labels (their 0-based index where a figure has none)."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"a matrix has 2 dimensions, not {m.ndim}")
    rows = [str(r) for r in row_labels] if row_labels is not None else [str(i) for i in range(m.shape[0])]
    cols = [str(c) for c in col_labels] if col_labels is not None else [str(j) for j in range(m.shape[1])]
    flat = np.where(np.isfinite(m), m, -np.inf).ravel()
    finite = int(np.isfinite(m).sum())
    if flat.size > 4 * k:  # a large map: sort only the cells at or above the k-th largest (ties kept whole)
        kth = np.partition(flat, flat.size - k)[flat.size - k]
        candidates = np.flatnonzero(flat >= kth)
        order = candidates[np.argsort(-flat[candidates], kind="stable")][: min(k, finite)]
    else:
        order = np.argsort(-flat, kind="stable")[: min(k, finite)]
    return [Cell(rows[i // m.shape[1]], cols[i % m.shape[1]], float(flat[i])) for i in order]


# --- every figure, read from what it draws -----------------------------------------------------------------
# A figure's traces as plotly has them (plain mappings: the browser's JSON, where arrays may be base64 "bdata", or
# the fields of a graph_objects trace). Heatmaps: their strongest cells; bars: the largest and the smallest bar;
# lines: where they start and end, their highest and lowest points; points drawn without a line (mode 'markers': a
# scatter of draws, measurements): how many, their lowest and highest (their order is no path to tell). Traces a figure marks as decoration
# (hoverinfo "skip": bands, reference circles, legend squares), overlays (meta OVERLAY) and traces with nothing finite
# to tell are left out.

TRACE_FIELDS = (
    "type", "name", "x", "y", "z", "mode", "orientation", "hoverinfo", "visible", "xaxis", "yaxis", "meta", "colorbar",
    "coloraxis", "hovertemplate",
)  # fmt: skip
# The meta of a trace that marks cells of the map beneath it (viz.heatmap.attention_heatmap's masked cells: 1.0 where
# masked, a ✕ in the hover): the map says what those cells hold (nothing), so the overlay is no map of its own; read
# as one, its 1.0s were named the figure's largest values. It keeps its hover, so hoverinfo "skip" cannot mark it.
OVERLAY = "overlay"
MAX_SERIES = 6  # lines or bar groups a sentence names; the rest are counted (the table holds them all)
# A share drawn in % is told to the decimals its hover shows it with (%{x:.1%}: 63.2%), so the caption says what the
# reader pointing at it sees; one where the hover says none, as the pages' sentences do (viz hovers shares to one).
PERCENT_DECIMALS = 1


class Point(NamedTuple):
    at: str  # the category, or the x value as the axis shows it
    value: float


class MapText(NamedTuple):
    """The strongest cells of a heatmap; of several (thumbnails), the strongest over all tiles, each named by its
    tile (the trace's name)."""

    cells: list[Cell]
    tiles: list[str]  # per cell: its tile's name ("" for a figure with one map)
    axes: tuple[str, str] = ("yaxis", "xaxis")  # the layout's (rows', columns') axes of the strongest cell's map
    percent: bool = False  # its values drawn in % (in_percent): said as the figure says them
    decimals: int = PERCENT_DECIMALS  # in %: its hover's decimals (percent_decimals)


class BarText(NamedTuple):
    series: str
    bars: int
    largest: Point
    smallest: Point
    percent: bool = False
    decimals: int = PERCENT_DECIMALS
    panel: str = ""  # its panel's title where the figure has several (subplot titles), else ""


class LineText(NamedTuple):
    series: str
    points: int
    first: Point
    last: Point
    highest: Point
    lowest: Point
    percent: bool = False
    decimals: int = PERCENT_DECIMALS
    panel: str = ""


class PointsText(NamedTuple):
    """Points drawn without a line between them: a scatter has no first and last to go from and to (/ablation's
    placebo draws lie in the order they were drawn), only how many, and the lowest and the highest."""

    series: str
    points: int
    lowest: Point
    highest: Point
    at: str | None  # the one position every point stands at (a strip of dots on one row), else None
    percent: bool = False
    decimals: int = PERCENT_DECIMALS
    panel: str = ""


class FigureText(NamedTuple):
    statements: list  # MapText, BarText, LineText, PointsText in the figure's order (one MapText for all its maps)
    more: int  # series left unnamed past MAX_SERIES


def plotted(value) -> np.ndarray | None:
    """A trace's data array as plotly holds it: a list, a numpy array, or base64 {"dtype", "bdata", "shape"}."""
    if value is None:
        return None
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape is None:
            return array
        dims = [int(s) for s in shape.split(",")] if isinstance(shape, str) else list(shape)
        return array.reshape(dims)
    if isinstance(value, np.ndarray):
        return value
    try:
        array = np.asarray(value)
    except ValueError:  # ragged: rows of different lengths
        return np.asarray(value, dtype=object)
    return array if array.dtype.kind not in "US" else np.asarray(value, dtype=object)  # text keeps its numbers


def _numbers(value) -> np.ndarray:
    """Floats, with None and anything not a number as NaN (a figure's arrays are numbers: no loop for them)."""
    array = plotted(value)
    if array is None:
        return np.array([], dtype=float)
    try:
        return array.astype(float)
    except (TypeError, ValueError):  # text among the numbers
        numbers = [
            v if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) else np.nan for v in array.ravel()
        ]
        return np.asarray(numbers, dtype=float).reshape(array.shape)


def _label(value) -> str:
    """A category or an x value as a reader hears it: numbers with at most 4 significant digits."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        number = float(value)
        return str(int(number)) if number.is_integer() and abs(number) < 1e7 else f"{number:.4g}"
    return str(value)


def _axis_labels(layout: Mapping, axis: str) -> dict:
    """An axis's tick texts by value (a categorical axis drawn at 0..n-1 names its positions this way)."""
    spec = layout.get(axis) or {}
    vals, text = spec.get("tickvals"), spec.get("ticktext")
    if vals is None or text is None:
        return {}
    # a tick text drawn in lines (a long bar name on a phone) is read in one: plotly's <br> is no word
    return {
        _label(v): str(s).replace("<br>", " ")
        for v, s in zip(plotted(vals).tolist(), plotted(text).tolist(), strict=False)
    }


def _axis_name(ref: str | None, letter: str) -> str:
    """The layout key of a trace's axis: 'x2' -> 'xaxis2', none -> 'xaxis'."""
    return f"{letter}axis{(ref or letter)[1:]}"


def _positions(trace: Mapping, letter: str, n: int, layout: Mapping, given: Sequence | None = None) -> list[str]:
    """The labels of a trace's n positions along x or y: its own values, an axis's tick texts, the labels the
    caller gives (tiles placed by x0/dx), or 0..n-1."""
    raw = plotted(trace.get(letter))
    if (raw is None or raw.size != n) and given is not None and len(given) == n:
        return [str(g) for g in given]
    values = raw.ravel().tolist() if raw is not None and raw.size == n else list(range(n))
    ticks = _axis_labels(layout, _axis_name(trace.get(f"{letter}axis"), letter))
    return [ticks.get(_label(v), _label(v)) for v in values]


def _shown(trace: Mapping) -> bool:
    mode = str(trace.get("mode") or "")
    return (
        trace.get("visible") in (None, True)
        and trace.get("hoverinfo") != "skip"
        and trace.get("meta") != OVERLAY
        and not (mode and "lines" not in mode and "markers" not in mode)  # text only: labels of other traces
    )


def _markers_only(trace: Mapping) -> bool:
    """Whether a scatter draws its points with no line through them (plotly's mode 'markers', 'markers+text')."""
    mode = str(trace.get("mode") or "")
    return "markers" in mode and "lines" not in mode


def axis_in_percent(layout: Mapping, axis: str | None) -> bool:
    """Whether a figure draws the numbers along `axis` ('x', 'y2', 'xaxis2'; a colour axis 'coloraxis') in percent:
    its tick format (d3's, as plotly has it) is of type '%' ('.0%': 0.632 is drawn 63%). The figure's own format is
    the one declaration of its unit: its caption and its table say the numbers as it draws them."""
    if not axis:
        return False
    key = axis if "axis" in axis else _axis_name(axis, axis[0])
    spec = layout.get(key) or {}
    if key.startswith("coloraxis"):
        spec = spec.get("colorbar") or {}
    return str(spec.get("tickformat") or "").endswith("%")


def in_percent(trace: Mapping, layout: Mapping | None = None) -> bool:
    """Whether a trace's values are drawn in percent: a heatmap's by its colour bar (its own, or its colour axis's),
    a bar's or a line's by the axis its values stand along (value_axis)."""
    layout = layout or {}
    kind = trace.get("type") or "scatter"
    if kind == "heatmap":
        if trace.get("coloraxis"):
            return axis_in_percent(layout, str(trace["coloraxis"]))
        return str((trace.get("colorbar") or {}).get("tickformat") or "").endswith("%")
    letter = value_axis(trace)
    return axis_in_percent(layout, _axis_name(trace.get(f"{letter}axis"), letter))


def _has_text(value) -> bool:
    """Whether an array holds a name (a category): something neither a number nor missing."""
    array = plotted(value)
    if array is None or array.dtype.kind != "O":
        return False
    return any(v is not None and not isinstance(v, (int, float, np.number)) for v in array.ravel())


def value_axis(trace: Mapping) -> str:
    """The axis ('x' or 'y') a bar's or a point's values stand along: x where the trace lies horizontally (plotly's
    orientation 'h', or only names on y beside numbers on x: /ablation's dots, each row a name), else y."""
    if trace.get("orientation") in ("h", "v"):
        return "x" if trace["orientation"] == "h" else "y"
    y, x = trace.get("y"), _numbers(trace.get("x"))
    names_on_y = _has_text(y) and not np.isfinite(_numbers(y)).any()  # a line's 'n/a' among its numbers is no name
    return "x" if names_on_y and np.isfinite(x).any() else "y"


def percent_decimals(trace: Mapping) -> int:
    """The decimals a trace's hover shows its values in % with ('%{x:.1%}' -> 1; a heatmap's z, a bar's or a line's
    value axis): the figure's declaration of how finely a share is told; PERCENT_DECIMALS where it says none."""
    letter = "z" if trace.get("type") == "heatmap" else value_axis(trace)
    found = re.search(r"%\{" + letter + r":[^}]*?\.(\d+)%\}", str(trace.get("hovertemplate") or ""))
    return int(found.group(1)) if found else PERCENT_DECIMALS


def _first_map(traces: Sequence[Mapping]) -> Mapping | None:
    return next((t for t in traces if (t.get("type") == "heatmap") and _shown(t)), None)


def maps_in_percent(traces: Sequence[Mapping], layout: Mapping | None = None) -> bool:
    """Whether a figure's map (its first heatmap told, an overlay's aside) is drawn in percent: the unit of the
    matrix a page hands with it."""
    first = _first_map(traces)
    return first is not None and in_percent(first, layout)


def maps_decimals(traces: Sequence[Mapping]) -> int:
    """The decimals a figure's map (its first heatmap told) hovers a share in % with: the matrix a page hands with
    it is told so."""
    first = _first_map(traces)
    return PERCENT_DECIMALS if first is None else percent_decimals(first)


def panel_titles(traces: Sequence[Mapping], layout: Mapping) -> dict[tuple[str, str], str]:
    """Each panel's title, by its (x axis, y axis), where the traces lie on more than one panel: the subplot title
    plotly's make_subplots sets above it (a paper annotation centred over its x domain, at the top of its y domain).
    A series named alike in two panels (/flash-attention's 'row 0' under 'running max m' and 'running sum l') is
    told apart by it. One panel, or one without a title: no entry."""
    panels = {(_axis_name(t.get("xaxis"), "x"), _axis_name(t.get("yaxis"), "y")) for t in traces}
    if len(panels) < 2:
        return {}
    notes = [a for a in layout.get("annotations") or () if a.get("xref") == "paper" and a.get("yref") == "paper"]
    titles = {}
    for x, y in panels:
        x_domain = (layout.get(x) or {}).get("domain") or (0.0, 1.0)
        y_domain = (layout.get(y) or {}).get("domain") or (0.0, 1.0)
        centre = (x_domain[0] + x_domain[1]) / 2
        for a in notes:
            if abs(float(a.get("x", -1)) - centre) < 1e-6 and abs(float(a.get("y", -1)) - y_domain[1]) < 1e-6:
                titles[(x, y)] = _label(a.get("text"))
                break
    return titles


def describe(
    traces: Sequence[Mapping],
    layout: Mapping | None = None,
    k: int = 3,
    maps: bool = True,
    map_labels: tuple[Sequence | None, Sequence | None] = (None, None),
) -> FigureText:
    """What a figure shows, as numbers to put in words. maps=False leaves heatmaps to the caller (a page that hands
    the matrix with its labels); map_labels: the rows' and columns' names of heatmaps that carry none (tiles)."""
    layout = layout or {}
    statements, map_cells, more, series = [], [], 0, 0
    panels = panel_titles(list(filter(_shown, traces)), layout)
    for trace in filter(_shown, traces):
        kind, name = trace.get("type") or "scatter", str(trace.get("name") or "")
        if kind == "heatmap":
            z = _numbers(trace.get("z"))
            if not maps or z.ndim != 2 or not np.isfinite(z).any():
                continue
            rows = _positions(trace, "y", z.shape[0], layout, map_labels[0])
            cols = _positions(trace, "x", z.shape[1], layout, map_labels[1])
            if not map_cells:
                statements.append(None)  # the maps' place in the figure's order
            axes = (_axis_name(trace.get("yaxis"), "y"), _axis_name(trace.get("xaxis"), "x"))
            unit = (axes, in_percent(trace, layout), percent_decimals(trace))
            map_cells += [(c, name, unit) for c in strongest_cells(z, rows, cols, k)]
            continue
        if kind not in ("bar", "scatter", "scattergl"):
            continue
        horizontal = value_axis(trace) == "x"
        values = _numbers(trace.get("x" if horizontal else "y")).ravel()
        finite = np.isfinite(values)
        if not finite.any():
            continue
        series += 1
        if series > MAX_SERIES:
            more += 1
            continue
        at = _positions(trace, "y" if horizontal else "x", values.size, layout)
        points = [Point(at[i], float(values[i])) for i in np.flatnonzero(finite)]
        highest = max(points, key=lambda p: p.value)  # the first of equals: reading order
        lowest = min(points, key=lambda p: p.value)
        panel = panels.get((_axis_name(trace.get("xaxis"), "x"), _axis_name(trace.get("yaxis"), "y")), "")
        unit = (in_percent(trace, layout), percent_decimals(trace), panel)
        if kind == "bar":
            statements.append(BarText(name, len(points), highest, lowest, *unit))
        elif _markers_only(trace):
            shared = points[0].at if all(p.at == points[0].at for p in points) else None
            statements.append(PointsText(name, len(points), lowest, highest, shared, *unit))
        else:
            statements.append(LineText(name, len(points), points[0], points[-1], highest, lowest, *unit))
    if map_cells:
        ranked = sorted(map_cells, key=lambda cell: -cell[0].value)[:k]  # stable: the earlier tile first
        tiles = [name for _, name, _ in ranked] if len({name for _, name, _ in map_cells}) > 1 else [""] * len(ranked)
        (axes, percent, decimals) = ranked[0][2]  # the strongest cell's map: its panel's axes, its unit
        statements[statements.index(None)] = MapText([c for c, _, _ in ranked], tiles, axes, percent, decimals)
    return FigureText(statements, more)
