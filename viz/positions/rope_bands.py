"""SmolLM2's rotated q and k, each frequency pair's share of |score|, and one band's part of the scaled scores."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from ..heatmap import attention_heatmap, matrix_heatmap
from .common import bars

if TYPE_CHECKING:
    from core.positions.rope_bands import BandsView


def _vectors(values, view: BandsView, title: str, name: str, t) -> go.Figure:
    return matrix_heatmap(
        values,
        view.labels,
        view.dims,
        title=title,
        x_title=t("dimension"),
        y_title=t("token"),
        value_name=name,
        show_values=False,
    )


def queries_figure(view: BandsView, t) -> go.Figure:
    return _vectors(view.q, view, t("q_title", l=view.layer, h=view.head), "q", t)


def keys_figure(view: BandsView, t) -> go.Figure:
    return _vectors(view.k, view, t("k_title", l=view.layer, g=view.kv_head), "k", t)


def pair_share_figure(view: BandsView, t) -> go.Figure:
    pairs = [str(j) for j in range(len(view.pair_share))]
    return bars(pairs, view.pair_share, title=t("band_share_title"), x_title=t("pair_label"), y_title=t("share"))


def band_figure(view: BandsView, t, band: int) -> go.Figure:
    """Band `band`'s signed part of the scores, white at 0; future keys masked."""
    tokens = view.labels
    a, z = view.band_pairs[band]
    fig = attention_heatmap(
        view.band_scores[band],
        tokens,
        tokens,
        masked=~view.visible,
        title=t("band_title", b=band, a=a, z=z),
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        zmin=None,
        colorscale="RdBu",
        value_name=t("score"),
        decimals=2,
    )
    fig.data[0].update(zmid=0.0)
    return fig
