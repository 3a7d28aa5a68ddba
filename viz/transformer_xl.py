"""Figures of the /transformer-xl page: the five masks side by side, the effective context through the layers,
and loss against position (in the text, or within a segment). Data in, plotly figures out."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import ALLOWED_COLOUR, MASKED_COLOUR, base_layout, colour


def masks_figure(masks: dict[str, np.ndarray], t: Callable[..., str]) -> go.Figure:
    """One small n x n mask per method (blue = may attend, grey = hidden), queries down, keys across."""
    names = list(masks)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[t(f"method_{m}") for m in names])
    for k, name in enumerate(names, start=1):
        fig.add_trace(
            go.Heatmap(
                z=masks[name].astype(np.float32),
                colorscale=[[0, MASKED_COLOUR], [1, ALLOWED_COLOUR]],
                zmin=0,
                zmax=1,
                showscale=False,
                xgap=1,
                ygap=1,
                hovertemplate=t("query") + " %{y}, " + t("key") + " %{x}<extra></extra>",
            ),
            row=1,
            col=k,
        )
        fig.update_yaxes(autorange="reversed", showticklabels=k == 1, row=1, col=k)
        fig.update_xaxes(scaleanchor=f"y{'' if k == 1 else k}", row=1, col=k)
    base_layout(fig, height=300)
    return fig


def lines_figure(x, series: dict[str, list], title: str, x_title: str, y_title: str, t, vlines=()) -> go.Figure:
    """One line per method (names are method keys, translated by t('method_<key>')); dashed markers at vlines."""
    fig = go.Figure()
    for k, (name, values) in enumerate(series.items()):
        fig.add_trace(
            go.Scatter(
                x=list(x),
                y=[None if v is None or not np.isfinite(v) else float(v) for v in values],
                mode="lines",
                name=t(f"method_{name}"),
                line=dict(color=colour(k), width=3 if name == "full" else 2, dash="dot" if name == "full" else None),
                hovertemplate="%{x}: %{y:.3f}<extra></extra>",
            )
        )
    for x0 in vlines:
        fig.add_vline(x=x0, line=dict(color="#999", width=1, dash="dash"))
    base_layout(fig, title=title, height=380, legend=dict(orientation="h", y=-0.25))
    fig.update_xaxes(title_text=x_title, gridcolor="#eee")
    fig.update_yaxes(title_text=y_title, gridcolor="#eee")
    return fig
