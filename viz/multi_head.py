"""Figures of /multi-head: one layer's chain X -> Q_i, K_i, V_i -> A_i -> Z_i -> Concat -> output, and the
number of heads at a fixed d_model. Data in (core.multi_head), figures out; words through `t`."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .heatmap import figure, scale, subplot_grid
from .labels import indexed_labels, safe_label
from .style import DIVERGING_SCALE, MARGIN, WEIGHTS_SCALE, base_layout, colour

# (panel key, row, column) of the chain figure; the wide (n x D) matrices get whole rows.
PANELS = [("x", 1, 1), ("q", 2, 1), ("k", 2, 2), ("v", 2, 3), ("a", 3, 1), ("z", 3, 2), ("concat", 4, 1),
          ("output", 5, 1)]  # fmt: skip
VERTICAL_SPACING = 0.13  # of the plot's height, PLOT_PX at 16 tokens
PLOT_PX = 1000
GRID = dict(
    rows=5, cols=3, specs=[[{"colspan": 3}, None, None], [{}, {}, {}], [{}, {"colspan": 2}, None],
                           [{"colspan": 3}, None, None], [{"colspan": 3}, None, None]],
    # between rows: a panel's x labels or its key-axis title in two lines (a phone's third of the width), then the
    # next row's panel title in two; at 0.11 /multi-head's 'key token (columns)' met 'Concat of the 12 heads' Z' at
    # 390 px in ja. Between columns: the third row's two panel titles, which all but touched
    vertical_spacing=VERTICAL_SPACING, horizontal_spacing=0.08,
)  # fmt: skip


def _signed(z: np.ndarray, name: str, labels: list[str], t) -> dict:
    bound = float(np.abs(z).max()) or 1.0
    return dict(
        type="heatmap", z=np.round(z, 3).astype(np.float32), y=labels, colorscale=scale(DIVERGING_SCALE), zmid=0.0,
        zmin=-bound, zmax=bound, showscale=False, name=name,
        hovertemplate=f"{name}<br>{t('token')}: %{{y}}<br>{t('column')}: %{{x}}<br>%{{z:.3f}}<extra></extra>",
    )  # fmt: skip


def chain_figure(walk, head: int, t) -> go.Figure:
    """Every step of one layer for head `head`: rows are tokens (queries), columns are features; A_i's columns are
    keys. The concatenation marks head boundaries (every d_k columns) and outlines head `head`."""
    labels = [safe_label(s, 20) for s in indexed_labels(walk.tokens)]
    d_k, n_heads = walk.head_dim, walk.n_heads
    titles = {
        "x": t("panel_x", n=walk.x.shape[0], d=walk.x.shape[1]),
        "q": t("panel_q", i=head, n=walk.q.shape[1], d=d_k),
        "k": t("panel_k", i=head, n=walk.k.shape[1], d=d_k),
        "v": t("panel_v", i=head, n=walk.v.shape[1], d=d_k),
        "a": t("panel_a", i=head, n=walk.weights.shape[-1]),
        "z": t("panel_z", i=head, n=walk.z.shape[1], d=d_k),
        "concat": t("panel_concat", h=n_heads, d=walk.concat.shape[1]),
        "output": t("panel_output", n=walk.output.shape[0], d=walk.output.shape[1]),
    }
    # the subplot layout is the same for every head of one sentence: made once (viz.heatmap.subplot_grid)
    layout, axes = subplot_grid(**GRID, subplot_titles=[titles[k] for k, _, _ in PANELS])
    data = {
        "x": walk.x, "q": walk.q[head], "k": walk.k[head], "v": walk.v[head], "z": walk.z[head],
        "concat": walk.concat, "output": walk.output,
    }  # fmt: skip
    # Traces, axes and shapes as plain dicts in one unvalidated figure (plotly's add_vline re-walks
    # every shape and axis per call, and validation took most of this page's rerun under load);
    # tests/viz/test_multi_head_figures.py rebuilds it the validated way and compares.
    traces = []
    for key, row, col in PANELS:
        xname, yname = axes[row, col]
        refs = dict(xaxis=xname.replace("axis", ""), yaxis=yname.replace("axis", ""))
        if key == "a":
            weights = np.round(walk.weights[head].numpy(), 3).astype(np.float32)
            traces.append(dict(
                type="heatmap", z=weights, x=labels, y=labels, colorscale=scale(WEIGHTS_SCALE), zmin=0.0, zmax=1.0,
                showscale=False,
                hovertemplate=f"{t('query')}: %{{y}}<br>{t('key')}: %{{x}}<br>{t('weight')}: %{{z:.3f}}<extra></extra>",
                **refs,
            ))  # fmt: skip
            layout[xname] |= {"title": {"text": t("key_axis")}, "showticklabels": False}
        else:
            traces.append(_signed(data[key].numpy(), titles[key], labels, t) | refs)
            if key == "output":  # one feature-axis title for the stack (the others would collide with titles)
                layout[xname] |= {"title": {"text": t("feature_axis")}}
        layout[yname] |= {"autorange": "reversed", "showticklabels": col == 1}
    layout[axes[3, 1][1]] |= {"title": {"text": t("query_axis")}}
    xname, yname = axes[4, 1]
    on = dict(xref=xname.replace("axis", ""), yref=yname.replace("axis", "") + " domain", y0=0, y1=1)
    # head boundaries in the concatenation, then the chosen head's outline: one shapes list
    layout["shapes"] = [
        dict(type="line", x0=i * d_k - 0.5, x1=i * d_k - 0.5, line=dict(width=1, color="#444"), **on)
        for i in range(1, n_heads)
    ] + [dict(type="rect", x0=head * d_k - 0.5, x1=(head + 1) * d_k - 0.5, line=dict(width=2, color=colour(3)), **on)]
    n = walk.x.shape[0]
    layout |= dict(title={"text": t("chain_title", l=walk.layer, i=head)}, margin=MARGIN, plot_bgcolor="white",
                   height=PLOT_PX + MARGIN["t"] + MARGIN["b"] + 12 * max(0, n - 16), showlegend=False)  # fmt: skip
    return figure(traces, layout)


def head_count_figure(rows, t) -> go.Figure:
    """d_k and the largest rank of one head's score matrix against h (log2 axis), with the (constant) parameter
    count on a second axis."""
    heads = [r.heads for r in rows]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=heads, y=[r.head_dim for r in rows], name=t("d_k"), mode="lines+markers",
                             line=dict(color=colour(0))))  # fmt: skip
    fig.add_trace(go.Scatter(x=heads, y=[r.score_rank for r in rows], name=t("rank"), mode="lines+markers",
                             line=dict(color=colour(3), dash="dot")))  # fmt: skip
    fig.add_trace(go.Scatter(x=heads, y=[r.parameters for r in rows], name=t("params"), mode="lines+markers",
                             line=dict(color=colour(2))), secondary_y=True)  # fmt: skip
    fig.update_xaxes(type="log", tickvals=heads, ticktext=[str(h) for h in heads], title_text=t("heads_axis"))
    fig.update_yaxes(type="log", dtick=np.log10(2), tickformat="d", title_text=t("size_axis"), secondary_y=False)
    fig.update_yaxes(title_text=t("params"), rangemode="tozero", secondary_y=True)
    return base_layout(fig, t("heads_title"), height=380)
