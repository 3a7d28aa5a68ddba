"""viz/moe's expert-load bars are built from plain dicts, unvalidated (issue 26): what they send is what a validated
rebuild sends, and their reference lines with labels are what plotly's own add_hline draws."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from viz import moe


def words(key, /, **fmt):
    return key + "".join(f" {v}" for v in fmt.values())


def sent(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


@pytest.mark.parametrize("capacity", [None, 0.3])
def test_load_bars_are_what_validation_and_plotlys_add_hline_would_build(capacity):
    loads = {"<b>balanced</b>": np.full(8, 1 / 8), "collapsed": np.array([0.6, 0.3, 0.1, 0, 0, 0, 0, 0])}
    fig = moe._load_bars(loads, words, "load", capacity)
    out = sent(fig)
    assert out == sent(go.Figure(fig.to_dict()))
    reference = go.Figure()
    reference.add_hline(y=1 / 8, line_dash="dash", line_color="#555", annotation_text="uniform 1/8",
                        annotation_position="top left")  # fmt: skip
    if capacity is not None:
        reference.add_hline(y=capacity, line_dash="dot", line_color=moe.RED, annotation_text="capacity_line",
                            annotation_position="top right")  # fmt: skip
    ref = sent(reference)["layout"]
    assert out["layout"]["shapes"] == ref["shapes"] and out["layout"]["annotations"] == ref["annotations"]
    assert "<b>" not in json.dumps(out["data"])  # series names made safe


# The rest of viz/moe's figures, against the validated plotly calls they were built with before (kept here as the
# reference: go.Heatmap / go.Bar / go.Scatter, update_xaxes, add_vline, base_layout's update_layout).
def _ref_layout(fig, title, height):
    fig.update_layout(title=dict(text=moe.safe_label(title, 140)), margin=moe.MARGIN, plot_bgcolor="white",
                      height=int(height))  # fmt: skip
    return fig


def ref_router_heatmap(view, t):
    p = np.round(np.asarray(view.probs, dtype=np.float64), 3).astype(np.float32)
    chosen_name, dropped_name = t("chosen", k=view.top_k), t("dropped")
    status = np.where(view.dropped, dropped_name, np.where(view.chosen, chosen_name, "—"))
    prob = moe.safe_label(t("router_prob"), 40)
    experts, tokens = moe.expert_ticks(view.n_experts), [moe.safe_label(s, 30) for s in moe.token_labels(view)]
    fig = go.Figure(go.Heatmap(
        z=p, x=experts, y=tokens, zmin=0, zmax=1, colorscale="Blues", customdata=status, colorbar=moe.colour_bar(prob),
        hovertemplate=f"%{{y}}<br>{moe._expert_named(t, 'x')}<br>{prob}: %{{z:.3f}}<br>%{{customdata}}<extra></extra>",
    ))  # fmt: skip
    for symbol, name, cells in (
        ("circle", chosen_name, view.chosen & ~view.dropped),
        ("x", dropped_name, view.dropped),
    ):
        rows, cols = np.nonzero(cells)
        fig.add_trace(go.Scatter(
            x=[experts[j] for j in cols], y=[tokens[i] for i in rows], mode="markers", name=name, hoverinfo="skip",
            showlegend=False, marker=dict(symbol=symbol, size=10, color="white", line=dict(color="#222", width=1.5)),
        ))  # fmt: skip
    fig.update_xaxes(title_text=f"{t('expert_axis')}   ({moe.CHOSEN_MARK} {chosen_name}, {moe.DROPPED_MARK} "
                     f"{dropped_name})", type="category", side="top")  # fmt: skip
    n = p.shape[0]
    fig.update_yaxes(title_text=t("token_axis"), type="category", autorange="reversed", showticklabels=n <= 200)
    title = t("heatmap_title", ckpt=t(f"{view.variant}_short"), layer=view.layer, cf=view.capacity_factor)
    return _ref_layout(fig, title, min(2400, max(300, 110 + 20 * n)))


def ref_entropy_bars(view, t):
    y = [moe.safe_label(s, 30) for s in moe.token_labels(view)]
    top = view.bounds.entropy_max
    axis = moe.safe_label(t("entropy_axis"), 60)
    fig = go.Figure(go.Bar(x=np.round(np.asarray(view.entropy, dtype=np.float64), 3).tolist(), y=y, orientation="h",
                           marker_color=moe.PALETTE[4], hovertemplate=f"%{{y}}<br>{axis}: %{{x:.3f}}<extra></extra>"))  # fmt: skip
    fig.add_vline(x=top, line_dash="dash", line_color="#555", annotation_text=moe.safe_label(t("entropy_max"), 40),
                  annotation_position="top left")  # fmt: skip
    fig.update_xaxes(title_text=t("entropy_axis"), range=[0, top * 1.08], gridcolor="#eee")
    fig.update_yaxes(type="category", autorange="reversed", showticklabels=len(y) <= 200)
    return _ref_layout(fig, t("entropy_title", layer=view.layer), min(2400, max(300, 110 + 18 * len(y))))


def ref_dropped_curve(view, t):
    x_name, y_name = moe.safe_label(t("drop_x"), 40), moe.safe_label(t("drop_y"), 40)
    fig = go.Figure(go.Scatter(
        x=np.round(np.asarray(view.factors, dtype=float), 3).tolist(),
        y=np.round(np.asarray(view.dropped_by_factor, dtype=float), 4).tolist(), mode="lines+markers",
        line=dict(color=moe.RED), hovertemplate=f"{x_name} %{{x}}<br>{y_name} %{{y:.1%}}<extra></extra>",
    ))  # fmt: skip
    fig.add_vline(x=view.capacity_factor, line_dash="dot", line_color="#555",
                  annotation_text=moe.safe_label(t("slider"), 30))  # fmt: skip
    fig.update_xaxes(title_text=t("drop_x"), gridcolor="#eee")
    fig.update_yaxes(title_text=t("drop_y"), tickformat=".0%", gridcolor="#eee", rangemode="tozero")
    return _ref_layout(fig, t("drop_title", layer=view.layer), 300)


def ref_category_heatmap(view, t):
    s = np.round(np.asarray(view.shares, dtype=np.float64), 3).astype(np.float32)
    fig = go.Figure(go.Heatmap(
        z=s, x=[moe.safe_label(t(f"category_{n}")) for n in view.category_names], y=moe.expert_ticks(s.shape[0]),
        zmin=0, zmax=1,
        colorscale="Greens", customdata=np.round(np.asarray(view.lift, dtype=np.float64), 2),
        text=[[f"{v:.1%}" for v in row] for row in s.tolist()], texttemplate="%{text}",
        colorbar=moe.colour_bar(moe.safe_label(t("share_short"), 20), tickformat=".0%"),
        hovertemplate=f"{moe._expert_named(t, 'y')}<br>%{{x}}: %{{z:.1%}} {moe.safe_label(t('of_its_tokens'), 40)}"
        f"<br>{moe.safe_label(t('lift'), 20)} ×%{{customdata}}<extra></extra>",
    ))  # fmt: skip
    fig.update_xaxes(title_text=t("category_axis"), type="category", tickangle=-40)
    fig.update_yaxes(title_text=t("expert_axis"), type="category", autorange="reversed")
    return _ref_layout(fig, t("spec_title", ckpt=t(f"{view.variant}_short"), layer=view.layer), 120 + 34 * s.shape[0])


def ref_layer_load_heatmap(view, t, variant):
    z = np.round(view.checkpoints[variant].loads, 3).astype(np.float32)
    fig = go.Figure(go.Heatmap(
        z=z, x=moe.expert_ticks(z.shape[1]), y=[str(i) for i in range(z.shape[0])], zmin=0,
        zmax=view.bounds.max_load, colorscale="Oranges", text=[[f"{v:.1%}" for v in row] for row in z.tolist()],
        texttemplate="%{text}",
        hovertemplate=f"{moe.safe_label(t('layer_n', i='%{y}'))}, {moe._expert_named(t, 'x')}: %{{z:.1%}} "
        f"{moe.safe_label(t('of_assignments'), 40)}"
        "<extra></extra>", colorbar=moe.colour_bar(moe.safe_label(t("share_short"), 20), tickformat=".0%")
        | dict(title=dict(text=moe.safe_label(t("share_short"), 20), side="top")),
    ))  # fmt: skip
    fig.update_xaxes(title_text=t("expert_axis"), type="category")
    fig.update_yaxes(title_text=t("layer_axis"), type="category", autorange="reversed")
    return _ref_layout(fig, t("layer_load_title", ckpt=t(f"{variant}_short")), 130 + 40 * z.shape[0])


def ref_loss_curves(view, t):
    fig = go.Figure()
    for i, (variant, summary) in enumerate(view.checkpoints.items()):
        fig.add_trace(go.Scatter(x=list(summary.steps), y=np.round(np.asarray(summary.lm_loss, dtype=float), 4).tolist(),
                                 mode="lines", name=moe.safe_label(t(f"{variant}_short"), 40),
                                 line=dict(color=moe.VARIANT_COLOURS[i % len(moe.VARIANT_COLOURS)])))  # fmt: skip
    fig.update_xaxes(title_text=t("step_axis"), gridcolor="#eee")
    fig.update_yaxes(title_text=t("loss_axis"), gridcolor="#eee")
    fig.update_layout(legend=moe.LEGEND_AT_FOOT)
    return _ref_layout(fig, t("curves_title"), 320)


def routing_view(seed: int, capacity_factor: float, n: int = 6):
    """A text routed on hand-made logits: repeated and markup tokens, some choices dropped at a low factor."""
    from core.moe import views

    g = torch.Generator().manual_seed(seed)
    tokens = ["[BOS]", *(["the", "<b>cat</b>", "[UNK]"] * n)[: n - 1]]
    runs = {v: views.TextRun(tokens, n, False, [torch.randn(n, 8, generator=g) * 2 for _ in range(2)], 8, 2, 64)
            for v in ("balanced", "collapsed")}  # fmt: skip
    return views.text_routing(runs, "collapsed", 1, capacity_factor)


def checkpoint_views_of(seed: int):
    from core.moe import balance_bounds
    from core.moe import checkpoint_views as cv

    rng = np.random.default_rng(seed)
    loads = {v: rng.dirichlet(np.ones(8), size=4) for v in ("balanced", "collapsed")}
    summaries = {v: cv.CheckpointSummary(2.0, x, x.min(), x.max(), [0, 50, 100], list(rng.uniform(2, 5, 3)))
                 for v, x in loads.items()}  # fmt: skip
    shares = rng.dirichlet(np.ones(3), size=8)
    spec = cv.Specialisation("balanced", 2, ["noun", "verb", "special"], shares, shares * 3, [], [0.125] * 8, 99)
    return cv.Comparison(summaries, 8, 1 / 8, balance_bounds(8, 2)), spec


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
@pytest.mark.parametrize("capacity_factor", [0.25, 1.25, 4.0])
def test_every_moe_figure_sends_what_the_validated_plotly_calls_sent(lang, capacity_factor):
    """The figures are built from plain dicts, unvalidated: each sends the same JSON as the validated go.Heatmap /
    go.Bar / go.Scatter, update_*axes, add_vline and update_layout calls it replaced (named colour scales expanded as
    validation expands them; the reference lines with their words where add_vline put them)."""
    import functools

    from app import i18n

    t = functools.partial(i18n.text, lang, "moe.figure")
    view = routing_view(int(capacity_factor * 4), capacity_factor)
    comparison, spec = checkpoint_views_of(int(capacity_factor * 4))
    pairs = [
        (moe.router_heatmap(view, t), ref_router_heatmap(view, t)),
        (moe.entropy_bars(view, t), ref_entropy_bars(view, t)),
        (moe.dropped_curve(view, t), ref_dropped_curve(view, t)),
        (moe.category_heatmap(spec, t), ref_category_heatmap(spec, t)),
        (moe.layer_load_heatmap(comparison, t, "collapsed"), ref_layer_load_heatmap(comparison, t, "collapsed")),
        (moe.loss_curves(comparison, t), ref_loss_curves(comparison, t)),
    ]
    for fig, reference in pairs:
        assert sent(fig) == sent(reference)
        assert sent(fig) == sent(go.Figure(fig.to_dict()))  # and validation changes nothing in it
    if capacity_factor == 0.25:
        assert view.dropped.any()  # the dropped marks are compared too
