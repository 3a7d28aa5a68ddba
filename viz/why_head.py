"""/why-head's figures: each band's (or term's) share of every head's score magnitude as stacked bars, one band's
(or term's) part of one head's scores as a query x key heatmap, the head's weights with content or position
removed, and how much of each head's pattern each counterfactual keeps. Views from core/why_head.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from core.why_head import TERMS

from .heatmap import attention_heatmap
from .style import DIVERGING_SCALE, LEGEND_AT_FOOT, WEIGHTS_SCALE, base_layout, colour

if TYPE_CHECKING:
    from core.why_head import AbsoluteView, RopeView


def band_name(view: RopeView, band: int, t) -> str:
    """'pairs 0–1 · 6–9 tokens': a band by its pairs and the wavelengths they turn with."""
    (a, z), (short, long) = view.band_pairs[band], view.band_wavelengths[band]
    return t("band_name", b=band, a=a, z=z, short=short, long=long)


def band_names(view: RopeView, t) -> list[str]:
    """Every band's name, the columns of `view.shares` in the figure and its CSV."""
    return [band_name(view, b, t) for b in range(len(view.band_pairs))]


def term_names(t) -> list[str]:
    """The four terms' names, the columns of an AbsoluteView's `shares` in the figure and its CSV."""
    return [t(f"term_{k}") for k in TERMS]


def _stacked(shares: np.ndarray, heads: list[str], names: list[str], head: int, title: str, t) -> go.Figure:
    fig = go.Figure(
        [go.Bar(x=heads, y=shares[:, i], name=name, marker_color=colour(i)) for i, name in enumerate(names)]
    )
    base_layout(fig, title, height=380, barmode="stack", legend=LEGEND_AT_FOOT)
    fig.update_xaxes(title_text=t("head_axis"))
    fig.update_yaxes(title_text=t("share_axis"), range=[0, 1])
    fig.add_annotation(x=heads[head], y=1.0, text="▼", showarrow=False, yshift=8)  # the head drawn below
    return fig


def band_shares_figure(view: RopeView, t) -> go.Figure:
    return _stacked(view.shares, view.head_labels, band_names(view, t), view.head, t("band_shares_title"), t)


def _signed(values, labels, title: str, t, masked=None) -> go.Figure:
    """A signed part of a head's scores, queries down and keys across, white at 0."""
    fig = attention_heatmap(values, labels, labels, masked=masked, title=title, x_title=t("key_axis"),
                            y_title=t("query_axis"), zmin=None, colorscale=DIVERGING_SCALE, value_name=t("score"),
                            decimals=2)  # fmt: skip
    fig.data[0].update(zmid=0.0)
    return fig


def band_figure(view: RopeView, t) -> go.Figure:
    """The drawn band's signed part of the head's scores; future keys masked."""
    title = t("band_title", h=view.head, band=band_name(view, view.band, t))
    return _signed(view.band_scores, view.labels, title, t, masked=~view.visible)


def pattern_figure(view: RopeView, t) -> go.Figure:
    """The head's weights as drawn: its own, from position alone (content removed) or content alone."""
    return attention_heatmap(
        view.weights,
        view.labels,
        view.labels,
        masked=~view.visible,
        title=t(f"pattern_title_{view.pattern}", h=view.head),
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        zmax=1.0,
        colorscale=WEIGHTS_SCALE,
        value_name=t("weight"),
    )


def kept_figure(view: RopeView, t) -> go.Figure:
    fig = go.Figure(
        [
            go.Bar(x=view.head_labels, y=view.kept[k], name=t(f"kept_{k}"), marker_color=colour(i))
            for i, k in enumerate(("position_only", "content_only", "uniform"))
        ]  # fmt: skip
    )
    base_layout(fig, t("kept_title"), height=360, barmode="group", legend=LEGEND_AT_FOOT)
    fig.update_xaxes(title_text=t("head_axis"))
    fig.update_yaxes(title_text=t("kept_axis"), range=[0, 1])
    return fig


def term_shares_figure(view: AbsoluteView, t) -> go.Figure:
    title = t(f"term_shares_title_{view.where}")
    return _stacked(view.shares, view.head_labels, term_names(t), view.head, title, t)


def term_figure(view: AbsoluteView, t) -> go.Figure:
    """The drawn term's signed part of the head's scores, every key visible (an encoder)."""
    title = t("term_title", h=view.head, term=t(f"term_{view.term}"))
    return _signed(view.term_scores, view.labels, title, t)
