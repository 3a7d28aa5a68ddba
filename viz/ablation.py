"""Figures of /ablation: a claim card's harm (how much worse the metric got when the heads were removed) next to
the placebo draws' harms. A core.ablation.CardView in, figure out; words through `t`, the [ablation.figure] catalog
section."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.ablation import CardView

from .style import LEGEND_AT_FOOT, PALETTE, SHARE_FORMAT, base_layout

FIGURE_HEIGHT = 320  # px: 260 for the plot, its axis and title, and two legend rows under them
# A harm's numbers as the page's sentences give them: a loss's rise in nats, an accuracy's drop in percent (as a bare
# fraction, 0.032 on the axis stood beside the page's '+3.2%')
SHARES = {"antecedent_accuracy"}  # metrics whose harm is a share


def claim_figure(view: CardView, t) -> go.Figure:
    """One row: every placebo draw as a grey dot, their central 95% as a band, the claim's heads as a red diamond."""
    placebo = np.asarray(view.placebo_harms, dtype=np.float64)
    number = SHARE_FORMAT if view.metric in SHARES else ".3f"
    fig = go.Figure()
    if len(placebo):
        lo, hi = view.placebo_interval
        fig.add_vrect(x0=float(lo), x1=float(hi), fillcolor=PALETTE[7], opacity=0.15, line_width=0)
        fig.add_trace(
            go.Scatter(
                x=np.round(placebo, 4),
                y=[t("placebo")] * len(placebo),
                mode="markers",
                marker=dict(color=PALETTE[7], size=9, opacity=0.7),
                name=t("placebo_name", n=len(placebo)),
                hovertemplate=f"{t('harm')}: %{{x:{number}}}<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[round(float(view.harm), 4)],
            y=[t("chosen")],
            mode="markers",
            marker=dict(color=PALETTE[3], size=14, symbol="diamond"),
            name=t("chosen_name", k=len(view.heads)),
            hovertemplate=f"{t('harm')}: %{{x:{number}}}<extra></extra>",
        )
    )
    fig.add_vline(x=0.0, line_color="black", line_width=1)
    fig.update_xaxes(
        title=t(f"harm_{view.metric}"), zeroline=False, tickformat=".1%" if view.metric in SHARES else None
    )
    # the legend at the figure's foot: beside the plot (plotly's place for it) it took half a phone's figure, the dots'
    # row 79 px wide in Japanese (scripts/phone_layout_check.py --states figure); the figure grows by its rows
    return base_layout(fig, t("figure_title"), height=FIGURE_HEIGHT, showlegend=True, legend=LEGEND_AT_FOOT)
