"""A point going round a circle: one (sin, cos) column pair of the sinusoidal encoding, or one RoPE pair."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..labels import safe_label
from ..style import PALETTE, colour_bar
from .common import layout


def circle_figure(
    points,
    highlight: list[tuple[int, str]] | None = None,
    title: str = "",
    *,
    x_title: str,
    y_title: str,
    colour_title: str,
) -> go.Figure:
    """Points (n, 2) in the plane coloured by their index (position), with a unit-circle guide and optional
    highlighted indices. Equal axis scales so a rotation looks like one. The axes' and colour bar's words are the
    caller's (the reader's language): no default."""
    pts = np.asarray(points, dtype=np.float64)
    radius = float(np.max(np.hypot(pts[:, 0], pts[:, 1]))) if len(pts) else 1.0
    t = np.linspace(0, 2 * np.pi, 181)
    fig = go.Figure(
        go.Scatter(
            x=radius * np.cos(t),
            y=radius * np.sin(t),
            mode="lines",
            line=dict(color="#ccc", dash="dot"),
            hoverinfo="skip",
            showlegend=False,
        )
    )
    fig.add_trace(
        go.Scatter(
            x=pts[:, 0].astype(np.float32),
            y=pts[:, 1].astype(np.float32),
            mode="markers+lines",
            line=dict(color="#bbb", width=1),
            marker=dict(
                size=7,
                color=np.arange(len(pts)),
                colorscale="Viridis",
                showscale=True,
                colorbar=colour_bar(safe_label(colour_title, 30)),
            ),
            hovertemplate=f"{safe_label(colour_title, 30)} %{{marker.color}}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
            showlegend=False,
        )
    )
    for i, (index, label) in enumerate(highlight or []):
        # a label toward the circle's centre (on the right of a point at x = 1 it was cut at the plot's edge, 'p='),
        # the first above its point, the next below: /positions' two colliding positions sit almost on one point
        side = "left" if pts[index, 0] > 0 else "right"
        fig.add_trace(
            go.Scatter(
                x=[pts[index, 0]],
                y=[pts[index, 1]],
                mode="markers+text",
                text=[safe_label(label, 30)],
                textposition=f"{'bottom' if i % 2 else 'top'} {side}",
                marker=dict(size=14, symbol="circle-open", color=PALETTE[3], line=dict(width=2)),
                showlegend=False,
                hoverinfo="skip",
            )
        )
    layout(fig, title, x_title, y_title, height=440)
    fig.update_yaxes(scaleanchor="x", scaleratio=1)
    return fig
