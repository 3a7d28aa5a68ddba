"""The figures of /padded-batch: the batch's attention mask, and one sentence's head inside the batch (viz.attention's
matrix figure under this page's title). Views of core/padded_batch.py in, plotly figures out; words through `t`, the
[padded_batch.figure] catalog section."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from core.attention import MatrixView
from core.padded_batch import MaskView

from .attention import matrix_figure
from .masks import mask_figure as two_kind_mask_figure

VALUES_SHOWN_UP_TO = 40 * 4  # cells: above this, the 0/1 values are not written in the cells
Words = Callable[..., str]


def mask_rows(view: MaskView, t: Words) -> list[str]:
    """The sentences, the rows of the attention_mask, as its figure, CSV and the page's tables name them."""
    return [t("row", i=i) for i in range(view.mask.shape[0])]


def mask_figure(view: MaskView, t: Words) -> go.Figure:
    """The attention_mask (B, n), one row per sentence, drawn as /masks draws a mask: two kinds of cell named in a
    legend (a real token, padding), never a colour scale (a 0-1 colour bar implied values between the two)."""
    mask = view.mask
    written = mask.size <= VALUES_SHOWN_UP_TO
    return two_kind_mask_figure(
        np.asarray(mask) != 0,
        mask_rows(view, t),
        view.positions,
        title=t("mask_title"),
        allowed_name=t("real_token"),
        masked_name=t("padding"),
        x_title=t("position"),
        y_title=t("sentence_axis"),
        height=190 + 40 * mask.shape[0],
        marks=("1", "0") if written else ("", ""),
    )


def sentence_figure(view: MatrixView, t: Words, sentence: int) -> go.Figure:
    """Sentence `sentence`'s head over the whole padded width (masked keys grey)."""
    return matrix_figure(view, t, title=t("head_title", i=sentence, l=view.layer, h=view.head))
