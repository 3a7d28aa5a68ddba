"""The figures of /antecedents, from the view data of core/antecedents/view.py: the live head ranking, the
held-out accuracy bars, the per-head accuracy map. `t` gives the words of the [antecedents.figure] catalog section."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from core.antecedents.view import Bar, Ranking, grid_labels

from .bars import accuracy_bars, head_ranking_bars
from .heatmap import matrix_heatmap
from .style import DIVERGING_SCALE

Words = Callable[..., str]


def ranking_figure(ranking: Ranking, t: Words, pronoun: str, by: int) -> go.Figure:
    """The ranking's top heads' weights on every candidate, grouped bars; `by`: the candidate they are ranked by."""
    top = len(ranking.shown)
    return head_ranking_bars(
        [f"L{l} H{h}" for l, h, _ in ranking.heads[:top]],
        ranking.shown,
        ranking.names,
        title=t("ranking_title", p=pronoun, c=ranking.names[by], n=len(ranking.heads)),
        x_title=t("weight_axis"),
        y_title=t("heads_axis"),
    )


def bar_labels(bars: list[Bar], names: dict[str, str], t: Words) -> list[str]:
    """The label of each bar (also the page's table column); names: a display name per results key."""
    out = []
    for b in bars:
        if b.kind == "head":
            out.append(t("bar_head", name=names[b.model], l=b.head[0], h=b.head[1]))
        else:
            out.append(t("bar_choice", name=names[b.model]))
    return out


def accuracy_figure(bars: list[Bar], t: Words, labels: list[str], n_held: int) -> go.Figure:
    """Each bar's held-out accuracy with its 95% interval; labels from bar_labels."""
    return accuracy_bars(
        labels,
        [b.accuracy for b in bars],
        [b.low for b in bars],
        [b.high for b in bars],
        title=t("bars_title", n=n_held),
        x_title=t("acc_axis"),
        chance_label=t("chance"),
    )


def per_head_figure(accuracy: np.ndarray, t: Words, name: str) -> go.Figure:
    """accuracy (L, H) on the held-out half; 0.5 (chance) is the white middle of the scale."""
    return matrix_heatmap(
        accuracy,
        *grid_labels(accuracy),
        title=t("per_head_title", name=name),
        x_title=t("head"),
        y_title=t("layer"),
        colorscale=DIVERGING_SCALE,
        zmid=0.5,
        value_name=t("accuracy"),
    )
