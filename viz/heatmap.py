"""Query x key heatmaps. Rows (y, top to bottom) are queries, columns (x) are keys. Masked cells are drawn
grey with a cross: they are not small weights, they are not there."""

import numpy as np
import plotly.graph_objects as go

from .labels import safe_label
from .style import MASKED_COLOUR  # noqa: F401  (re-exported: older imports)

FULL_HOVER_CELLS = 128 * 128  # above this, hover shows indices only (keeps the payload small)


def attention_heatmap(
    weights,
    query_labels,
    key_labels,
    masked=None,
    title: str = "",
    x_title: str = "key (attended to)",
    y_title: str = "query (attending)",
    zmin: float | None = 0.0,
    zmax: float | None = None,
    colorscale: str = "Blues",
    show_values: bool | None = None,
    value_name: str = "weight",
    height: int | None = None,
    decimals: int = 3,
) -> go.Figure:
    """weights (n_q, n_k); labels already unique (see viz.labels.indexed_labels); masked: bool (n_q, n_k),
    True where the key is hidden from the query."""
    z = np.asarray(weights, dtype=np.float64)
    n_q, n_k = z.shape
    masked = np.zeros_like(z, dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    z = np.where(masked, np.nan, np.round(z, decimals)).astype(np.float32)
    x = [safe_label(s, 40) for s in key_labels]
    y = [safe_label(s, 40) for s in query_labels]
    if show_values is None:
        show_values = n_q * n_k <= 12 * 12
    hover = f"query: %{{y}}<br>key: %{{x}}<br>{value_name}: %{{z:.{decimals}f}}<extra></extra>"
    fig = go.Figure()
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            colorscale=colorscale,
            zmin=zmin,
            zmax=zmax,
            hoverongaps=False,
            hovertemplate=hover,
            colorbar=dict(title=dict(text=value_name, side="right"), thickness=12),
            texttemplate=f"%{{z:.{min(decimals, 2)}f}}" if show_values else None,
        )
    )
    if masked.any():
        # A constant texttemplate would be drawn on every cell, the unmasked ones (NaN here) included: the cross
        # comes from per-cell text instead, empty where the key is visible.
        mark = n_q * n_k <= 40 * 40
        fig.add_trace(
            go.Heatmap(
                z=np.where(masked, 1.0, np.nan).astype(np.float32),
                x=x,
                y=y,
                showscale=False,
                colorscale=[[0, MASKED_COLOUR], [1, MASKED_COLOUR]],
                hovertemplate="query: %{y}<br>key: %{x}<br>masked<extra></extra>",
                text=np.where(masked, "✕", "").tolist() if mark else None,
                texttemplate="%{text}" if mark else None,
                textfont=dict(color="#777"),
                hoverongaps=False,
                name="masked",
            )
        )
    _axes(fig, title, x_title, y_title, n_q, n_k, height)
    return fig


def matrix_heatmap(
    values,
    row_labels,
    col_labels,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    colorscale: str = "RdBu",
    zmid: float | None = 0.0,
    show_values: bool | None = None,
    value_name: str = "value",
    height: int | None = None,
    decimals: int = 2,
) -> go.Figure:
    """A labelled numeric matrix (scores, Q, K, V, ...) with a diverging scale centred on zmid."""
    z = np.round(np.asarray(values, dtype=np.float64), decimals).astype(np.float32)
    n_r, n_c = z.shape
    if show_values is None:
        show_values = n_r * n_c <= 12 * 12
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[safe_label(s, 40) for s in col_labels],
            y=[safe_label(s, 40) for s in row_labels],
            colorscale=colorscale,
            zmid=zmid,
            hoverongaps=False,
            hovertemplate=f"row: %{{y}}<br>column: %{{x}}<br>{value_name}: %{{z}}<extra></extra>",
            texttemplate="%{z}" if show_values else None,
            colorbar=dict(thickness=12),
        )
    )
    _axes(fig, title, x_title, y_title, n_r, n_c, height)
    return fig


def _axes(fig: go.Figure, title: str, x_title: str, y_title: str, n_rows: int, n_cols: int, height) -> None:
    side = max(n_rows, n_cols)
    height = height or int(min(720, max(260, 120 + 22 * side)))
    fig.update_layout(
        title=dict(text=safe_label(title, 120)),
        height=height,
        margin=dict(l=10, r=10, t=50, b=10),
        plot_bgcolor="white",
    )
    fig.update_xaxes(
        title_text=x_title,
        type="category",
        tickangle=-60 if n_cols > 6 else 0,
        showticklabels=n_cols <= 200,
        side="bottom",
    )
    fig.update_yaxes(title_text=y_title, type="category", autorange="reversed", showticklabels=n_rows <= 200)
