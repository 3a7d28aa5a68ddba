"""Heatmaps for attention maps of long documents: pooled cells (each a block of queries x keys) and
full-resolution windows. Rows (y, top to bottom) are queries, columns (x) keys, as everywhere in the app.

Payload: plotly sends a float32 array as base64 (~5.4 bytes a cell once JSON-escaped), so 256 x 256 cells are
~0.45 MB; cells masked in full (every key after every query) are NaN and show the grey background, with no
second trace. A log colour scale is the default because weights of a long sequence span many decades
(a row of 8,192 keys averages 1/8,192); the hover then shows log10 of the value.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from .heatmap import MASKED_COLOUR
from .labels import safe_label

LOG_DECADES = 8  # a log colour scale covers at most this many decades below the largest value


def bin_range_labels(edges: np.ndarray) -> list[str]:
    """'16–31' for the tokens a bin covers (first and last index, inclusive), '7' for a bin of one token."""
    return [f"{a}" if b - a == 1 else f"{a}–{b - 1}" for a, b in zip(edges[:-1], edges[1:])]


def payload_bytes(fig: go.Figure) -> int:
    """Bytes of the JSON Streamlit sends to the browser for this figure."""
    return len(pio.to_json(fig, validate=False).encode("utf-8"))


def long_heatmap(
    values,
    row_labels: list[str],
    col_labels: list[str],
    masked=None,
    log_scale: bool = True,
    title: str = "",
    x_title: str = "key tokens (binned)",
    y_title: str = "query tokens (binned)",
    value_name: str = "mean weight",
    row_name: str = "queries",
    col_name: str = "keys",
    height: int = 640,
) -> go.Figure:
    """values (r, c) >= 0; labels one per row/column (bin ranges or tokens; escaped here); masked (r, c) bool:
    drawn grey, no hover. log_scale: colour and hover by log10(value); exact zeros that are not masked (weights
    that underflow float32) are drawn at the bottom of the scale."""
    z = np.asarray(values, dtype=np.float64)
    masked = np.zeros(z.shape, dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    shown = z[~masked]
    top = float(shown.max()) if shown.size else 1.0
    if log_scale:
        positive = shown[shown > 0]
        top_log = np.log10(top) if top > 0 else 0.0
        low = max(float(np.log10(positive.min())) if positive.size else top_log - 1, top_log - LOG_DECADES)
        low = min(low, top_log - 1e-3)
        zz = np.log10(np.maximum(z, 10.0**low))
        ticks = np.arange(np.ceil(low), np.floor(top_log) + 1)
        colorbar = dict(
            title=dict(text=f"{value_name} (log)", side="right"),
            thickness=12,
            tickvals=ticks.tolist(),
            ticktext=[f"{10.0**t:.0e}" for t in ticks],
        )
        hover_value = f"log₁₀ {value_name}: %{{z:.2f}}"
        zmin, zmax = low, top_log
    else:
        zz = z
        colorbar = dict(title=dict(text=value_name, side="right"), thickness=12)
        hover_value = f"{value_name}: %{{z:.3g}}"
        zmin, zmax = 0.0, top
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
        margin=dict(l=10, r=10, t=50, b=10),
        plot_bgcolor=MASKED_COLOUR,
    )
    fig.update_xaxes(
        title_text=x_title, type="category", showticklabels=n_c <= 64, tickangle=-60, showgrid=False, side="bottom"
    )
    fig.update_yaxes(
        title_text=y_title, type="category", autorange="reversed", showticklabels=n_r <= 64, showgrid=False
    )
    return fig


def head_shares_figure(
    first_share,
    own_share,
    first_label: str,
    own_label: str,
    title: str = "",
    head_label: str = "head",
    share_label: str = "share of each query's weight",
    selected: int | None = None,
) -> go.Figure:
    """Grouped bars per head: two shares (fractions in [0, 1]) read off the pooled maps."""
    heads = [str(h) for h in range(len(first_share))]
    fig = go.Figure(
        [
            go.Bar(x=heads, y=np.asarray(first_share, dtype=np.float64), name=safe_label(first_label, 80)),
            go.Bar(x=heads, y=np.asarray(own_share, dtype=np.float64), name=safe_label(own_label, 80)),
        ]
    )
    if selected is not None:
        fig.add_vrect(x0=selected - 0.5, x1=selected + 0.5, fillcolor="#d62728", opacity=0.08, line_width=0)
    fig.update_layout(
        title=dict(text=safe_label(title, 160)),
        barmode="group",
        height=300,
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.25),
    )
    fig.update_xaxes(title_text=head_label, type="category")
    fig.update_yaxes(title_text=share_label, range=[0, 1])
    return fig
