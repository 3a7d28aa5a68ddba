"""Figures of the /transformer-xl page: the five masks, each its own figure, and one line per method (the effective context
through the layers, loss against position in the text or within a segment). View objects of core/transformer_xl.py
in, plotly figures out; words through `t`, the [transformer_xl.figure] catalog section."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from core.transformer_xl import LinesView, MasksView

from .masks import MARK_COLOURS, MASKED_MARK
from .style import ALLOWED_COLOUR, LEGEND_AT_FOOT, MASKED_COLOUR, base_layout, colour

Words = Callable[..., str]
AXES = {  # kind -> (x axis, y axis) words
    "reach": ("layers_axis", "reach_axis"),
    "by_block": ("position_axis", "loss_axis"),
    "by_segment": ("in_segment_axis", "loss_axis"),
}


# The five masks stand each in its own block, as wide as three side by side (app/ui.beside): three on a line of a
# 1,280 or 1,366 px laptop's column, two at 1,100 px, one on a phone or a tablet held upright. In one figure the five shared
# its width, whatever the screen: on a 390 px phone each mask was 55 px across, too small for its crosses, and plotly
# keeps a plot at least 64 px tall, so a third of the figure's room stood blank under them (at 1,366 px, 58% of it
# drawn). A block's width is known, so each mask's height is what its width draws (viz.labels.for_page).
MASKS_PER_LINE = 3
MASK_HEIGHT = 360  # px: taller than a block's width draws a mask (a page cuts it to that: viz.labels.for_page)


def masks_figures(view: MasksView, t: Words) -> dict[str, go.Figure]:
    """One small n x n mask per method (blue = may attend, grey with a cross = hidden, as on /masks), queries down,
    keys across, each its own figure titled by its method."""
    figs = {}
    for name in view.masks:
        fig = go.Figure(
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
            )
        )
        # square cells shrink the plot, not stretch the range: on a phone's narrow panels plotly stretched the rows'
        # range to -10..20 (empty rows, ticks at positions no text has); hung from the top, under its title
        fig.update_yaxes(autorange="reversed", title_text=t("query"), constrain="domain", constraintoward="top")
        fig.update_xaxes(scaleanchor="y", title_text=t("key"), constrain="domain")
        base_layout(fig, title=t(f"method_{name}"), height=MASK_HEIGHT)
        figs[name] = fig
    return figs


def lines_figure(view: LinesView, t: Words) -> go.Figure:
    """One line per method (full attention thick and dotted); dashed markers at view.vlines. Where the view bins its
    points (view.bin > 1) each method's line is its binned means, its points a faint line under it in the same
    colour (one legend entry for both); a note under the title says what the numbers say (view.note_fields)."""
    fig = go.Figure()
    binned_x, binned = view.binned() if view.bin > 1 else (view.x, view.series)
    for k, (name, values) in enumerate(view.series.items()):
        label, full = t(f"method_{name}"), name == "full"
        if view.bin > 1:
            # the points under the means: the hover, the caption and the legend go by the means (the table has each)
            fig.add_trace(
                go.Scatter(
                    x=list(view.x),
                    y=_finite(values),
                    mode="lines",
                    name=label,
                    legendgroup=name,
                    showlegend=False,
                    opacity=RAW_OPACITY,
                    line=dict(color=colour(k), width=1),
                    hoverinfo="skip",
                )
            )
        fig.add_trace(
            go.Scatter(
                x=list(binned_x),
                y=_finite(binned[name]),
                mode="lines+markers" if view.bin > 1 else "lines",
                name=label,
                legendgroup=name,
                marker=dict(size=6),
                line=dict(color=colour(k), width=3 if full else 2, dash="dot" if full else None),
                hovertemplate="%{x}: %{y:.3f}<extra></extra>",
            )
        )
    for x0 in view.vlines:
        fig.add_vline(x=x0, line=dict(color="#999", width=1, dash="dash"))
    x_title, y_title = AXES[view.kind]
    title = t(f"{view.kind}_title", **view.title_fields)
    note = t(f"{view.kind}_note", **view.note_fields) if view.note_fields else ""
    base_layout(fig, title=dict(text=title, subtitle=dict(text=note)) if note else title, height=380,
                legend=LEGEND_AT_FOOT)  # fmt: skip
    fig.update_xaxes(title_text=t(x_title), gridcolor="#eee")
    fig.update_yaxes(title_text=t(y_title), gridcolor="#eee")
    return fig


RAW_OPACITY = 0.15  # a binned figure's points under its means: there to be seen through, not followed


def _finite(values) -> list[float | None]:
    return [None if v is None or not np.isfinite(v) else float(v) for v in values]
