"""Figures for Mixture-of-Experts routing. Arrays in, plotly figures out; every label is escaped."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .labels import safe_label

BALANCED_COLOUR, COLLAPSED_COLOUR = "#1f77b4", "#d62728"
VARIANT_COLOURS = [BALANCED_COLOUR, COLLAPSED_COLOUR, "#2ca02c", "#9467bd"]
CHOSEN_MARK, DROPPED_MARK = "●", "✕"


def expert_labels(n_experts: int) -> list[str]:
    return [f"expert {e}" for e in range(n_experts)]


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title=dict(text=safe_label(title, 140)),
        height=height,
        margin=dict(l=10, r=10, t=50, b=10),
        plot_bgcolor="white",
    )
    return fig


def router_heatmap(
    probs,
    token_labels: list[str],
    chosen,
    dropped=None,
    title: str = "",
    x_title: str = "expert",
    y_title: str = "token (in reading order)",
    chosen_name: str = "chosen (top-k)",
    dropped_name: str = "dropped (expert full)",
) -> go.Figure:
    """Token (rows, y) x expert (columns, x) router probabilities. A dot marks each token's top-k experts;
    a cross marks a choice that capacity dropped. probs, chosen, dropped: (n_tokens, n_experts)."""
    p = np.round(np.asarray(probs, dtype=np.float64), 3).astype(np.float32)
    chosen = np.asarray(chosen, dtype=bool)
    dropped = np.zeros_like(chosen) if dropped is None else np.asarray(dropped, dtype=bool)
    n, e = p.shape
    marks = np.where(dropped, DROPPED_MARK, np.where(chosen, CHOSEN_MARK, ""))
    status = np.where(dropped, dropped_name, np.where(chosen, chosen_name, "—"))
    x = [safe_label(s) for s in expert_labels(e)]
    y = [safe_label(s, 30) for s in token_labels]
    fig = go.Figure(
        go.Heatmap(
            z=p,
            x=x,
            y=y,
            zmin=0,
            zmax=1,
            colorscale="Blues",
            text=marks,
            texttemplate="%{text}",
            textfont=dict(color="#222", size=11),
            customdata=status,
            hovertemplate="token: %{y}<br>%{x}<br>router probability: %{z:.3f}<br>%{customdata}<extra></extra>",
            colorbar=dict(title=dict(text="router probability", side="right"), thickness=12),
        )
    )
    fig.update_xaxes(
        title_text=f"{x_title}   ({CHOSEN_MARK} {chosen_name}, {DROPPED_MARK} {dropped_name})",
        type="category",
        side="top",
    )
    fig.update_yaxes(title_text=y_title, type="category", autorange="reversed", showticklabels=n <= 200)
    return _layout(fig, title, int(min(2400, max(300, 110 + 20 * n))))


def load_bars(
    loads: dict[str, np.ndarray],
    title: str = "",
    y_title: str = "share of assignments",
    uniform_label: str = "uniform",
    capacity_share: float | None = None,
    capacity_label: str = "capacity",
) -> go.Figure:
    """Grouped bars: for each series (name -> (E,) shares), each expert's share. A dashed line at 1/E."""
    fig = go.Figure()
    n = None
    for i, (name, values) in enumerate(loads.items()):
        v = np.asarray(values, dtype=np.float64)
        n = len(v)
        fig.add_trace(
            go.Bar(
                x=[safe_label(s) for s in expert_labels(n)],
                y=np.round(v, 4).tolist(),
                name=safe_label(name, 40),
                marker_color=VARIANT_COLOURS[i % len(VARIANT_COLOURS)],
                hovertemplate=f"{safe_label(name, 40)}<br>%{{x}}: %{{y:.1%}}<extra></extra>",
            )
        )
    if n:
        fig.add_hline(
            y=1 / n,
            line_dash="dash",
            line_color="#555",
            annotation_text=safe_label(f"{uniform_label} 1/{n}", 40),
            annotation_position="top left",
        )
    if capacity_share is not None:
        fig.add_hline(
            y=capacity_share,
            line_dash="dot",
            line_color="#d62728",
            annotation_text=safe_label(capacity_label, 40),
            annotation_position="top right",
        )
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.2))
    fig.update_yaxes(title_text=y_title, tickformat=".0%", gridcolor="#eee", rangemode="tozero")
    fig.update_xaxes(type="category")
    return _layout(fig, title, 340)


def entropy_bars(
    entropy,
    token_labels: list[str],
    max_entropy: float,
    title: str = "",
    x_title: str = "router entropy (nats)",
    max_label: str = "log E (undecided)",
) -> go.Figure:
    """Horizontal bars: each token's router entropy, with a dashed line at log E."""
    h = np.round(np.asarray(entropy, dtype=np.float64), 3)
    y = [safe_label(s, 30) for s in token_labels]
    fig = go.Figure(
        go.Bar(
            x=h.tolist(),
            y=y,
            orientation="h",
            marker_color="#9467bd",
            hovertemplate="%{y}<br>entropy %{x:.3f} nats<extra></extra>",
        )
    )
    fig.add_vline(
        x=max_entropy,
        line_dash="dash",
        line_color="#555",
        annotation_text=safe_label(max_label, 40),
        annotation_position="top",
    )
    fig.update_xaxes(title_text=x_title, range=[0, max_entropy * 1.08], gridcolor="#eee")
    fig.update_yaxes(type="category", autorange="reversed", showticklabels=len(y) <= 200)
    return _layout(fig, title, int(min(2400, max(300, 110 + 18 * len(y)))))


def dropped_curve(
    factors,
    dropped_share,
    current: float | None = None,
    title: str = "",
    x_title: str = "capacity factor",
    y_title: str = "share of assignments dropped",
    current_label: str = "slider",
) -> go.Figure:
    fig = go.Figure(
        go.Scatter(
            x=np.round(np.asarray(factors, dtype=float), 3).tolist(),
            y=np.round(np.asarray(dropped_share, dtype=float), 4).tolist(),
            mode="lines+markers",
            line=dict(color="#d62728"),
            hovertemplate="capacity factor %{x}<br>dropped %{y:.1%}<extra></extra>",
        )
    )
    if current is not None:
        fig.add_vline(x=current, line_dash="dot", line_color="#555", annotation_text=safe_label(current_label, 30))
    fig.update_xaxes(title_text=x_title, gridcolor="#eee")
    fig.update_yaxes(title_text=y_title, tickformat=".0%", gridcolor="#eee", rangemode="tozero")
    return _layout(fig, title, 300)


def category_heatmap(
    shares, lift, category_names: list[str], title: str = "", x_title: str = "word category", y_title: str = "expert"
) -> go.Figure:
    """Expert (rows) x category (columns): share of each category among the tokens routed to the expert.
    Hover adds the lift (share / the category's overall share): > 1 means the expert prefers it."""
    s = np.round(np.asarray(shares, dtype=np.float64), 3).astype(np.float32)
    lf = np.round(np.asarray(lift, dtype=np.float64), 2)
    e, c = s.shape
    fig = go.Figure(
        go.Heatmap(
            z=s,
            x=[safe_label(n) for n in category_names],
            y=[safe_label(n) for n in expert_labels(e)],
            zmin=0,
            zmax=1,
            colorscale="Greens",
            customdata=lf,
            texttemplate="%{z:.0%}",
            hovertemplate="%{y}<br>%{x}: %{z:.1%} of its tokens<br>lift ×%{customdata}<extra></extra>",
            colorbar=dict(title=dict(text="share", side="right"), thickness=12),
        )
    )
    fig.update_xaxes(title_text=x_title, type="category", tickangle=-40)
    fig.update_yaxes(title_text=y_title, type="category", autorange="reversed")
    return _layout(fig, title, int(120 + 34 * e))


def layer_load_heatmap(
    loads, title: str = "", x_title: str = "expert", y_title: str = "layer", zmax: float | None = None
) -> go.Figure:
    """Layer (rows) x expert (columns) shares of assignments."""
    z = np.round(np.asarray(loads, dtype=np.float64), 3).astype(np.float32)
    n_layers, e = z.shape
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[safe_label(n) for n in expert_labels(e)],
            y=[f"layer {i}" for i in range(n_layers)],
            zmin=0,
            zmax=zmax if zmax is not None else max(0.5, float(z.max())),
            colorscale="Oranges",
            texttemplate="%{z:.0%}",
            hovertemplate="%{y}, %{x}: %{z:.1%} of assignments<extra></extra>",
            colorbar=dict(title=dict(text="share", side="right"), thickness=12),
        )
    )
    fig.update_xaxes(title_text=x_title, type="category")
    fig.update_yaxes(title_text=y_title, type="category", autorange="reversed")
    return _layout(fig, title, int(130 + 40 * n_layers))


def loss_curves(
    curves: dict[str, tuple[list, list]],
    title: str = "",
    x_title: str = "training step",
    y_title: str = "loss (nats/token)",
) -> go.Figure:
    """Lines: name -> (steps, losses)."""
    fig = go.Figure()
    for i, (name, (steps, losses)) in enumerate(curves.items()):
        fig.add_trace(
            go.Scatter(
                x=list(steps),
                y=np.round(np.asarray(losses, dtype=float), 4).tolist(),
                mode="lines",
                name=safe_label(name, 40),
                line=dict(color=VARIANT_COLOURS[i % len(VARIANT_COLOURS)]),
            )
        )
    fig.update_xaxes(title_text=x_title, gridcolor="#eee")
    fig.update_yaxes(title_text=y_title, gridcolor="#eee")
    fig.update_layout(legend=dict(orientation="h", y=-0.25))
    return _layout(fig, title, 320)
