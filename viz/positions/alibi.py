"""ALiBi: the slopes per head (log axis, major ticks only), one head's bias and its bias-only weights."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from ..heatmap import attention_heatmap
from .common import bars

if TYPE_CHECKING:
    from core.positions.alibi import AlibiView


def head_names(view: AlibiView) -> list[str]:
    return [str(h) for h in range(len(view.slopes))]


def slopes_figure(view: AlibiView, t) -> go.Figure:
    return bars(
        head_names(view),
        view.slopes,
        title=t("slopes_title"),
        x_title=t("head"),
        y_title=t("slope"),
        text=view.slope_labels,
        log_y=True,
    )


def bias_figure(view: AlibiView, t) -> go.Figure:
    return attention_heatmap(
        view.bias,
        view.labels,
        view.labels,
        masked=view.future,
        title=t("bias_title", h=view.head),
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        zmin=None,
        zmax=0.0,
        colorscale="Reds_r",
        value_name=t("bias"),
        decimals=3,
    )


def weights_figure(view: AlibiView, t) -> go.Figure:
    return attention_heatmap(
        view.weights,
        view.labels,
        view.labels,
        masked=view.future,
        title=t("al_w_title", h=view.head),
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        value_name=t("weight"),
    )
