"""Figures of the FlashAttention page: the tiles over the attention matrix, the running statistics m and l per key
tile, the partial output, and HBM traffic against n. Data from core.flash_attention in, plotly figures out; words
come from the `t(key, **fmt)` callable of the [flash_attention.figure] catalog section."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from core.flash_attention import TileWalk, TrafficView

from .heatmap import attention_heatmap, matrix_heatmap, subplot_grid
from .scaling import loglog_figure
from .style import BLUE, GREEN, LEGEND_AT_FOOT, MARGIN, ORANGE, RED, colour

Words = Callable[..., str]


def _rect(fig: go.Figure, rows: tuple[int, int], cols: tuple[int, int], line: str, width: float, fill: str = ""):
    """Outline cells [rows) x [cols) of a categorical heatmap (cell k spans k - 0.5 .. k + 0.5)."""
    fig.add_shape(
        type="rect",
        x0=cols[0] - 0.5,
        x1=cols[1] - 0.5,
        y0=rows[0] - 0.5,
        y1=rows[1] - 0.5,
        line=dict(color=line, width=width),
        fillcolor=fill or None,
        opacity=1.0 if not fill else 0.18,
        layer="above",
    )


def tiles_figure(view: TileWalk, t: Words, step: int) -> go.Figure:
    """The finished weights (n x n, masked cells grey) with the tile grid: the walked query tile in orange, the key
    tiles it has already consumed shaded green, the one arriving at `step` outlined red."""
    masked = ~view.allowed
    fig = attention_heatmap(
        view.weights,
        view.labels,
        view.labels,
        masked=masked,
        title=t("tiles_title", br=view.br, bc=view.bc),
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        value_name=t("weight"),
        show_values=view.n <= 12,
    )
    # its short title across the colour bar's top, not up its side: 18 px more for the cells beside the partial
    # output (392 px each), whose '0.02' plotly set in 8 px type with the title standing (chromium, 1,280 px)
    fig.data[0].colorbar.title.side = "top"
    for s, _ in view.key_tiles[1:]:
        fig.add_vline(x=s - 0.5, line=dict(color="#888", width=1, dash="dot"))
    for s, _ in view.query_tiles[1:]:
        fig.add_hline(y=s - 0.5, line=dict(color="#888", width=1, dash="dot"))
    for past in view.steps[:step]:
        _rect(fig, view.queries, past.keys, GREEN, 1, fill=GREEN)
    _rect(fig, view.queries, (0, view.n), ORANGE, 3)
    _rect(fig, view.queries, view.steps[step].keys, RED, 3)
    return fig


def statistics_figure(view: TileWalk, t: Words, step: int) -> go.Figure:
    """Running max m and running sum l of each row of the query tile after each key tile; the current step
    marked. A row that has seen no key yet has m = -inf: no point is drawn there."""
    # Plain dicts on a cached subplot grid, one unvalidated figure (validation and add_vline were most of
    # this page's interpreter time under load); tests/viz/test_flash_attention_unvalidated.py compares it with
    # plotly's own add_vline and a validated rebuild.
    layout, _ = subplot_grid(rows=1, cols=2, subplot_titles=[t("m_title"), t("l_title")])
    steps = list(range(len(view.steps)))
    traces = []
    for r in range(view.queries[1] - view.queries[0]):
        name = t("row", i=view.queries[0] + r)
        m = [float(s.m[r]) if np.isfinite(s.m[r]) else None for s in view.steps]
        l_ = [float(s.l[r]) for s in view.steps]
        for col, ys in ((1, m), (2, l_)):
            traces.append(dict(type="scatter", x=steps, y=ys, mode="lines+markers", name=name, legendgroup=name,
                               showlegend=col == 1, line=dict(color=colour(r)), xaxis=f"x{col if col > 1 else ''}",
                               yaxis=f"y{col if col > 1 else ''}"))  # fmt: skip
    layout["shapes"] = []
    for col in (1, 2):
        x, y = ("x2", "y2") if col == 2 else ("x", "y")
        layout["shapes"].append(dict(type="line", x0=step, x1=step, xref=x, y0=0, y1=1, yref=f"{y} domain",
                                     line=dict(color=RED, width=2, dash="dash")))  # fmt: skip
        layout["xaxis2" if col == 2 else "xaxis"] |= dict(title=dict(text=t("step_axis")), dtick=1)
    layout |= dict(title=dict(text=""), margin=MARGIN, plot_bgcolor="white", height=340,
                   legend=LEGEND_AT_FOOT)  # fmt: skip
    return go.Figure(data=traces, layout=layout, _validate=False)


def output_figure(view: TileWalk, t: Words, step: int) -> go.Figure:
    """O~ / l of the query tile after `step`: the softmax-weighted mean of the values seen so far."""
    return matrix_heatmap(
        view.steps[step].output,
        view.tile_rows,
        view.dims,
        title=t("output_title", step=step),
        x_title=t("dim_axis"),
        y_title=t("query_axis"),
        value_name="O",
    )


def traffic_figure(view: TrafficView, t: Words) -> go.Figure:
    """HBM accesses (elements) against n on log-log axes: the two counted algorithms, the FA-2 loop order, and
    Theorem 2's orders (no constant: the slopes are what to compare); the user's n marked."""
    series = {
        t("series_naive"): view.curves["naive"],
        t("series_flash1", br=view.br, bc=view.bc): view.curves["flash1"],
        t("series_flash2"): view.curves["flash2"],
        t("series_theta_naive"): view.curves["theta_naive"],
        t("series_theta_flash"): view.curves["theta_flash"],
    }
    fig = loglog_figure(
        view.sizes,
        series,
        title=t("traffic_title", d=view.d, m=view.m_sram),
        x_title=t("n_axis"),
        y_title=t("traffic_axis"),
    )
    for trace, dash, c in zip(fig.data, ("solid", "solid", "solid", "dot", "dot"), (BLUE, RED, GREEN, BLUE, RED)):
        trace.line.dash = dash
        trace.line.color = c
    fig.add_vline(x=view.n, line=dict(color=ORANGE, width=2, dash="dash"))
    return fig
