"""Figures for cost at scale: measured times against size on log-log axes (with fitted power laws), and grouped
bars (backends per shape, cache memory per attention variant). Arrays in, plotly figures out."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from .labels import safe_label

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def loglog_figure(
    sizes,
    series: dict[str, list],
    fits: dict[str, tuple[float, float] | None] | None = None,
    fit_from: float | None = None,
    title: str = "",
    x_title: str = "n",
    y_title: str = "ms",
    fit_label: str = "fit: slope {slope:.2f}",
    height: int = 420,
) -> go.Figure:
    """One line per series on log-log axes (missing values, None or NaN, leave gaps). fits: {name: (slope,
    intercept)} of log y = intercept + slope log x, drawn dashed over the fitted range [fit_from, max size]."""
    x = np.asarray(sizes, dtype=np.float64)
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        y = np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
        colour = PALETTE[i % len(PALETTE)]
        label = safe_label(name, 40)
        fig.add_trace(
            go.Scatter(
                x=x.tolist(),
                y=[None if not np.isfinite(v) else float(v) for v in y],
                mode="lines+markers",
                name=label,
                line=dict(color=colour),
                hovertemplate=f"{label}<br>%{{x:,}}: %{{y:.4g}}<extra></extra>",
            )
        )
        fit = (fits or {}).get(name)
        if fit is not None and fit[0] is not None and len(x):
            slope, intercept = fit
            lo = float(fit_from) if fit_from else float(x.min())
            xs = np.geomspace(max(lo, float(x.min())), float(x.max()), 20)
            fig.add_trace(
                go.Scatter(
                    x=xs.tolist(),
                    y=np.exp(intercept + slope * np.log(xs)).tolist(),
                    mode="lines",
                    name=safe_label(f"{name} — " + fit_label.format(slope=slope), 60),
                    line=dict(color=colour, dash="dash", width=1.5),
                    hoverinfo="skip",
                )
            )
    fig.update_layout(
        title=dict(text=safe_label(title, 120)),
        height=height,
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.2),
    )
    fig.update_xaxes(type="log", title_text=x_title, gridcolor="#eee")
    fig.update_yaxes(type="log", title_text=y_title, gridcolor="#eee")
    return fig


def grouped_bars(
    categories: list[str],
    series: dict[str, list],
    title: str = "",
    y_title: str = "",
    log_y: bool = False,
    text_format: str = ".3g",
    x_title: str = "",
    height: int = 420,
    hover_suffix: str = "",
    show_text: bool | None = None,
) -> go.Figure:
    """Vertical bars: one group per category (x), one bar per series. None values are left out (no bar).
    Values are written on the bars when there are few enough to read (show_text=None), or as asked."""
    if show_text is None:
        show_text = len(categories) * len(series) <= 12
    x = [safe_label(c, 60) for c in categories]
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        vals = [None if v is None or (isinstance(v, float) and not math.isfinite(v)) else float(v) for v in values]
        label = safe_label(name, 40)
        fig.add_trace(
            go.Bar(
                x=x,
                y=vals,
                name=label,
                marker_color=PALETTE[i % len(PALETTE)],
                text=["" if v is None else format(v, text_format) for v in vals] if show_text else None,
                textposition="outside" if show_text else "none",
                hovertemplate=f"{label}<br>%{{x}}: %{{y:{text_format}}}{safe_label(hover_suffix, 20)}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title=dict(text=safe_label(title, 120)),
        height=height,
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=80, b=10),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0),
    )
    fig.update_xaxes(title_text=x_title, type="category")
    fig.update_yaxes(title_text=y_title, type="log" if log_y else "linear", gridcolor="#eee")
    return fig
