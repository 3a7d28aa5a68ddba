"""Heatmaps for attention maps of long documents: pooled cells (each a block of queries x keys) and
full-resolution windows. Rows (y, top to bottom) are queries, columns (x) keys, as everywhere in the app.

Payload: plotly sends a float32 array as base64 (~5.4 bytes a cell once JSON-escaped), so 256 x 256 cells are
~0.45 MB; cells masked in full (every key after every query) are NaN and show the grey background, with no
second trace. A log colour scale is the default because weights of a long sequence span many decades
(a row of 8,192 keys averages 1/8,192); the hover then shows log10 of the value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from core.long_maps.maps import log_colour_range
from core.pooling import bin_ranges

from .labels import safe_label
from .style import LEGEND_AT_FOOT, MARGIN, MASKED_COLOUR, RED, colour_bar

if TYPE_CHECKING:
    from core.long_maps.views import HeadShares, MapView, ZoomView

Translate = Callable[..., str]


def long_heatmap(
    values,
    row_labels: list[str],
    col_labels: list[str],
    masked=None,
    log_scale: bool = True,
    title: str = "",
    *,
    x_title: str,
    y_title: str,
    value_name: str,
    row_name: str,
    col_name: str,
    log_name: str,
    height: int = 640,
) -> go.Figure:
    """values (r, c) >= 0; labels one per row/column (bin ranges or tokens; escaped here); masked (r, c) bool:
    drawn grey, no hover. log_scale: colour and hover by log10(value); exact zeros that are not masked (weights
    that underflow float32) are drawn at the bottom of the scale. The axes', the hover's and the colour bar's words
    (log_name: a log scale's, beside the value's name) are the page's, required: the defaults were English to a
    Japanese or Korean reader."""
    z = np.asarray(values, dtype=np.float64)
    masked = np.zeros(z.shape, dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    if log_scale:
        low, top_log = log_colour_range(z, masked)
        zz = np.log10(np.maximum(z, 10.0**low))
        ticks = np.arange(np.ceil(low), np.floor(top_log) + 1)
        colorbar = colour_bar(
            f"{value_name} ({log_name})", tickvals=ticks.tolist(), ticktext=[f"{10.0**t:.0e}" for t in ticks]
        )
        hover_value = f"log₁₀ {value_name}: %{{z:.2f}}"
        zmin, zmax = low, top_log
    else:
        shown = z[~masked]
        zz = z
        colorbar = colour_bar(value_name)
        hover_value = f"{value_name}: %{{z:.3g}}"
        zmin, zmax = 0.0, float(np.nanmax(shown)) if np.isfinite(shown).any() else 1.0
    zz = np.where(masked, np.nan, zz).astype(np.float32)
    n_r, n_c = zz.shape
    fig = go.Figure(
        go.Heatmap(
            z=zz,
            x=[safe_label(s, 40) for s in col_labels],
            y=[safe_label(s, 40) for s in row_labels],
            colorscale="Viridis",
            zmin=zmin,
            zmax=zmax,
            hoverongaps=False,
            colorbar=colorbar,
            hovertemplate=f"{safe_label(row_name)}: %{{y}}<br>{safe_label(col_name)}: %{{x}}<br>{hover_value}"
            "<extra></extra>",
        )
    )
    fig.update_layout(
        title=dict(text=safe_label(title, 160)),
        height=height,
        margin=MARGIN,
        plot_bgcolor=MASKED_COLOUR,
    )
    fig.update_xaxes(
        title_text=x_title, type="category", showticklabels=n_c <= 64, tickangle=-60, showgrid=False, side="bottom"
    )
    fig.update_yaxes(
        title_text=y_title, type="category", autorange="reversed", showticklabels=n_r <= 64, showgrid=False
    )
    return fig


def head_shares_figure(view: HeadShares, t: Translate) -> go.Figure:
    """Grouped bars per head: the share of each query's weight on the first key bin and on its own bin."""
    first_label = t("first_share", w=view.first_width) if view.first_width > 1 else t("first_token")
    heads = [str(h) for h in range(len(view.first_share))]
    fig = go.Figure(
        [
            go.Bar(x=heads, y=np.asarray(view.first_share, dtype=np.float64), name=safe_label(first_label, 80)),
            go.Bar(
                x=heads,
                y=np.asarray(view.own_bin_share, dtype=np.float64),
                name=safe_label(t("own_share", w=view.own_width), 80),
            ),
        ]
    )
    fig.add_vrect(x0=view.head - 0.5, x1=view.head + 0.5, fillcolor=RED, opacity=0.08, line_width=0)
    fig.update_layout(
        title=dict(text=safe_label(t("shares_title", n=view.n), 160)),
        barmode="group",
        height=300,
        margin=MARGIN,
        legend=LEGEND_AT_FOOT,
    )
    fig.update_xaxes(title_text=t("head_axis"), type="category")
    fig.update_yaxes(title_text=t("share_axis"), range=[0, 1])
    return fig


def map_figure(
    view: MapView, t: Translate, source: str, layer: int, log_scale: bool, name: str | None = None
) -> go.Figure:
    """One head's pooled map: rows query bins, columns key bins, grey where every key is in the future.
    name: the model's name for the title (escaped with the title; None: "SmolLM2", the page's default source)."""
    title = t(
        "random_title" if source == "random" else "map_title",
        src="SmolLM2" if name is None else name,
        layer=layer,
        head=view.head,
        kv=view.kv_head,
        stat=t(f"stat_{view.stat}"),
        s=len(view.row_edges) - 1,
    )
    return long_heatmap(
        view.values,
        bin_ranges(view.row_edges),
        bin_ranges(view.col_edges),
        masked=view.masked,
        log_scale=log_scale,
        title=title,
        x_title=t("x_binned"),
        y_title=t("y_binned"),
        value_name=t(f"{view.stat}_name"),
        row_name=t("queries"),
        col_name=t("keys"),
        log_name=t("log_scale"),
    )


def zoom_figure(view: ZoomView, t: Translate, log_scale: bool) -> go.Figure:
    """A window of one head's exact weights at full resolution (token labels)."""
    r, c = view.rows, view.cols
    return long_heatmap(
        view.weights,
        view.row_labels,
        view.col_labels,
        masked=view.masked,
        log_scale=log_scale,
        title=t("zoom_title", head=view.head, q0=r.start, q1=r.stop - 1, k0=c.start, k1=c.stop - 1),
        x_title=t("x_tokens"),
        y_title=t("y_tokens"),
        value_name=t("weight"),
        row_name=t("queries"),
        col_name=t("keys"),
        log_name=t("log_scale"),
    )
