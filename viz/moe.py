"""Figures of the /moe page: one builder per figure, each taking the view object core.moe.views computed and
`t(key, **fmt)`, the figure words ([moe.figure] of app/locales). Draws only; every label is escaped."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from .heatmap import scale
from .labels import indexed_labels, safe_label
from .style import BLUE, LEGEND_AT_FOOT, MARGIN, PALETTE, RED, SHARE_FORMAT, colour_bar

if TYPE_CHECKING:
    from core.moe.checkpoint_views import Comparison, Specialisation
    from core.moe.views import TextRouting

Translate = Callable[..., str]
VARIANT_COLOURS = [BLUE, RED, PALETTE[2], PALETTE[4]]  # balanced, collapsed, ...
CHOSEN_MARK, DROPPED_MARK = "○", "✕"  # as the map draws them: a white mark ringed in dark (MARK_STYLE)
# The router map's marks, drawn over its cells as markers: white, ringed in near-black, so that one mark reads on
# every cell of the blue scale (near-black text marks vanished on the darkest cells, the experts the router picks)
MARK_STYLE = dict(color="white", line=dict(color="#222", width=1.5))
MARK_SYMBOLS = {CHOSEN_MARK: "circle", DROPPED_MARK: "x"}
MARK_SIZE = 10


def expert_labels(n_experts: int, t: Translate) -> list[str]:
    """'expert 3': the experts named in words (tables, a figure's text for screen readers, hover)."""
    return [t("expert_n", e=e) for e in range(n_experts)]


def expert_ticks(n_experts: int) -> list[str]:
    """An axis's labels of the experts: their numbers, the axis titled 'expert'. 'エキスパート 3' over a map's ~20 px
    columns on a phone stood on end and crowded; numbers lie flat in every language."""
    return [str(e) for e in range(n_experts)]


def _expert_named(t: Translate, axis: str) -> str:
    """Hover's words for the expert on `axis` ('x' or 'y'): 'expert 3' as the catalog writes it."""
    return safe_label(t("expert_n", e=f"%{{{axis}}}"))


def layer_labels(n_layers: int, t: Translate) -> list[str]:
    return [t("layer_n", i=i) for i in range(n_layers)]


def token_labels(view: TextRouting) -> list[str]:
    """'3 cat' labels of the routed tokens (unique even when a token repeats)."""
    return indexed_labels(view.tokens)


def _figure(traces: list[dict], title: str, height: int, **layout) -> go.Figure:
    """Plain trace and layout dicts in one unvalidated figure, with the title, margins and white background
    viz.style.base_layout sets. Plotly's per-property validation, update_layout's path parsing and add_vline were
    most of a /moe rerun (py-spy, cProfile), holding the interpreter lock every visitor of the server shares;
    tests/viz/test_moe_unvalidated.py checks each figure against the validated plotly calls it replaced."""
    layout |= dict(title=dict(text=safe_label(title, 140)), margin=MARGIN, plot_bgcolor="white", height=int(height))
    return go.Figure(data=traces, layout=layout, _validate=False)


def _axis_title(text: str) -> dict:
    return dict(text=text)


def _vline(x: float, dash: str, words: str, xanchor: str) -> tuple[dict, dict]:
    """What add_vline(x, line_dash=dash, line_color="#555", annotation_text=words) draws: a line over the plot's
    height and its words at the top, on the `xanchor` side of it (annotation_position "top left": "right")."""
    line = dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", line=dict(color="#555", dash=dash))
    note = dict(text=words, x=x, xanchor=xanchor, xref="x", y=1, yanchor="top", yref="y domain", showarrow=False)
    return line, note


def router_heatmap(view: TextRouting, t: Translate) -> go.Figure:
    """Token (rows) x expert (columns) router probabilities; a dot marks each token's top-k experts, a cross a
    choice that capacity dropped."""
    p = np.round(np.asarray(view.probs, dtype=np.float64), 3).astype(np.float32)
    chosen, dropped = np.asarray(view.chosen, dtype=bool), np.asarray(view.dropped, dtype=bool)
    chosen_name, dropped_name = t("chosen", k=view.top_k), t("dropped")
    status = np.where(dropped, dropped_name, np.where(chosen, chosen_name, "—"))
    prob = safe_label(t("router_prob"), 40)
    experts, tokens = expert_ticks(view.n_experts), [safe_label(s, 30) for s in token_labels(view)]
    heat = dict(
        type="heatmap",
        z=p,
        x=experts,
        y=tokens,
        zmin=0,
        zmax=1,
        colorscale=scale("Blues"),
        customdata=status.tolist(),
        hovertemplate=f"%{{y}}<br>{_expert_named(t, 'x')}<br>{prob}: %{{z:.3f}}<br>%{{customdata}}<extra></extra>",
        colorbar=colour_bar(prob),
    )
    # the marks over their cells: decoration (hoverinfo skip), the map's hover and caption say what they mark
    marks = [
        dict(
            type="scatter",
            x=[experts[j] for j in cols],
            y=[tokens[i] for i in rows],
            mode="markers",
            name=name,
            marker=dict(symbol=MARK_SYMBOLS[mark], size=MARK_SIZE, **MARK_STYLE),
            hoverinfo="skip",
            showlegend=False,
        )
        for mark, name, (rows, cols) in (
            (CHOSEN_MARK, chosen_name, np.nonzero(chosen & ~dropped)),
            (DROPPED_MARK, dropped_name, np.nonzero(dropped)),
        )
    ]
    n = p.shape[0]
    x_title = f"{t('expert_axis')}   ({CHOSEN_MARK} {chosen_name}, {DROPPED_MARK} {dropped_name})"
    title = t("heatmap_title", ckpt=t(f"{view.variant}_short"), layer=view.layer, cf=view.capacity_factor)
    return _figure(
        [heat, *marks],
        title,
        min(2400, max(300, 110 + 20 * n)),
        xaxis=dict(title=_axis_title(x_title), type="category", side="top"),
        yaxis=dict(title=_axis_title(t("token_axis")), type="category", autorange="reversed", showticklabels=n <= 200),
    )


def _load_bars(
    loads: dict[str, np.ndarray], t: Translate, title: str, capacity_share: float | None = None
) -> go.Figure:
    """Grouped bars: for each series (name -> (E,) shares), each expert's share; a dashed line at 1/E."""
    # Plain dicts, one unvalidated figure (validation and add_hline were a fifth of /moe's rerun under
    # load); tests/viz/test_moe_unvalidated.py compares it with plotly's own add_hline and a validated rebuild.
    traces, shapes, notes = [], [], []
    n = 0
    for i, (name, values) in enumerate(loads.items()):
        v = np.asarray(values, dtype=np.float64)
        n = len(v)
        traces.append(
            dict(
                type="bar",
                x=expert_ticks(n),
                y=np.round(v, 4).tolist(),
                name=safe_label(name, 40),
                marker=dict(color=VARIANT_COLOURS[i % len(VARIANT_COLOURS)]),
                hovertemplate=f"{safe_label(name, 40)}<br>{_expert_named(t, 'x')}: %{{y:{SHARE_FORMAT}}}<extra></extra>",
            )
        )
    lines = [(1 / n, "dash", "#555", f"{t('uniform')} 1/{n}", "left")] if n else []
    if capacity_share is not None:
        lines.append((capacity_share, "dot", RED, t("capacity_line"), "right"))
    for y, dash, colour, words, side in lines:  # what add_hline(annotation_position="top <side>") draws
        shapes.append(dict(type="line", x0=0, x1=1, xref="x domain", y0=y, y1=y, yref="y",
                           line=dict(color=colour, dash=dash)))  # fmt: skip
        notes.append(dict(text=safe_label(words, 40), x=0 if side == "left" else 1, xanchor=side, xref="x domain",
                          y=y, yanchor="bottom", yref="y", showarrow=False))  # fmt: skip
    layout = dict(
        barmode="group",
        legend=LEGEND_AT_FOOT,
        yaxis=dict(title=dict(text=t("share_axis")), tickformat=".0%", gridcolor="#eee", rangemode="tozero"),
        xaxis=dict(type="category", title=dict(text=t("expert_axis"))),
        title=dict(text=safe_label(title, 140)),
        margin=MARGIN,
        plot_bgcolor="white",
        height=340,
    )
    if shapes:
        layout |= dict(shapes=shapes, annotations=notes)
    return go.Figure(data=traces, layout=layout, _validate=False)


def load_figure(view: TextRouting, t: Translate) -> go.Figure:
    """The chosen checkpoint's expert load on the text, with the capacity line when an expert can overflow."""
    name = t(f"{view.variant}_short")
    title = t("load_title", layer=view.layer, k=view.top_k)
    return _load_bars({name: view.load}, t, title, view.capacity_share)


def compare_figure(view: TextRouting, t: Translate) -> go.Figure:
    """Every checkpoint's expert load on the same text and layer."""
    loads = {t(f"{v}_short"): load for v, load in view.load_by_variant.items()}
    return _load_bars(loads, t, t("compare_text", layer=view.layer))


def entropy_bars(view: TextRouting, t: Translate) -> go.Figure:
    """Horizontal bars: each token's router entropy, with a dashed line at log E."""
    h = np.round(np.asarray(view.entropy, dtype=np.float64), 3)
    y = [safe_label(s, 30) for s in token_labels(view)]
    top = view.bounds.entropy_max
    axis = safe_label(t("entropy_axis"), 60)
    bars = dict(
        type="bar",
        x=h.tolist(),
        y=y,
        orientation="h",
        marker=dict(color=PALETTE[4]),
        hovertemplate=f"%{{y}}<br>{axis}: %{{x:.3f}}<extra></extra>",
    )
    # the line stands near the right edge: its words to its left, not across it
    line, note = _vline(top, "dash", safe_label(t("entropy_max"), 40), "right")
    return _figure(
        [bars],
        t("entropy_title", layer=view.layer),
        min(2400, max(300, 110 + 18 * len(y))),
        shapes=[line],
        annotations=[note],
        xaxis=dict(title=_axis_title(t("entropy_axis")), range=[0, top * 1.08], gridcolor="#eee"),
        yaxis=dict(type="category", autorange="reversed", showticklabels=len(y) <= 200),
    )


def dropped_curve(view: TextRouting, t: Translate) -> go.Figure:
    """Share of assignments dropped against the capacity factor, the slider's value marked."""
    x_name, y_name = safe_label(t("drop_x"), 40), safe_label(t("drop_y"), 40)
    curve = dict(
        type="scatter",
        x=np.round(np.asarray(view.factors, dtype=float), 3).tolist(),
        y=np.round(np.asarray(view.dropped_by_factor, dtype=float), 4).tolist(),
        mode="lines+markers",
        line=dict(color=RED),
        hovertemplate=f"{x_name} %{{x}}<br>{y_name} %{{y:{SHARE_FORMAT}}}<extra></extra>",
    )
    line, note = _vline(view.capacity_factor, "dot", safe_label(t("slider"), 30), "left")
    return _figure(
        [curve],
        t("drop_title", layer=view.layer),
        300,
        shapes=[line],
        annotations=[note],
        xaxis=dict(title=_axis_title(t("drop_x")), gridcolor="#eee"),
        yaxis=dict(title=_axis_title(t("drop_y")), tickformat=".0%", gridcolor="#eee", rangemode="tozero"),
    )


def share_labels(shares) -> list[list[str]]:
    """A share map's cells' labels, to SHARE_FORMAT's decimal as its hover says them ('12.5%'), as text the page
    reads (viz.labels.for_page leaves them out where a screen would set them too small to read: a phone's 8 experts)."""
    return [[f"{v:{SHARE_FORMAT}}" if np.isfinite(v) else "" for v in row.tolist()]
            for row in np.asarray(shares, dtype=np.float64)]  # fmt: skip


def category_labels(names: list[str], t: Translate) -> list[str]:
    """The word categories (core's identifiers: 'noun', 'special') in the reader's words."""
    return [t(f"category_{n}") for n in names]


def category_heatmap(view: Specialisation, t: Translate) -> go.Figure:
    """Expert (rows) x category (columns): share of each category among the tokens routed to the expert.
    Hover adds the lift (share / the category's overall share): > 1 means the expert prefers it."""
    s = np.round(np.asarray(view.shares, dtype=np.float64), 3).astype(np.float32)
    lift = np.round(np.asarray(view.lift, dtype=np.float64), 2)
    e = s.shape[0]
    heat = dict(
        type="heatmap",
        z=s,
        x=[safe_label(n) for n in category_labels(view.category_names, t)],
        y=expert_ticks(e),
        zmin=0,
        zmax=1,
        colorscale=scale("Greens"),
        customdata=lift,
        text=share_labels(s),
        texttemplate="%{text}",
        hovertemplate=f"{_expert_named(t, 'y')}<br>%{{x}}: %{{z:{SHARE_FORMAT}}} {safe_label(t('of_its_tokens'), 40)}<br>"
        f"{safe_label(t('lift'), 20)} ×%{{customdata}}<extra></extra>",
        colorbar=colour_bar(safe_label(t("share_short"), 20), tickformat=".0%"),
    )
    return _figure(
        [heat],
        t("spec_title", ckpt=t(f"{view.variant}_short"), layer=view.layer),
        120 + 34 * e,
        xaxis=dict(title=_axis_title(t("category_axis")), type="category", tickangle=-40),
        yaxis=dict(title=_axis_title(t("expert_axis")), type="category", autorange="reversed"),
    )


def layer_load_heatmap(view: Comparison, t: Translate, variant: str) -> go.Figure:
    """Layer (rows) x expert (columns) shares of assignments of one checkpoint on the held-out text. The colour
    scale ends at 1/k, the largest share top-k routing allows, so both checkpoints share one scale."""
    z = np.round(view.checkpoints[variant].loads, 3).astype(np.float32)
    n_layers, e = z.shape
    heat = dict(
        type="heatmap",
        z=z,
        x=expert_ticks(e),
        # the layers' numbers, the axis titled 'layer' (as the experts'): 'layer 0' down the side took 43 px of the
        # cells' width, whose '12.5%' came to 7 px beside the other checkpoint's map (392 px: viz.labels.beside_px)
        y=[str(i) for i in range(n_layers)],
        zmin=0,
        zmax=view.bounds.max_load,
        colorscale=scale("Oranges"),
        text=share_labels(z),
        texttemplate="%{text}",
        hovertemplate=f"{safe_label(t('layer_n', i='%{y}'))}, {_expert_named(t, 'x')}: %{{z:{SHARE_FORMAT}}} "
        f"{safe_label(t('of_assignments'), 40)}<extra></extra>",
        # its short title across the bar's top, not up its side: 18 px more for the cells beside the other
        # checkpoint's map (392 px), whose '12.5%' plotly set in 8 px type with the title standing (chromium, 1,280 px)
        colorbar=colour_bar(safe_label(t("share_short"), 20), tickformat=".0%")
        | dict(title=dict(text=safe_label(t("share_short"), 20), side="top")),
    )
    return _figure(
        [heat],
        t("layer_load_title", ckpt=t(f"{variant}_short")),
        130 + 40 * n_layers,
        xaxis=dict(title=_axis_title(t("expert_axis")), type="category"),
        yaxis=dict(title=_axis_title(t("layer_axis")), type="category", autorange="reversed"),
    )


def loss_curves(view: Comparison, t: Translate) -> go.Figure:
    """Training loss of every checkpoint (from its training report)."""
    traces = [
        dict(
            type="scatter",
            x=list(summary.steps),
            y=np.round(np.asarray(summary.lm_loss, dtype=float), 4).tolist(),
            mode="lines",
            name=safe_label(t(f"{variant}_short"), 40),
            line=dict(color=VARIANT_COLOURS[i % len(VARIANT_COLOURS)]),
        )
        for i, (variant, summary) in enumerate(view.checkpoints.items())
    ]
    return _figure(
        traces,
        t("curves_title"),
        320,
        legend=LEGEND_AT_FOOT,
        xaxis=dict(title=_axis_title(t("step_axis")), gridcolor="#eee"),
        yaxis=dict(title=_axis_title(t("loss_axis")), gridcolor="#eee"),
    )
