"""The model view: every (layer, head) as a small tile, all tiles in one figure.

Each tile is its own heatmap trace placed on one shared pair of axes (x0/dx/y0/dy), so hovering a tile names
its layer and head, clicking it reports its trace (`tile_of_point` turns that back into (layer, head)), and one
colour axis serves all tiles. Tiles are block-mean thumbnails (core side), so the
browser receives layers x heads x s x s numbers, never layers x heads x n x n.
"""

import math

import numpy as np
import plotly.graph_objects as go

from .labels import hover_names, rows_labels_px, safe_label
from .style import MASKED_COLOUR, RED, colour_bar

GAP = 0.25  # empty space between tiles, as a fraction of a tile
# The colour bar lies under the grid (px under the plot: the bar, its numbers, their pad): standing beside it, it took
# about 75 px of a 390 px phone's width from square tiles whose size the width sets, and MiniLM's 12 heads' tiles
# came 14 px apart, closer than their layer numbers are tall (scripts/phone_layout_check.py, ja with a long text)
BAR_BELOW = 60


def head_grid(
    thumbs,
    title: str = "",
    *,
    layer_label: str,
    head_label: str,
    value_name: str,
    zmax: float | None = None,
    colorscale: str = "Blues",
    highlight: tuple[int, int] | None = None,
    decimals: int = 3,
    head_names: list[str] | None = None,
) -> go.Figure:
    """thumbs (L, H, s, s): tile [l, h] is drawn in row l (top to bottom), column h. Inside a tile, rows are
    queries (top to bottom) and columns keys, as in every heatmap of the app. NaN cells (masked) stay blank.
    head_names: column labels (e.g. '4·kv1' to show which key/value head a query head reads). layer_label,
    head_label, value_name: the page's words (axes, each tile's name and hover, the colour bar), required."""
    t = np.asarray(thumbs, dtype=np.float64)
    L, H, s_q, s_k = t.shape
    t = np.round(t, decimals).astype(np.float32)
    finite = t[np.isfinite(t)]
    zmax = float(finite.max()) if zmax is None and finite.size else (zmax or 1.0)
    step_x, step_y = 1 + GAP, 1 + GAP
    # Plain trace dicts, not go.Heatmap objects, and no per-property validation: for 72 tiles plotly's validators
    # were 2/3 of a rerun of /attention's model view under a class's load (py-spy), and that time holds the GIL
    # that every visitor of the server shares. tests/test_attention.py rebuilds the figure with validation on.
    tiles = [
        dict(
            type="heatmap",
            z=t[l, h],
            x0=h * step_x + 0.5 / s_k,
            dx=1 / s_k,
            y0=l * step_y + 0.5 / s_q,
            dy=1 / s_q,
            coloraxis="coloraxis",
            hoverongaps=False,
            name=f"{layer_label} {l}, {head_label} {h}",  # the tile's name in its text alternative
            hovertemplate=f"{layer_label} {l}, {head_label} {h}<br>{value_name} %{{z}}<extra></extra>",
        )
        for l in range(L)
        for h in range(H)
    ]
    fig = go.Figure(data=tiles, _validate=False)
    if highlight is not None:
        l, h = highlight
        fig.add_shape(
            type="rect",
            x0=h * step_x - 0.04,
            x1=h * step_x + 1.04,
            y0=l * step_y - 0.04,
            y1=l * step_y + 1.04,
            line=dict(color=RED, width=2),
        )
    fig.update_layout(
        title=dict(text=safe_label(title, 160), y=0.99, yanchor="top"),
        coloraxis=dict(
            colorscale=colorscale,
            cmin=0.0,
            cmax=zmax,
            colorbar=colour_bar(value_name, orientation="h", y=0, yanchor="top", ypad=12),
        ),
        height=int(140 + BAR_BELOW + L * step_y * min(90.0, 1500 / (L * step_y), 900 / (H * step_x))),
        # the layer numbers and their title in the left margin: plotly set them in the blank beside a grid its height
        # left narrower than its plot, so the room the grid had changed with the screen (viz.labels.scaled_plot_px)
        margin=dict(l=10 + round(rows_labels_px(len(str(L - 1)), bool(layer_label))), r=10, t=100, b=10 + BAR_BELOW),
        plot_bgcolor="white",
        showlegend=False,
    )
    fig.update_xaxes(
        tickmode="array",
        tickvals=[h * step_x + 0.5 for h in range(H)],
        ticktext=head_names or [str(h) for h in range(H)],
        title_text=head_label,
        side="top",
        range=[-GAP / 2, H * step_x - GAP / 2],
        showgrid=False,
        zeroline=False,
        constrain="domain",
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=[l * step_y + 0.5 for l in range(L)],
        ticktext=[str(l) for l in range(L)],
        title_text=layer_label,
        range=[L * step_y - GAP / 2, -GAP / 2],  # reversed: layer 0 on top; set, so a page can fit its height
        showgrid=False,
        zeroline=False,
        scaleanchor="x",
        scaleratio=1,
        constrain="domain",
        constraintoward="bottom",  # the grid, shorter than its plot where the width limits it, just above its bar
    )
    return fig


def tile_of_point(point: dict, n_layers: int, n_heads: int) -> tuple[int, int] | None:
    """(layer, head) of the tile a clicked point lies in, from a Streamlit plotly selection point: its position
    (x, y in tile units, as head_grid places tiles), else its trace number (tiles are added layer by layer, head
    by head, so trace l * H + h is tile (l, h)). None for anything else (a point outside every tile)."""
    if not isinstance(point, dict):  # a crafted click: anything
        return None

    def number(v) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)

    x, y = point.get("x"), point.get("y")
    if number(x) and number(y):
        h, l = int(x // (1 + GAP)), int(y // (1 + GAP))
        inside = x - h * (1 + GAP) <= 1 and y - l * (1 + GAP) <= 1
    else:
        curve = point.get("curve_number")
        if not isinstance(curve, int) or isinstance(curve, bool):
            return None
        l, h = divmod(curve, n_heads)
        inside = True
    return (l, h) if inside and 0 <= l < n_layers and 0 <= h < n_heads else None


def token_grid(
    weights,
    head_labels: list[str],
    key_labels: list[str],
    n_heads: int,
    masked=None,
    title: str = "",
    *,
    x_title: str,
    y_title: str,
    value_name: str,
    decimals: int = 3,
) -> go.Figure:
    """The token view: one query token's weights (rows = every (layer, head), columns = keys).
    weights (L * H, n_k); masked (n_k,) or (L * H, n_k) bool, True where the query may not see the key
    (drawn grey: a masked cell is a gap in the data showing the grey plot background, which costs no bytes);
    a thin line separates layers (every n_heads rows). x_title, y_title, value_name: the page's words, required."""
    z = np.asarray(weights, dtype=np.float64)
    rows, n_k = z.shape
    m = np.zeros_like(z, dtype=bool) if masked is None else np.broadcast_to(np.asarray(masked, bool), z.shape)
    z = np.where(m, np.nan, np.round(z, decimals)).astype(np.float32)
    x = [safe_label(s, 40) for s in key_labels]
    y = [safe_label(s, 40) for s in head_labels]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            colorscale="Blues",
            zmin=0.0,
            hoverongaps=False,
            hovertemplate=f"{hover_names('', x_title)}{value_name}: %{{z:.{decimals}f}}<extra></extra>",
            colorbar=colour_bar(value_name),
        )
    )
    # One layout update for all separators (add_hline per layer re-validates the layout each time).
    fig.update_layout(
        shapes=[
            dict(type="line", xref="paper", x0=0, x1=1, y0=r - 0.5, y1=r - 0.5, line=dict(color="#888", width=1))
            for r in range(n_heads, rows, n_heads)
        ]
    )
    fig.update_layout(
        title=dict(text=safe_label(title, 160)),
        height=int(min(1600, max(300, 100 + 9 * rows))),
        margin=dict(l=10, r=10, t=50, b=10),
        plot_bgcolor=MASKED_COLOUR if m.any() else "white",
    )
    fig.update_xaxes(
        title_text=x_title, type="category", tickangle=-60 if n_k > 6 else 0, showgrid=False, showticklabels=n_k <= 200
    )
    fig.update_yaxes(
        title_text=y_title,
        type="category",
        autorange="reversed",
        showticklabels=rows <= 300,
        showgrid=False,
        tickfont=dict(size=9),
    )
    return fig
