"""Sinusoidal encoding figures: the PE matrix, PE(i).PE(j) as a matrix and against distance, one sine column with
its closest collision, the (sin, cos) circle, and how much each column changes over a long context."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from ..style import PALETTE
from .circle import circle_figure
from .common import curves, layout, value_heatmap

if TYPE_CHECKING:
    from core.positions.sinusoidal import CollisionView, EncodingView, PooledEncoding, SparsityView


def encoding_figure(view: EncodingView, t) -> go.Figure:
    return value_heatmap(
        view.pe,
        x=view.dims,
        y=view.positions,
        title=t("pe_title"),
        x_title=t("dimension"),
        y_title=t("position"),
        value_name="PE",
        decimals=3,
    )


def pooled_encoding_figure(view: PooledEncoding, t) -> go.Figure:
    """The block means on axes in positions and dimensions (each cell at its block's first position and column)."""
    return value_heatmap(
        view.pe,
        x=view.col_labels,
        y=view.row_labels,
        title=t("pe_pooled_title", n=view.n, d=view.d, rows=view.pe.shape[0], cols=view.pe.shape[1]),
        x_title=t("dimension"),
        y_title=t("position"),
        value_name=t("block_mean"),
        decimals=3,
    )


def dot_figure(view: EncodingView, t) -> go.Figure:
    return value_heatmap(
        view.dots,
        x=view.positions,
        y=view.positions,
        title=t("dot_title"),
        x_title="j",
        y_title="i",
        value_name=t("dot"),
        colorscale="Viridis",
        zmid=None,
    )


def dot_distance_figure(view: EncodingView, t) -> go.Figure:
    return curves(
        view.distances,
        {t("dot"): view.dot_by_distance},
        title=t("dot_line_title"),
        x_title=t("distance"),
        y_title=t("dot"),
    )


def _sine_figure(positions, values, p: int, q: int, title: str = "", *, x_title: str, y_title: str) -> go.Figure:
    """One sine column over positions, with the two positions whose values (nearly) coincide marked; the axes' words
    are the caller's (no English default)."""
    fig = go.Figure(
        go.Scatter(
            x=np.asarray(positions),
            y=np.asarray(values, dtype=np.float32),
            mode="lines+markers",
            marker=dict(size=4),
            line=dict(color=PALETTE[0]),
            name="sin",
        )
    )
    for pos, colour in ((p, PALETTE[3]), (q, PALETTE[1])):
        fig.add_trace(
            go.Scatter(
                x=[pos],
                y=[float(values[pos])],
                mode="markers+text",
                text=[f"p = {pos}"],
                textposition="top center",
                marker=dict(size=12, color=colour),
                showlegend=False,
            )
        )
    return layout(fig, title, x_title, y_title)


def collision_figure(view: CollisionView, t) -> go.Figure:
    c = view.collision
    return _sine_figure(
        view.positions,
        view.points[:, 0],
        c["p"],
        c["q"],
        title=t("collision_title", omega=view.omega),
        x_title=t("position"),
        y_title=t("sine_axis"),
    )


def pair_circle_figure(view: CollisionView, t) -> go.Figure:
    c = view.collision
    return circle_figure(
        view.points,
        [(c["p"], f"p = {c['p']}"), (c["q"], f"p = {c['q']}")],
        title=t("circle_title"),
        x_title="sin",
        y_title="cos",
        colour_title=t("position"),
    )


def variation_figure(view: SparsityView, t) -> go.Figure:
    """Sine and cosine columns' variation on a log y axis (major ticks only), with the threshold."""
    cols = view.columns
    return curves(
        cols[0::2],
        {t("sin_cols"): view.variation[0::2], t("cos_cols"): view.variation[1::2]},
        title=t("var_title", n=view.n, d=view.d),
        x_title=t("dimension"),
        y_title=t("variation"),
        log_y=True,
        x_per_series={t("cos_cols"): cols[1::2]},
        hlines=[(view.threshold, t("threshold"))],
    )
