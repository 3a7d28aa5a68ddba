"""Figures of /sdpa-gqa: time and peak memory per backend and shape (grouped bars on log axes), and the KV cache of
one model as MHA, GQA and MQA. Each takes the view dataclass of core/sdpa_gqa/views.py and `t(key, **fmt)` for its
words (the [sdpa_gqa.figure] catalog section); it draws and does not compute."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from .labels import safe_label
from .linear_attention import major_log_ticks
from .style import LEGEND_AT_FOOT, MARGIN, colour

if TYPE_CHECKING:
    from core.sdpa_gqa.views import BackendsView, KvCacheView

Text = Callable[..., str]


def grouped_bars(
    categories: list[str],
    series: dict[str, list],
    title: str = "",
    y_title: str = "",
    log_y: bool = False,
    text_format: str = ".3g",
    x_title: str = "",
    height: int = 420,
    hover_suffix: str = "",
    show_text: bool | None = None,
) -> go.Figure:
    """Vertical bars: one group per category (x), one bar per series. None values are left out (no bar).
    Values are written on the bars when there are few enough to read (show_text=None), or as asked. A log y axis
    carries major ticks only (viz.linear_attention.major_log_ticks)."""
    if show_text is None:
        show_text = len(categories) * len(series) <= 12
    x = [safe_label(c, 60) for c in categories]
    fig = go.Figure()
    every = []
    for i, (name, values) in enumerate(series.items()):
        vals = [None if v is None or (isinstance(v, float) and not math.isfinite(v)) else float(v) for v in values]
        every += vals
        label = safe_label(name, 40)
        fig.add_trace(
            go.Bar(
                x=x,
                y=vals,
                name=label,
                marker_color=colour(i),
                text=["" if v is None else format(v, text_format) for v in vals] if show_text else None,
                textposition="outside" if show_text else "none",
                hovertemplate=f"{label}<br>%{{x}}: %{{y:{text_format}}}{safe_label(hover_suffix, 20)}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title=dict(text=safe_label(title, 120)),
        height=height,
        plot_bgcolor="white",
        margin=MARGIN,
        legend=LEGEND_AT_FOOT,
    )
    fig.update_xaxes(title_text=x_title, type="category")
    if log_y:
        fig.update_yaxes(title_text=y_title, type="log", gridcolor="#eee", **major_log_ticks(every))
    else:
        fig.update_yaxes(title_text=y_title, type="linear", gridcolor="#eee")
    return fig


def shape_words(label: str, t: Text) -> str:
    """A shape's label ('n=4096 d=128 causal bfloat16': core's notation) with its mask in the reader's words."""
    return " ".join(t("causal_shape") if part == "causal" else part for part in label.split(" "))


def backend_figures(view: BackendsView, t: Text) -> tuple[go.Figure, go.Figure]:
    """(time per call, peak extra memory) per shape, one bar per backend, log y."""
    shape = t("shape_axis")
    categories = [shape_words(c, t) for c in view.categories]
    ms = grouped_bars(categories, view.ms, title=t("ms_title"), y_title=t("ms_axis"), log_y=True, x_title=shape)
    mem = grouped_bars(
        categories, view.peak_mib, title=t("mem_title"), y_title=t("mem_axis"), log_y=True, x_title=shape
    )
    return ms, mem


def variant_labels(view: KvCacheView, t: Text) -> list[str]:
    return [r["variant"] + (t("this_model") if r["configured"] else "") for r in view.variants]


def kv_cache_figure(view: KvCacheView, t: Text) -> go.Figure:
    """GiB of the cache of the same model as MHA, GQA (when configured) and MQA."""
    return grouped_bars(
        variant_labels(view, t),
        {t("col_cache"): view.variant_gib},
        title=t("cache_title"),
        x_title=t("variant_axis"),
        y_title=t("gib"),
        height=360,
    )
