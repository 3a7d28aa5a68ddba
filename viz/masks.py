"""Figures for masks and for the sqrt(d_k) saturation demo. Arrays in, plotly figures out.

A mask is drawn as two kinds of cell, never as a colour scale: "may attend" cells in one colour with a tick,
masked cells grey with a cross (the same grey as masked cells in viz.heatmap), so a masked cell can never be
read as a small weight.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .heatmap import MASKED_COLOUR, _axes
from .labels import safe_label

ALLOWED_COLOUR = "#9ecae1"
SCALED_COLOUR, UNSCALED_COLOUR = "#1f77b4", "#d62728"


def mask_figure(
    allowed,
    query_labels,
    key_labels,
    title: str = "",
    allowed_name: str = "may attend",
    masked_name: str = "masked",
    x_title: str = "key (attended to)",
    y_title: str = "query (attending)",
    height: int | None = None,
) -> go.Figure:
    """allowed: bool (n_q, n_k), True where the query (row) may attend to the key (column)."""
    allowed = np.asarray(allowed, dtype=bool)
    n_q, n_k = allowed.shape
    x = [safe_label(s, 40) for s in key_labels]
    y = [safe_label(s, 40) for s in query_labels]
    small = n_q * n_k <= 40 * 40
    fig = go.Figure()
    for value, colour, name, mark in (
        (True, ALLOWED_COLOUR, allowed_name, "✓"),
        (False, MASKED_COLOUR, masked_name, "✕"),
    ):
        cells = allowed == value
        if not cells.any():
            continue
        fig.add_trace(
            go.Heatmap(
                z=np.where(cells, 1.0, np.nan).astype(np.float32),
                x=x,
                y=y,
                showscale=False,
                hoverongaps=False,
                colorscale=[[0, colour], [1, colour]],
                xgap=1,
                ygap=1,
                name=safe_label(name, 40),
                texttemplate=mark if small else None,
                textfont=dict(color="#555"),
                hovertemplate=f"query: %{{y}}<br>key: %{{x}}<br>{safe_label(name, 40)}<extra></extra>",
            )
        )
    _axes(fig, title, x_title, y_title, n_q, n_k, height)
    return fig


def entropy_vs_dk_figure(
    d_k,
    entropy_scaled,
    entropy_unscaled,
    max_entropy: float,
    chosen_d_k: int | None = None,
    title: str = "",
    scaled_name: str = "softmax(q·k / √d_k)",
    unscaled_name: str = "softmax(q·k)",
    max_name: str = "ln(n): uniform weights",
    x_title: str = "d_k",
    y_title: str = "mean entropy of a row (nats)",
) -> go.Figure:
    """Mean row entropy against d_k (log axis), with and without the scaling, and ln(n) for reference."""
    d_k = np.asarray(d_k, dtype=np.float64)
    fig = go.Figure()
    for values, name, colour in (
        (entropy_scaled, scaled_name, SCALED_COLOUR),
        (entropy_unscaled, unscaled_name, UNSCALED_COLOUR),
    ):
        fig.add_trace(
            go.Scatter(
                x=d_k,
                y=np.round(np.asarray(values, dtype=np.float64), 4),
                mode="lines+markers",
                name=safe_label(name, 60),
                line=dict(color=colour),
                hovertemplate="d_k = %{x}<br>%{y:.3f} nats<extra></extra>",
            )
        )
    fig.add_hline(
        y=max_entropy,
        line_dash="dash",
        line_color="#777",
        annotation_text=safe_label(f"{max_name} = {max_entropy:.3f}", 80),
        annotation_position="top left",
    )
    if chosen_d_k is not None:
        fig.add_vline(x=chosen_d_k, line_dash="dot", line_color="#444")
    fig.update_layout(
        title=dict(text=safe_label(title, 160)),
        height=380,
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.25),
    )
    fig.update_xaxes(type="log", title_text=safe_label(x_title, 60), gridcolor="#eee")
    fig.update_yaxes(title_text=safe_label(y_title, 80), gridcolor="#eee", range=[0, max_entropy * 1.12])
    return fig


def softmax_row_bars(
    weights_scaled,
    weights_unscaled,
    key_labels,
    title: str = "",
    scaled_name: str = "with 1/√d_k",
    unscaled_name: str = "without",
    x_title: str = "key",
    y_title: str = "weight",
) -> go.Figure:
    """One row of weights, with and without scaling, as grouped bars."""
    x = [safe_label(s, 30) for s in key_labels]
    fig = go.Figure()
    for values, name, colour in (
        (weights_scaled, scaled_name, SCALED_COLOUR),
        (weights_unscaled, unscaled_name, UNSCALED_COLOUR),
    ):
        fig.add_trace(
            go.Bar(
                x=x,
                y=np.round(np.asarray(values, dtype=np.float64), 4),
                name=safe_label(name, 60),
                marker_color=colour,
                hovertemplate="%{x}: %{y:.4f}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title=dict(text=safe_label(title, 160)),
        height=320,
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.3),
    )
    fig.update_xaxes(title_text=safe_label(x_title, 60), type="category")
    fig.update_yaxes(title_text=safe_label(y_title, 60), range=[0, 1.05], gridcolor="#eee")
    return fig
