"""Bar charts and small matrices for rankings: antecedent heads, evaluation accuracy, one query across heads."""

import numpy as np
import plotly.graph_objects as go

from .labels import safe_label, wrapped_label
from .style import BLUE, LEGEND_AT_FOOT, PALETTE, RED, SHARE_FORMAT

LABEL_COLUMNS = 20  # a bar's name, per line (viz.labels.label_columns)


def head_ranking_bars(
    head_labels: list[str],
    weights,
    candidate_labels: list[str],
    title: str = "",
    *,
    x_title: str,
    y_title: str,
    decimals: int = 3,
) -> go.Figure:
    """Grouped horizontal bars: for each head (rows, best first), its weight on each candidate.
    weights (n_heads_shown, n_candidates); x_title, y_title: the page's words for the weight and the heads, required
    (no English default a Japanese or Korean reader could be shown)."""
    w = np.round(np.asarray(weights, dtype=np.float64), decimals)
    y = [safe_label(h, 40) for h in head_labels]
    fig = go.Figure()
    for c, name in enumerate(candidate_labels):
        fig.add_trace(
            go.Bar(
                x=w[:, c].tolist(),
                y=y,
                orientation="h",
                name=safe_label(name, 30),
                marker_color=PALETTE[c % len(PALETTE)],
                text=[f"{v:.{min(decimals, 2)}f}" for v in w[:, c]],
                textposition="outside",
                hovertemplate=f"%{{y}}<br>{safe_label(name, 30)}: %{{x:.{decimals}f}}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title=dict(text=safe_label(title, 120)),
        height=int(min(900, 140 + 26 * len(y) * max(1, len(candidate_labels)) / 1.5)),
        margin=dict(l=10, r=10, t=50, b=10),
        plot_bgcolor="white",
        legend=LEGEND_AT_FOOT,
    )
    fig.update_xaxes(
        title_text=x_title, range=[0, max(1e-6, float(w.max()) * 1.2)] if w.size else None, gridcolor="#eee"
    )
    fig.update_yaxes(autorange="reversed", type="category", title_text=y_title)
    return fig


def accuracy_bars(
    labels: list[str],
    accuracy,
    low,
    high,
    chance: float = 0.5,
    title: str = "",
    *,
    x_title: str,
    chance_label: str,
) -> go.Figure:
    """Horizontal bars with 95% interval whiskers and a dashed chance line; x_title, chance_label: the page's words
    for the accuracy and the chance line, required (no English default)."""
    acc = np.asarray(accuracy, dtype=np.float64)
    lo, hi = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    y = [safe_label(s, 60) for s in labels]
    fig = go.Figure(
        go.Bar(
            x=np.round(acc, 3).tolist(),
            y=y,
            orientation="h",
            marker_color=BLUE,
            error_x=dict(
                type="data",
                symmetric=False,
                array=np.round(hi - acc, 3).tolist(),
                arrayminus=np.round(acc - lo, 3).tolist(),
                color="#444",
            ),
            customdata=np.round(np.stack([lo, hi], 1), 3).tolist(),
            # a share hovered as the caption and the pages' sentences say it: to one decimal (63.2%), not 63%
            hovertemplate=f"%{{y}}<br>%{{x:{SHARE_FORMAT}}} [%{{customdata[0]:{SHARE_FORMAT}}}, "
            f"%{{customdata[1]:{SHARE_FORMAT}}}]<extra></extra>",
        )
    )
    fig.add_vline(
        x=chance,
        line_dash="dash",
        line_color=RED,
        annotation_text=safe_label(chance_label, 30),
        annotation_position="top",
    )
    fig.update_layout(
        title=dict(text=safe_label(title, 120)),
        height=int(120 + 46 * len(y)),
        margin=dict(l=10, r=10, t=60, b=10),
        plot_bgcolor="white",
    )
    fig.update_xaxes(title_text=x_title, range=[0, 1], tickformat=".0%", gridcolor="#eee")
    # each name drawn in lines of LABEL_COLUMNS: in one line a model's and its head's name ('MiniLM-L6
    # (all-MiniLM-L6-v2): best head L3 H3') left a phone's plot a sixth of the figure and pushed the x axis's title
    # past its edge; hover, the caption and the table read the category itself, in one line
    wrapped = [wrapped_label(s, LABEL_COLUMNS, max_chars=60) for s in labels]
    fig.update_yaxes(autorange="reversed", type="category", tickmode="array", tickvals=y, ticktext=wrapped)
    return fig
