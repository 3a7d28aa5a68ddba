"""Figures of /masks: masks, scores -> mask -> weights, and the three kinds of attention. Views in, figures out.

A mask is drawn as two kinds of cell, never as a colour scale: cells a query may attend to are filled blue with
no mark, masked cells are light grey with a "✕" (the same grey and cross as masked cells in viz.heatmap). The
two differ in colour, in lightness and in the mark, so they read apart at a glance (the old "✓" on every allowed
cell looked like the "✕" at the drawn size). A legend names both; the axis titles say rows = queries,
columns = keys.

Words come from `t` (the [masks.figure] catalog section).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from .heatmap import attention_heatmap, figure, layout, matrix_heatmap
from .labels import beside_px, hover_names, safe_label
from .style import ALLOWED_COLOUR, MASKED_COLOUR

if TYPE_CHECKING:  # types only: viz draws what core computed
    from core.masks.batch import MaskStepsView, PaddedBatch
    from core.masks.encoder_decoder import AttentionKind

MASKED_MARK = "✕"
# The three kinds' maps stand side by side where a page's column holds three (app/ui.beside), each beside_px(3) wide
# (256), one under another where it does not: their keys' labels lie flat where they fit that width
KIND_FIGURE_PX = beside_px(3)
MARK_COLOURS = {True: "white", False: "#555"}


def cell_kind_legend(name: str, colour: str, **axes) -> dict:
    """A legend entry for a kind of cell of a map: a square of the cell's colour (a heatmap has no legend entry of
    its own); `axes` (xaxis=, yaxis=) place its empty trace on a subplot's axes."""
    return dict(
        type="scatter",
        x=[None],
        y=[None],
        mode="markers",
        marker=dict(symbol="square", size=14, color=colour, line=dict(color="#888", width=1)),
        name=name,
        hoverinfo="skip",
        **axes,
    )


def mask_figure(
    allowed,
    query_labels,
    key_labels,
    title: str = "",
    *,
    allowed_name: str,
    masked_name: str,
    x_title: str,
    y_title: str,
    height: int | None = None,
    marks: tuple[str, str] = ("", MASKED_MARK),
) -> go.Figure:
    """allowed: bool (n_q, n_k), True where the query (row) may attend to the key (column).
    marks: the text on (allowed, masked) cells; drawn up to 40 x 40 cells. The legend's names for the two kinds of
    cell and the axes' words are the page's, required: the defaults ('may attend', 'keys (columns)') were English to
    a Japanese or Korean reader."""
    allowed = np.asarray(allowed, dtype=bool)
    n_q, n_k = allowed.shape
    x = [safe_label(s, 40) for s in key_labels]
    y = [safe_label(s, 40) for s in query_labels]
    small = n_q * n_k <= 40 * 40
    traces = []  # plain dicts, unvalidated (viz/heatmap.py; tests/viz/test_heatmap_unvalidated.py rebuilds them)
    for value, colour, name, mark in (
        (True, ALLOWED_COLOUR, allowed_name, marks[0]),
        (False, MASKED_COLOUR, masked_name, marks[1]),
    ):
        cells = allowed == value
        label = safe_label(name, 40)
        if cells.any():
            cell = dict(
                type="heatmap",
                z=np.where(cells, 1.0, np.nan).astype(np.float32),
                x=x,
                y=y,
                showscale=False,
                showlegend=False,
                hoverongaps=False,
                colorscale=[[0, colour], [1, colour]],
                xgap=1,
                ygap=1,
                name=label,
                textfont=dict(color=MARK_COLOURS[value], size=14),
                hovertemplate=f"{hover_names(y_title, x_title)}{label}<extra></extra>",
            )
            if small and mark:
                cell |= dict(text=np.where(cells, mark, "").tolist(), texttemplate="%{text}")
            traces.append(cell)
        # the legend entry: a square of the cell's colour (heatmaps have none of their own)
        shown = f"{label} ({mark})" if mark and mark not in label else label
        traces.append(cell_kind_legend(shown, colour))
    lay = layout(title, x_title, y_title, n_q, n_k, height)
    # legend just above the cells, the title above it at the top of the figure: in a narrow column the legend
    # wraps to two rows and would otherwise run into the title
    lay["showlegend"] = True
    lay["legend"] = dict(orientation="h", yanchor="bottom", y=1.0, x=0, xanchor="left")
    lay["title"] |= dict(y=0.99, yanchor="top", yref="container", font=dict(size=13))
    lay["margin"] = lay["margin"] | dict(t=100)
    return figure(traces, lay)


def attention_mask_figure(batch: PaddedBatch, t: Callable[..., str], row_labels: list[str]) -> go.Figure:
    """The batch's attention_mask (sentences x positions): 1 on real tokens, 0 on padding, as a tokenizer
    returns it."""
    b, n = batch.real.shape
    return mask_figure(
        batch.real,
        row_labels,
        [str(j) for j in range(n)],
        title=t("am_title"),
        allowed_name=t("real"),
        masked_name=t("padding"),
        x_title=t("position"),
        y_title=t("sentence"),
        height=190 + 40 * b,
        marks=("1", "0"),
    )


def mask_steps_figures(view: MaskStepsView, t: Callable[..., str], labels: list[str]) -> dict[str, go.Figure]:
    """The three masks of one sentence ("padding", "causal", "both"), then "scores" before masking, the mask
    "applied" and the "weights" after it. labels: one per padded token (rows = queries, columns = keys)."""
    axes = dict(x_title=t("key_axis"), y_title=t("query_axis"))
    names = dict(allowed_name=t("may"), masked_name=t("masked"))
    figs = {
        kind: mask_figure(m, labels, labels, title=t(f"m_{kind}"), **names, **axes) for kind, m in view.masks.items()
    }
    figs["scores"] = matrix_heatmap(view.scores, labels, labels, title=t("f_scores"), value_name="QKᵀ/√d", **axes)
    figs["applied"] = mask_figure(
        view.allowed, labels, labels, title=f"{t('f_mask')}: {t('kind_' + view.kind)}", **names, **axes
    )
    figs["weights"] = attention_heatmap(
        view.weights,
        labels,
        labels,
        masked=~view.allowed,
        title=t("f_weights"),
        value_name=t("weight"),
        zmax=1.0,
        **axes,
    )
    return figs


def attention_kind_figure(
    kind: AttentionKind, t: Callable[..., str], head: int, query_labels: list[str], key_labels: list[str]
) -> go.Figure:
    """One head of one of the three kinds of attention: rows = its queries, columns = its keys."""
    return attention_heatmap(
        kind.weights[head],
        query_labels,
        key_labels,
        masked=~kind.allowed,
        zmax=1.0,
        value_name=t("weight"),
        title=f"{t(kind.kind)} · {t('head')} {head}",
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        narrowest_px=KIND_FIGURE_PX,
    )
