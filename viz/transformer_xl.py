"""Figures of the /transformer-xl page: the five masks side by side, and one line per method (the effective context
through the layers, loss against position in the text or within a segment). View objects of core/transformer_xl.py
in, plotly figures out; words through `t`, the [transformer_xl.figure] catalog section."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.transformer_xl import LinesView, MasksView

from .masks import MARK_COLOURS, MASKED_MARK
from .style import ALLOWED_COLOUR, LEGEND_AT_FOOT, MASKED_COLOUR, base_layout, colour

Words = Callable[..., str]
AXES = {  # kind -> (x axis, y axis) words
    "reach": ("layers_axis", "reach_axis"),
    "by_block": ("position_axis", "loss_axis"),
    "by_segment": ("in_segment_axis", "loss_axis"),
}


def masks_figure(view: MasksView, t: Words) -> go.Figure:
    """One small n x n mask per method (blue = may attend, grey with a cross = hidden, as on /masks), queries down,
    keys across."""
    names = list(view.masks)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[t(f"method_{m}") for m in names])
    for k, name in enumerate(names, start=1):
        fig.add_trace(
            go.Heatmap(
                z=view.masks[name].astype(np.float32),
                colorscale=[[0, MASKED_COLOUR], [1, ALLOWED_COLOUR]],
                zmin=0,
                zmax=1,
                showscale=False,
                text=np.where(view.masks[name], "", MASKED_MARK).tolist(),
                texttemplate="%{text}",
                textfont=dict(color=MARK_COLOURS[False], size=9),
                xgap=1,
                ygap=1,
                hovertemplate=t("query") + " %{y}, " + t("key") + " %{x}<extra></extra>",
            ),
            row=1,
            col=k,
        )
        query = t("query") if k == 1 else None  # the rows' title once, beside the only ticks shown
        # square cells shrink the panel, not stretch the range: on a phone's narrow panels plotly stretched the
        # rows' range to -10..20 (empty rows, ticks at positions no text has); hung from the top, under its title
        fig.update_yaxes(autorange="reversed", showticklabels=k == 1, title_text=query, row=1, col=k,
                         constrain="domain", constraintoward="top")  # fmt: skip
        fig.update_xaxes(scaleanchor=f"y{'' if k == 1 else k}", title_text=t("key"), row=1, col=k, constrain="domain")
    base_layout(fig, height=300)
    return fig


def lines_figure(view: LinesView, t: Words) -> go.Figure:
    """One line per method (full attention thick and dotted); dashed markers at view.vlines."""
    fig = go.Figure()
    for k, (name, values) in enumerate(view.series.items()):
        fig.add_trace(
            go.Scatter(
                x=list(view.x),
                y=[None if v is None or not np.isfinite(v) else float(v) for v in values],
                mode="lines",
                name=t(f"method_{name}"),
                line=dict(color=colour(k), width=3 if name == "full" else 2, dash="dot" if name == "full" else None),
                hovertemplate="%{x}: %{y:.3f}<extra></extra>",
            )
        )
    for x0 in view.vlines:
        fig.add_vline(x=x0, line=dict(color="#999", width=1, dash="dash"))
    x_title, y_title = AXES[view.kind]
    title = t(f"{view.kind}_title", **view.title_fields)
    base_layout(fig, title=title, height=380, legend=LEGEND_AT_FOOT)
    fig.update_xaxes(title_text=t(x_title), gridcolor="#eee")
    fig.update_yaxes(title_text=t(y_title), gridcolor="#eee")
    return fig
