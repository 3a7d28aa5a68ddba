"""The figures of /antecedents, from the view data of core/antecedents/view.py: the live head ranking, the
held-out accuracy bars, the per-head accuracy map. `t` gives the words of the [antecedents] catalog section."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from .bars import accuracy_bars, head_ranking_bars
from .heatmap import matrix_heatmap
from .style import DIVERGING_SCALE

Words = Callable[..., str]


def ranking_figure(ranking, t: Words, pronoun: str, by: int) -> go.Figure:
    """ranking: core.antecedents.view.Ranking; its top heads' weights on every candidate, grouped bars."""
    top = len(ranking.shown)
    return head_ranking_bars(
        [f"L{l} H{h}" for l, h, _ in ranking.heads[:top]],
        ranking.shown,
        ranking.names,
        title=t("ranking_title", p=pronoun, c=ranking.names[by], n=len(ranking.heads)),
        x_title=t("weight_axis"),
    )


def bar_labels(bars, names: dict[str, str], t: Words) -> list[str]:
    """bars: core.antecedents.view.Bar; names: a display name per results key."""
    out = []
    for b in bars:
        if b.kind == "head":
            out.append(t("bar_head", name=names[b.model], l=b.head[0], h=b.head[1]))
        else:
            out.append(t("bar_choice", name=names[b.model]))
    return out


def accuracy_figure(bars, labels: list[str], n_held: int, t: Words) -> go.Figure:
    return accuracy_bars(
        labels,
        [b.accuracy for b in bars],
        [b.low for b in bars],
        [b.high for b in bars],
        title=t("bars_title", n=n_held),
        x_title=t("acc_axis"),
        chance_label=t("chance"),
    )


def per_head_figure(accuracy: np.ndarray, name: str, t: Words) -> go.Figure:
    """accuracy (L, H) on the held-out half; 0.5 (chance) is the white middle of the scale."""
    return matrix_heatmap(
        accuracy,
        [str(i) for i in range(accuracy.shape[0])],
        [str(j) for j in range(accuracy.shape[1])],
        title=t("per_head_title", name=name),
        x_title=t("head"),
        y_title=t("layer"),
        colorscale=DIVERGING_SCALE,
        zmid=0.5,
        value_name=t("accuracy"),
    )
