"""The figures of /attention, drawn from the view objects of core/attention.py: data in, plotly Figure out.

`figure(view, t)` draws any of them; `t(key, **fmt)` gives the words of the [attention.figure] catalog section in
the reader's language. Nothing here selects tokens, pools or computes weights: the view holds the cells to draw.
Masked cells arrive as NaN and are gaps showing a grey plot background (an overlay trace of masked cells would
double the bytes of a big matrix).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from core.attention import EntropyView, GridView, MatrixView, TokenView

from .grid import head_grid, token_grid
from .heatmap import attention_heatmap, matrix_heatmap
from .style import MASKED_COLOUR, SEQUENTIAL_SCALE

Words = Callable[..., str]


def _hidden(hide_special: bool, t: Words) -> str:
    return t("hidden") if hide_special else ""


def matrix_title(view: MatrixView, t: Words) -> str:
    if view.kind == "head":
        title = t("head_title", l=view.layer, h=view.head)
    elif view.kind == "mean":
        title = t("mean_title", l=view.layer, H=view.n_heads)
    else:
        title = t("rollout_title", l=view.layer)
    return title + _hidden(view.hide_special, t)


def matrix_figure(view: MatrixView, t: Words, title: str | None = None) -> go.Figure:
    """A query x key matrix (one head, a layer's mean, or the rollout): cells as the view holds them (exact,
    block means, or a full-resolution window), the title saying which. `title` replaces the default title."""
    title = matrix_title(view, t) if title is None else title
    if view.pooled is not None:
        title += t("pooled", m=view.m, s=view.pooled)
    elif view.window is not None:
        title += t("window", a=view.window[0], b=view.window[1], m=view.m)
    fig = attention_heatmap(
        view.cells,
        view.row_labels,
        view.col_labels,
        title=title,
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        value_name=t("rollout_value") if view.kind == "rollout" else t("weight"),
    )
    fig.update_layout(plot_bgcolor=MASKED_COLOUR if np.isnan(view.cells).any() else "white")
    fig.update_xaxes(showgrid=False)
    fig.update_yaxes(showgrid=False)
    return fig


def grid_figure(view: GridView, t: Words) -> go.Figure:
    """The model view: one tile per (layer, head); click a tile to open it (see viz.grid.tile_of_point)."""
    L, H, s = view.thumbs.shape[:3]
    title = t("grid_title", L=L, H=H, m=view.m)
    if s < view.m:
        title += t("pooled", m=view.m, s=s)
    title += _hidden(view.hide_special, t)
    return head_grid(
        view.thumbs,
        title,
        layer_label=t("layer"),
        head_label=t("head"),
        value_name=t("weight"),
        highlight=view.highlight,
        head_names=view.head_names,
    )


def token_figure(view: TokenView, t: Words) -> go.Figure:
    return token_grid(
        np.nan_to_num(view.cells),
        view.head_labels,
        view.key_labels,
        view.n_heads,
        masked=np.isnan(view.cells),
        title=t("token_title", q=view.query_label) + _hidden(view.hide_special, t),
        x_title=t("key_axis"),
        y_title=t("heads_axis"),
        value_name=t("weight"),
    )


def entropy_figure(view: EntropyView, t: Words) -> go.Figure:
    e = view.entropy
    return matrix_heatmap(
        e,
        [str(l) for l in range(e.shape[0])],
        [str(h) for h in range(e.shape[1])],
        title=t("entropy_title") + _hidden(view.hide_special, t),
        x_title=t("head"),
        y_title=t("layer"),
        colorscale=SEQUENTIAL_SCALE,
        zmid=None,
        value_name=t("entropy"),
    )


BUILDERS = {MatrixView: matrix_figure, GridView: grid_figure, TokenView: token_figure, EntropyView: entropy_figure}


def figure(view, t: Words) -> go.Figure:
    """The figure of any view of core/attention.py."""
    return BUILDERS[type(view)](view, t)
