"""Relative positions (Shaw et al. 2018): which offset vector each score uses, the relative scores, the weights."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from ..heatmap import attention_heatmap, matrix_heatmap

if TYPE_CHECKING:
    from core.positions.relative import ShawView


def offsets_figure(view: ShawView, t) -> go.Figure:
    labels = view.labels
    return matrix_heatmap(
        view.offsets,
        labels,
        labels,
        title=t("offset_title"),
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        value_name="clip(i−j)",
        decimals=0,
        show_values=len(labels) <= 16,
    )


def relative_scores_figure(view: ShawView, t) -> go.Figure:
    labels = view.labels
    return matrix_heatmap(
        view.relative,
        labels,
        labels,
        title=t("s_title"),
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        value_name="S",
    )


def weights_figure(view: ShawView, t) -> go.Figure:
    labels = view.labels
    return attention_heatmap(
        view.weights,
        labels,
        labels,
        title=t("rel_w_title"),
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        value_name=t("weight"),
    )
