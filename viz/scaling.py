"""Measured times against size on log-log axes, with fitted power laws. Arrays in, a plotly figure out.

Being emptied ("scaling" meant three things): the linear-attention charts moved to viz/linear_attention.py,
the grouped bars to viz/sdpa_gqa.py. `loglog_figure` stays while viz/flash_attention.py imports it; delete this
module once nothing does."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .labels import safe_label
from .linear_attention import major_log_ticks
from .style import LEGEND_AT_FOOT, colour


def loglog_figure(
    sizes,
    series: dict[str, list],
    fits: dict[str, tuple[float, float] | None] | None = None,
    fit_from: float | None = None,
    title: str = "",
    *,
    x_title: str,
    y_title: str,
    fit_label: str | None = None,
    height: int = 420,
) -> go.Figure:
    """One line per series on log-log axes (missing values, None or NaN, leave gaps). fits: {name: (slope,
    intercept)} of log y = intercept + slope log x, drawn dashed over the fitted range [fit_from, max size], each
    named by fit_label ('{slope:.2f}' in it). The axes' words and fit_label are the page's: required (fit_label where
    a fit is drawn), as the English defaults ('fit: slope 2.00') would be shown to a Japanese or Korean reader."""
    if fit_label is None and any(fit is not None and fit[0] is not None for fit in (fits or {}).values()):
        raise ValueError("a fitted line needs the page's fit_label")
    x = np.asarray(sizes, dtype=np.float64)
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        y = np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
        line_colour = colour(i)
        label = safe_label(name, 40)
        fig.add_trace(
            go.Scatter(
                x=x.tolist(),
                y=[None if not np.isfinite(v) else float(v) for v in y],
                mode="lines+markers",
                name=label,
                line=dict(color=line_colour),
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
                    line=dict(color=line_colour, dash="dash", width=1.5),
                    hoverinfo="skip",
                )
            )
    fig.update_layout(
        title=dict(text=safe_label(title, 120)),
        height=height,
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50, b=10),
        legend=LEGEND_AT_FOOT,
    )
    # major ticks only (plotly labels every digit of a short log axis)
    ys = [v for values in series.values() for v in values]
    fig.update_xaxes(type="log", title_text=x_title, gridcolor="#eee", **major_log_ticks(list(x)))
    fig.update_yaxes(type="log", title_text=y_title, gridcolor="#eee", **major_log_ticks(ys))
    return fig
