"""The figures of /padded-batch: the batch's attention mask (the head inside the batch is viz.attention's matrix
figure)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from .heatmap import matrix_heatmap

VALUES_SHOWN_UP_TO = 40 * 4  # cells: above this, the 0/1 values are not written in the cells


def mask_figure(attention_mask: np.ndarray, row_labels: list[str], t: Callable[..., str]) -> go.Figure:
    """attention_mask (B, n) 0/1, one row per sentence; t: the [padded_batch] words."""
    return matrix_heatmap(
        attention_mask,
        row_labels,
        [str(j) for j in range(attention_mask.shape[1])],
        title=t("mask_title"),
        x_title=t("position"),
        colorscale="Blues",
        zmid=None,
        value_name="attention_mask",
        show_values=attention_mask.size <= VALUES_SHOWN_UP_TO,
        decimals=0,
        height=160 + 40 * attention_mask.shape[0],
    )
