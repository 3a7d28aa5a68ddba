"""Figures for the position-encoding pages: numeric-axis heatmaps, curves with optional min-max bands, the
unit-circle view of one RoPE pair, bars of ALiBi slopes. Arrays in, plotly figures out."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .labels import safe_label
from .style import PALETTE


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, height: int = 380) -> go.Figure:
    fig.update_layout(
        title=dict(text=safe_label(title, 160)),
        height=height,
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.2),
    )
    fig.update_xaxes(title_text=safe_label(x_title, 80), gridcolor="#eee", zeroline=False)
    fig.update_yaxes(title_text=safe_label(y_title, 80), gridcolor="#eee", zeroline=False)
    return fig


def value_heatmap(
    z,
    x=None,
    y=None,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    colorscale: str = "RdBu",
    zmid: float | None = 0.0,
    zmin=None,
    zmax=None,
    value_name: str = "value",
    height: int = 420,
    reverse_y: bool = True,
    decimals: int = 3,
    show_values: bool = False,
) -> go.Figure:
    """A numeric matrix on numeric axes (positions, dimensions). Row 0 at the top unless reverse_y=False.
    NaN cells (masked) stay blank."""
    z = np.round(np.asarray(z, dtype=np.float64), decimals).astype(np.float32)
    n_r, n_c = z.shape
    x = np.arange(n_c) if x is None else np.asarray(x)
    y = np.arange(n_r) if y is None else np.asarray(y)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            colorscale=colorscale,
            zmid=zmid if zmin is None and zmax is None else None,
            zmin=zmin,
            zmax=zmax,
            hoverongaps=False,
            hovertemplate=f"{safe_label(y_title, 40)}: %{{y}}<br>{safe_label(x_title, 40)}: %{{x}}<br>"
            f"{safe_label(value_name, 40)}: %{{z}}<extra></extra>",
            texttemplate="%{z}" if show_values else None,
            colorbar=dict(title=dict(text=safe_label(value_name, 40), side="right"), thickness=12),
        )
    )
    _layout(fig, title, x_title, y_title, height)
    if reverse_y:
        fig.update_yaxes(autorange="reversed")
    return fig


def curves(
    x,
    series: dict[str, np.ndarray],
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    log_x: bool = False,
    log_y: bool = False,
    bands: dict[str, tuple] | None = None,
    vlines: list[tuple[float, str]] | None = None,
    hlines: list[tuple[float, str]] | None = None,
    markers: bool = False,
    height: int = 400,
    x_per_series: dict[str, np.ndarray] | None = None,
) -> go.Figure:
    """One line per named series over x (or x_per_series[name]); bands[name] = (low, high) shades a min-max range
    around that series (used for downsampled curves: the band shows every value the bin holds)."""
    fig = go.Figure()
    for k, (name, ys) in enumerate(series.items()):
        colour = PALETTE[k % len(PALETTE)]
        xs = np.asarray(x if x_per_series is None or name not in x_per_series else x_per_series[name])
        if bands and name in bands:
            lo, hi = (np.asarray(b, dtype=np.float32) for b in bands[name])
            fig.add_trace(
                go.Scatter(
                    x=np.concatenate([xs, xs[::-1]]),
                    y=np.concatenate([hi, lo[::-1]]),
                    fill="toself",
                    fillcolor=colour,
                    opacity=0.15,
                    line=dict(width=0),
                    hoverinfo="skip",
                    showlegend=False,
                    name=safe_label(name, 40),
                )
            )
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=np.asarray(ys, dtype=np.float32),
                name=safe_label(name, 40),
                mode="lines+markers" if markers else "lines",
                line=dict(color=colour, width=1.8),
            )
        )
    for value, label in vlines or []:
        fig.add_vline(
            x=value,
            line_dash="dash",
            line_color="#555",
            annotation_text=safe_label(label, 60),
            annotation_position="top left",
        )
    for value, label in hlines or []:
        fig.add_hline(
            y=value,
            line_dash="dot",
            line_color="#888",
            annotation_text=safe_label(label, 60),
            annotation_position="bottom right",
        )
    _layout(fig, title, x_title, y_title, height)
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def collision_figure(
    positions, values, p: int, q: int, title: str = "", x_title: str = "position", y_title: str = "sin(position × ω)"
) -> go.Figure:
    """One sine column over positions, with the two positions whose values (nearly) coincide marked."""
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
    return _layout(fig, title, x_title, y_title)


def circle_figure(
    points,
    highlight: list[tuple[int, str]] | None = None,
    title: str = "",
    x_title: str = "first coordinate",
    y_title: str = "second coordinate",
    colour_title: str = "position",
) -> go.Figure:
    """Points (n, 2) in the plane coloured by their index (position), with a unit-circle guide and optional
    highlighted indices. Equal axis scales so a rotation looks like one."""
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
                colorbar=dict(title=dict(text=safe_label(colour_title, 30)), thickness=12),
            ),
            hovertemplate=f"{safe_label(colour_title, 30)} %{{marker.color}}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
            showlegend=False,
        )
    )
    for index, label in highlight or []:
        fig.add_trace(
            go.Scatter(
                x=[pts[index, 0]],
                y=[pts[index, 1]],
                mode="markers+text",
                text=[safe_label(label, 30)],
                textposition="top right",
                marker=dict(size=14, symbol="circle-open", color=PALETTE[3], line=dict(width=2)),
                showlegend=False,
                hoverinfo="skip",
            )
        )
    _layout(fig, title, x_title, y_title, height=440)
    fig.update_yaxes(scaleanchor="x", scaleratio=1)
    return fig


def bars(
    labels: list[str],
    values,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    text: list[str] | None = None,
    log_y: bool = False,
    height: int = 360,
) -> go.Figure:
    fig = go.Figure(
        go.Bar(
            x=[safe_label(s, 30) for s in labels],
            y=np.asarray(values, dtype=np.float64),
            text=[safe_label(s, 20) for s in text] if text else None,
            textposition="outside",
            marker_color=PALETTE[0],
        )
    )
    _layout(fig, title, x_title, y_title, height)
    fig.update_xaxes(type="category")
    if log_y:
        fig.update_yaxes(type="log")
    return fig
