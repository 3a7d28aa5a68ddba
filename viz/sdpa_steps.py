"""Figures of /sdpa-steps: the four steps of softmax(Q Kᵀ / √d_k) V as labelled matrices, and the √d_k
saturation demo (entropy against d_k, one row of weights). Views in, plotly figures out.

Words come from `t` (the [sdpa_steps.figure] catalog section): keys query, key, dim, fig_scores, fig_scaled,
fig_weights, fig_output, sat_*, row_*.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from .heatmap import attention_heatmap, matrix_heatmap
from .labels import safe_label
from .linear_attention import major_log_ticks
from .style import BLUE, LEGEND_AT_FOOT, MARGIN, RED

if TYPE_CHECKING:  # types only: viz draws what core computed
    from core.sdpa_steps import LookupView, SaturationView, StepsView

SCALED_COLOUR, UNSCALED_COLOUR = BLUE, RED


def step_figures(view: StepsView, t: Callable[..., str]) -> dict[str, go.Figure]:
    """{"scores", "scaled", "weights", "output"}: one heatmap per step, rows = queries."""
    s = view.steps
    qk = dict(x_title=t("key"), y_title=t("query"), decimals=4)
    return {
        "scores": matrix_heatmap(s.scores, view.q_labels, view.k_labels, title=t("fig_scores"), value_name="QKᵀ", **qk),
        "scaled": matrix_heatmap(
            s.scaled, view.q_labels, view.k_labels, title=t("fig_scaled"), value_name="QKᵀ/√d_k", **qk
        ),
        "weights": attention_heatmap(
            s.weights, view.q_labels, view.k_labels, title=t("fig_weights"), value_name=t("weight"), zmax=1.0, **qk
        ),
        "output": matrix_heatmap(
            s.output,
            view.q_labels,
            view.v_labels,
            title=t("fig_output"),
            x_title=t("dim"),
            y_title=t("query"),
            value_name=t("output"),
            decimals=4,
        ),
    }


def saturation_figures(view: SaturationView, t: Callable[..., str]) -> dict[str, go.Figure]:
    """{"entropy": mean row entropy against d_k, "row": one random row of weights with and without scaling}."""
    c = view.curve
    return {
        "entropy": entropy_vs_dk_figure(
            c.d_k,
            c.entropy_scaled,
            c.entropy_unscaled,
            c.max_entropy,
            view.d_k,
            title=t("sat_title", n=view.n_keys),
            scaled_name=t("sat_scaled"),
            unscaled_name=t("sat_unscaled"),
            max_name=t("sat_max"),
            x_title=t("sat_x"),
            y_title=t("sat_y"),
            unit=t("sat_unit"),
        ),
        "row": softmax_row_bars(
            view.row["weights_scaled"],
            view.row["weights_unscaled"],
            view.key_labels,
            title=t("row_title", dk=view.d_k),
            scaled_name=t("row_scaled"),
            unscaled_name=t("row_unscaled"),
            x_title=t("row_key"),
            y_title=t("row_weight"),
        ),
    }


def entropy_vs_dk_figure(
    d_k,
    entropy_scaled,
    entropy_unscaled,
    max_entropy: float,
    chosen_d_k: int | None = None,
    title: str = "",
    *,
    scaled_name: str,
    unscaled_name: str,
    max_name: str,
    x_title: str,
    y_title: str,
    unit: str,
) -> go.Figure:
    """Mean row entropy against d_k (log axis), with and without the scaling, and ln(n) for reference. The curves'
    names, the axes' words and the hover's unit (nats) are the page's, required: the hover's own 'nats' was English
    to a Japanese or Korean reader."""
    # Plain dicts, one unvalidated figure (validation, add_hline and add_vline were a third of
    # /sdpa-steps' rerun under load); tests/viz/test_sdpa_steps_unvalidated.py compares it with plotly's own.
    d_k = np.asarray(d_k, dtype=np.float64)
    traces = [
        dict(
            type="scatter",
            x=d_k,
            y=np.round(np.asarray(values, dtype=np.float64), 4),
            mode="lines+markers",
            name=safe_label(name, 60),
            line=dict(color=colour),
            hovertemplate=f"d_k = %{{x}}<br>%{{y:.3f}} {safe_label(unit, 20)}<extra></extra>",
        )
        for values, name, colour in (
            (entropy_scaled, scaled_name, SCALED_COLOUR),
            (entropy_unscaled, unscaled_name, UNSCALED_COLOUR),
        )
    ]
    shapes = [dict(type="line", x0=0, x1=1, xref="x domain", y0=max_entropy, y1=max_entropy, yref="y",
                   line=dict(color="#777", dash="dash"))]  # fmt: skip
    notes = [dict(text=safe_label(f"{max_name} = {max_entropy:.3f}", 80), x=0, xanchor="left", xref="x domain",
                  y=max_entropy, yanchor="bottom", yref="y", showarrow=False)]  # fmt: skip
    if chosen_d_k is not None:
        shapes.append(dict(type="line", x0=chosen_d_k, x1=chosen_d_k, xref="x", y0=0, y1=1, yref="y domain",
                           line=dict(color="#444", dash="dot")))  # fmt: skip
    layout = dict(
        shapes=shapes,
        annotations=notes,
        title=dict(text=safe_label(title, 160)),
        height=380,
        plot_bgcolor="white",
        margin=MARGIN,
        legend=LEGEND_AT_FOOT,
        # powers of two only: a log axis would otherwise label every minor tick
        xaxis=dict(
            type="log", dtick=np.log10(2), tickformat="d", title=dict(text=safe_label(x_title, 60)), gridcolor="#eee"
        ),  # fmt: skip
        yaxis=dict(title=dict(text=safe_label(y_title, 80)), gridcolor="#eee", range=[0, max_entropy * 1.12]),
    )
    return go.Figure(data=traces, layout=layout, _validate=False)


def softmax_row_bars(
    weights_scaled,
    weights_unscaled,
    key_labels,
    title: str = "",
    *,
    scaled_name: str,
    unscaled_name: str,
    x_title: str,
    y_title: str,
) -> go.Figure:
    """One row of weights, with and without scaling, as grouped bars; the bars' names and the axes' words are the
    page's, required (no English default)."""
    x = [safe_label(s, 30) for s in key_labels]
    traces = [
        dict(
            type="bar",
            x=x,
            y=np.round(np.asarray(values, dtype=np.float64), 4),
            name=safe_label(name, 60),
            marker=dict(color=colour),
            hovertemplate="%{x}: %{y:.4f}<extra></extra>",
        )
        for values, name, colour in (
            (weights_scaled, scaled_name, SCALED_COLOUR),
            (weights_unscaled, unscaled_name, UNSCALED_COLOUR),
        )
    ]
    layout = dict(
        barmode="group",
        title=dict(text=safe_label(title, 160)),
        height=320,
        plot_bgcolor="white",
        margin=MARGIN,
        legend=LEGEND_AT_FOOT,
        xaxis=dict(title=dict(text=safe_label(x_title, 60)), type="category"),
        yaxis=dict(title=dict(text=safe_label(y_title, 60)), range=[0, 1.05], gridcolor="#eee"),
    )
    return go.Figure(data=traces, layout=layout, _validate=False)  # unvalidated: see entropy_vs_dk_figure


def _curve_title(view: LookupView, t: Callable[..., str]) -> str:
    """The limit the curve tends to as tau -> 0: the dict's value, or for a query equal to no key (KeyError) the
    most similar key's value."""
    if view.query_index is not None:
        return t("lookup_fig_curve")
    return t("lookup_fig_curve_nearest", key=view.names[view.nearest], value=f"{view.values[view.nearest]:g}")


def lookup_figures(view: LookupView, t: Callable[..., str]) -> dict[str, go.Figure]:
    """{"weights": the dict's one-hot weights beside attention's softmax weights, one bar pair per key;
    "curve": the soft result against the temperature (log axis), with the dict's value and sqrt(d_k) marked}."""
    weights = softmax_row_bars(
        view.weights,
        view.hard_weights,
        view.names,
        title=t("lookup_fig_weights", tau=view.tau),
        scaled_name=t("lookup_soft"),
        unscaled_name=t("lookup_hard"),
        x_title=t("lookup_key"),
        y_title=t("row_weight"),
    )
    curve = go.Figure(
        go.Scatter(
            x=view.taus,
            y=np.round(view.soft_by_tau, 5),
            mode="lines",
            name=safe_label(t("lookup_soft"), 60),
            line=dict(color=SCALED_COLOUR),
            hovertemplate="τ = %{x:.3g}<br>%{y:.4f}<extra></extra>",
        )
    )
    if view.hard is not None:
        curve.add_hline(
            y=view.hard,
            line_dash="dash",
            line_color=UNSCALED_COLOUR,
            annotation_text=safe_label(t("lookup_hard_value", value=view.hard), 80),
            annotation_position="bottom right",
        )
    # the chosen tau as a point on the curve, sqrt(d_k) as a vertical segment: traces, not shapes, so they sit
    # at the data values on the log axis
    curve.add_trace(
        go.Scatter(
            x=[view.tau],
            y=[round(view.soft, 5)],
            mode="markers",
            name=safe_label(t("lookup_chosen", tau=view.tau), 60),
            marker=dict(color="#444", size=10),
            hovertemplate="τ = %{x:.3g}<br>%{y:.4f}<extra></extra>",
        )
    )
    low, high = float(view.soft_by_tau.min()), float(view.soft_by_tau.max())
    curve.add_trace(
        go.Scatter(
            x=[view.d_k**0.5] * 2,
            y=[low, high],
            mode="lines",
            name=safe_label(t("lookup_sqrt_dk", root=view.d_k**0.5), 60),
            line=dict(color="#999", dash="dash"),
            hoverinfo="skip",
        )
    )
    curve.update_layout(
        title=dict(text=safe_label(_curve_title(view, t), 160)),
        height=340,
        plot_bgcolor="white",
        margin=MARGIN,
        legend=LEGEND_AT_FOOT,
    )
    curve.update_xaxes(
        type="log", title_text=safe_label(t("lookup_tau"), 60), gridcolor="#eee", **major_log_ticks(view.taus)
    )
    curve.update_yaxes(title_text=safe_label(t("lookup_result"), 60), gridcolor="#eee")
    return {"weights": weights, "curve": curve}
