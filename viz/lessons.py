"""Figures of /lessons: how answers to one question are spread (one learner's view, or a room's histogram).
Draws a core.lessons.Distribution; computes nothing. Labels are escaped (learners' answers are data, not markup)."""

from __future__ import annotations

from collections.abc import Callable

import plotly.graph_objects as go

from core.lessons import Distribution

from .labels import safe_label
from .style import GREEN, MASKED_COLOUR, ORANGE, PALETTE, base_layout

RIGHT_MARK = "✓"


def histogram(view: Distribution, words: Callable[..., str]) -> go.Figure:
    """Horizontal bars, one per answer (or bin), in the view's order. Before the reveal every bar is one colour;
    after it, right bars are green and their labels end in RIGHT_MARK (not told by colour alone; a screen reader's
    text alternative reads the mark with the label). The viewer's own answer is outlined. words(key, **fmt): the
    [lessons.figure] words (keys: hist_title, hist_count, hist_right, hist_mine)."""
    y = [safe_label(label, 60) + (f" {RIGHT_MARK}" if right else "") for label, right in zip(view.labels, view.right)]
    colours = [GREEN if right else (MASKED_COLOUR if view.revealed else PALETTE[0]) for right in view.right]
    widths = [3 if i == view.mine else 0 for i in range(len(y))]
    fig = go.Figure(
        go.Bar(
            x=list(view.counts),
            y=y,
            orientation="h",
            marker=dict(color=colours, line=dict(color=ORANGE, width=widths)),
            text=[str(c) for c in view.counts],
            textposition="outside",
            hovertemplate="%{y}: %{x}<extra></extra>",
        )
    )
    title = words("hist_title", n=view.total)
    if view.revealed:
        title += " · " + words("hist_right", right=view.n_right, n=view.total)
    if view.mine is not None:
        title += " · " + words("hist_mine")
    base_layout(fig, title=safe_label(title, 160), height=int(min(700, 120 + 32 * max(1, len(y)))))
    fig.update_xaxes(title_text=words("hist_count"), rangemode="tozero", gridcolor="#eee",
                     range=[0, max(1, max(view.counts, default=0)) * 1.2], dtick=1 if max(view.counts, default=0) <= 10 else None)  # fmt: skip
    fig.update_yaxes(autorange="reversed", type="category")
    return fig
