"""Query x key heatmaps. Rows (y, top to bottom) are queries, columns (x) are keys. Masked cells are drawn
grey with a cross: they are not small weights, they are not there.

Built as plain trace and layout dicts handed to `go.Figure(..., _validate=False)`, as viz/grid.head_grid does:
plotly's per-property validation and update_layout's path parsing were half of /masks' rerun time under load,
holding the interpreter lock every visitor of the server shares (py-spy --gil). tests/viz/test_heatmap.py
rebuilds each figure with validation and checks it is identical.
"""

import copy
import json
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from _plotly_utils.basevalidators import ColorscaleValidator
from plotly.subplots import make_subplots

from core.figure_text import OVERLAY

from .labels import (
    AXIS_TITLE_LINE,
    AXIS_TITLE_PX,
    COLOUR_BAR_PX,
    COLUMN_EM,
    FONT_PX,
    PHONE_FIGURE_PX,
    X_AXIS_BELOW,
    Y_LABELS_GAP,
    fitted_title,
    hover_names,
    label_columns,
    safe_label,
)
from .style import (
    LEGEND_AT_FOOT,
    MARGIN,
    MASKED_COLOUR,  # noqa: F401  (re-exported: older imports)
    PALETTE,
    colour_bar,
)

FULL_HOVER_CELLS = 128 * 128  # above this, hover shows indices only (keeps the payload small)


def attention_heatmap(
    weights,
    query_labels,
    key_labels,
    masked=None,
    *,
    x_title: str,
    y_title: str,
    value_name: str,
    title: str = "",
    zmin: float | None = 0.0,
    zmax: float | None = None,
    colorscale: str = "Blues",
    show_values: bool | None = None,
    height: int | None = None,
    decimals: int = 3,
    narrowest_px: int = PHONE_FIGURE_PX,
) -> go.Figure:
    """weights (n_q, n_k); labels already unique (see viz.labels.indexed_labels); masked: bool (n_q, n_k),
    True where the key is hidden from the query; x_title, y_title, value_name: the page's words for the keys, the
    queries and a cell's number, in the reader's language, required: an English default reached Japanese and Korean
    readers wherever a caller forgot one (the hover too, which names a cell by the axes' titles); narrowest_px: the
    narrowest the page draws the figure (a phone's figure unless it stands in a column of a laptop's page), which the
    columns' labels must fit to lie flat."""
    z = np.asarray(weights, dtype=np.float64)
    n_q, n_k = z.shape
    masked = np.zeros_like(z, dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    z = np.where(masked, np.nan, np.round(z, decimals)).astype(np.float32)
    x = [safe_label(s, 40) for s in key_labels]
    y = [safe_label(s, 40) for s in query_labels]
    if show_values is None:
        show_values = n_q * n_k <= 12 * 12
    # the hover names query and key as the axes do: the page's words, in the reader's language
    named = hover_names(y_title, x_title)
    hover = f"{named}{value_name}: %{{z:.{decimals}f}}<extra></extra>"
    traces = [
        _heatmap(
            z=z,
            x=x,
            y=y,
            colorscale=colorscale,
            zmin=zmin,
            zmax=zmax,
            hoverongaps=False,
            hovertemplate=hover,
            colorbar=colour_bar(value_name),
            texttemplate=f"%{{z:.{min(decimals, 2)}f}}" if show_values else None,
        )
    ]
    if masked.any():
        # A constant texttemplate would be drawn on every cell, the unmasked ones (NaN here) included: the cross
        # comes from per-cell text instead, empty where the key is visible.
        mark = n_q * n_k <= 40 * 40
        traces.append(
            _heatmap(
                z=np.where(masked, 1.0, np.nan).astype(np.float32),
                x=x,
                y=y,
                showscale=False,
                colorscale=[[0, MASKED_COLOUR], [1, MASKED_COLOUR]],
                hovertemplate=f"{named}✕<extra></extra>",  # the cell's own mark: no word to translate
                text=np.where(masked, "✕", "").tolist() if mark else None,
                texttemplate="%{text}" if mark else None,
                textfont=dict(color="#777"),
                hoverongaps=False,
                name="masked",  # for code to find the layer: no legend entry, hover or caption names it
                meta=OVERLAY,  # its caption is the map's: core.figure_text tells no overlay as a map
            )
        )
    return figure(traces, layout(title, x_title, y_title, n_q, n_k, height, x, y, narrowest_px))


def with_cell_marks(fig: go.Figure, marks, query_labels, key_labels, name: str) -> go.Figure:
    """Open squares on an attention_heatmap's (row, column) cells (marks: (row, column) pairs; labels as given to
    it), named in a legend at the figure's foot: a heatmap is no legend entry, so with one trace beside it plotly
    showed no legend and the squares went unnamed (/rnn-attention's map)."""
    if marks:
        rows, cols = [safe_label(s, 40) for s in query_labels], [safe_label(s, 40) for s in key_labels]
        fig.add_trace(go.Scatter(x=[cols[c] for _, c in marks], y=[rows[r] for r, _ in marks], mode="markers",
                                 marker=dict(symbol="square-open", size=18, color=PALETTE[3], line=dict(width=2)),
                                 name=safe_label(name, 60), hoverinfo="skip", showlegend=True))  # fmt: skip
        fig.update_layout(showlegend=True, legend=LEGEND_AT_FOOT)
    return fig


def matrix_heatmap(
    values,
    row_labels,
    col_labels,
    title: str = "",
    *,
    x_title: str,
    y_title: str,
    value_name: str,
    colorscale: str = "RdBu",
    zmid: float | None = 0.0,
    show_values: bool | None = None,
    height: int | None = None,
    decimals: int = 2,
) -> go.Figure:
    """A labelled numeric matrix (scores, Q, K, V, ...) with a diverging scale centred on zmid. x_title, y_title,
    value_name: the page's words for the columns, the rows and a cell's number (or its symbol: "QKᵀ", "R"), required:
    the hover names a cell by them, and a default ("value") was English to a Japanese or Korean reader."""
    z = np.round(np.asarray(values, dtype=np.float64), decimals).astype(np.float32)
    n_r, n_c = z.shape
    if show_values is None:
        show_values = n_r * n_c <= 12 * 12
    x, y = [safe_label(s, 40) for s in col_labels], [safe_label(s, 40) for s in row_labels]
    trace = _heatmap(
        z=z,
        x=x,
        y=y,
        colorscale=colorscale,
        zmid=zmid,
        hoverongaps=False,
        hovertemplate=f"{hover_names(y_title, x_title)}{value_name}: %{{z}}<extra></extra>",
        texttemplate="%{z}" if show_values else None,
        colorbar=dict(thickness=12),
    )
    return figure([trace], layout(title, x_title, y_title, n_r, n_c, height, x, y))


def scale(name: str) -> list:
    """A named plotly.py colour scale as the list of stops validation would write (for unvalidated figures)."""
    return [list(stop) for stop in _scale(name)]


@lru_cache(maxsize=32)
def _scale(name: str) -> tuple:
    """A named plotly.py colorscale as its list of stops, as validation would write it: plotly.js has scales of the
    same names that look different (its "Blues" is not plotly.py's)."""
    return tuple(tuple(stop) for stop in ColorscaleValidator("colorscale", "heatmap").validate_coerce(name))


def _heatmap(**props) -> dict:
    """A heatmap trace as a plain dict; None means "not set", as in go.Heatmap."""
    if isinstance(props.get("colorscale"), str):
        props["colorscale"] = scale(props["colorscale"])
    return {"type": "heatmap", **{k: v for k, v in props.items() if v is not None}}


# What stands beside a map (px), as chromium draws /masks' three kinds 282 px wide: the figure's margins (20), the
# colour bar with its numbers and its title standing up its side, from the plot's edge (74), the gaps either side of
# the rows' labels (two Y_LABELS_GAP) and the rows' title, AXIS_TITLE_LINE a line (a title longer than a short map is
# tall is cut into two or three: viz.labels.for_page). Guessed at 80 px in all, it left '0 Dogs' and '1 bark' lying
# flat over each other on /masks' maps, drawn 69 px wide where 160 were counted on.
MARGINS_PX = 20
# A label standing at -60 degrees drops sin 60 of its width; a map's height leaves such labels this many px
STANDING_DROP, STANDING_ROOM = 0.87, 60


def standing_drop_px(labels) -> float:
    """px the longest of `labels` (12 px type, standing at -60 degrees) reaches below the plot, by its width as
    viz.labels guesses it."""
    return STANDING_DROP * COLUMN_EM * FONT_PX * max(map(label_columns, labels), default=0)


def title_lines(text: str, plot_px: float) -> int:
    """Lines a y axis's title is cut into up a plot `plot_px` tall, as a page draws it (viz.labels.for_page)."""
    return fitted_title(text, plot_px, AXIS_TITLE_PX)[0].count("<br>") + 1 if text else 0


def beside_the_map(title_lines: int = 1) -> float:
    """px beside a map whose rows' title is drawn in `title_lines` lines, its rows' labels left out."""
    return MARGINS_PX + COLOUR_BAR_PX + 2 * Y_LABELS_GAP + AXIS_TITLE_LINE * title_lines


def key_tick_angle(x_labels, y_labels, figure_px: int = PHONE_FIGURE_PX, beside: float | None = None) -> int:
    """The columns' labels lying (0) where each fits its column on a figure `figure_px` wide, else standing at -60
    degrees: more than six columns, or a label wider than its column, whose width is what the rows' labels and what
    stands `beside` the map (beside_the_map: a one-line title's by default) leave the map (/encoder-decoder with a long
    Korean text: '1 静かな' over '2 医者' at 390 px)."""
    if len(x_labels) > 6:
        return -60
    column_px = COLUMN_EM * FONT_PX
    rows_px = column_px * max(map(label_columns, y_labels), default=0)
    map_px = figure_px - rows_px - (beside_the_map() if beside is None else beside)
    widest = column_px * max(map(label_columns, x_labels), default=0)
    return 0 if widest <= map_px / max(len(x_labels), 1) - 4 else -60


def layout(
    title: str, x_title: str, y_title: str, n_rows: int, n_cols: int, height=None, x=(), y=(), figure_px=PHONE_FIGURE_PX
) -> dict:
    """The layout of a query x key heatmap as a plain dict: categorical axes, rows top to bottom; `x`, `y`: the
    labels as drawn (key_tick_angle)."""
    side = max(n_rows, n_cols)
    base = height or int(min(720, max(260, 120 + 22 * side)))
    beside = beside_the_map(title_lines(y_title, base - MARGIN["t"] - MARGIN["b"] - X_AXIS_BELOW))
    angle = key_tick_angle(x, y, figure_px, beside) if len(x) else (-60 if n_cols > 6 else 0)
    # standing labels longer than the room left for them make the figure taller, not the plot shorter: squeezed, a
    # Japanese sentence's label (24 columns) ran into the axis's title (/encoder-decoder at 390 px)
    drop = standing_drop_px(x) if angle and n_cols <= 200 else 0
    return {
        "title": {"text": safe_label(title, 120)},
        "height": base + max(0, round(drop - STANDING_ROOM)),
        "margin": dict(MARGIN),
        "plot_bgcolor": "white",
        "xaxis": {"title": {"text": x_title}, "type": "category", "tickangle": angle,
                  "showticklabels": n_cols <= 200, "side": "bottom"},
        "yaxis": {"title": {"text": y_title}, "type": "category", "autorange": "reversed",
                  "showticklabels": n_rows <= 200},
    }  # fmt: skip


def figure(traces: list[dict], layout: dict) -> go.Figure:
    """A Figure of plain trace and layout dicts, unvalidated (its tests rebuild it with validation)."""
    return go.Figure(data=traces, layout=layout, _validate=False)


def subplot_grid(keep: tuple[str, ...] | None = None, **grid) -> tuple[dict, dict[tuple[int, int], tuple[str, str]]]:
    """make_subplots(**grid)'s layout as plain dicts, a fresh copy for the caller to fill in (only the entries whose
    names start with one of `keep`, e.g. the axes without the template), and each subplot's axes' layout names
    ("xaxis4", "yaxis4") by (row, column). Made once per grid: make_subplots validates every axis and title it adds,
    milliseconds on every rerun of a page that draws one."""
    layout, axes = _subplot_grid(json.dumps(grid, sort_keys=True))
    if keep is not None:
        layout = {name: value for name, value in layout.items() if name.startswith(keep)}
    return copy.deepcopy(layout), dict(axes)


@lru_cache(maxsize=64)
def _subplot_grid(grid_json: str) -> tuple[dict, dict]:
    grid = json.loads(grid_json)
    fig = make_subplots(**grid)
    axes = {}
    for row in range(1, grid.get("rows", 1) + 1):
        for col in range(1, grid.get("cols", 1) + 1):
            cell = fig.get_subplot(row, col)  # None where a span or an empty spec covers the cell
            if cell is not None:
                axes[row, col] = (cell.xaxis.plotly_name, cell.yaxis.plotly_name)
    return fig.layout.to_plotly_json(), axes
