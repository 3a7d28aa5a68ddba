"""Figures of /rnn-attention: the GRU's alignment for one sentence (core.rnn_attention.view.SentenceView), the
gradient that reaches a source word against its distance (GradientPanel), the time per sentence against length
(TimingView), and the cost of one layer against length (core.rnn_attention.compare.CostView). Views in, figures out;
words through `t`."""

from __future__ import annotations

import plotly.graph_objects as go

from .heatmap import attention_heatmap, with_cell_marks
from .labels import safe_label
from .linear_attention import major_log_ticks
from .style import BLUE, GREEN, LEGEND_AT_FOOT, ORANGE, RED, base_layout


def alignment_figure(view, t) -> go.Figure:
    """The GRU's attention: one row per written token (and </s>), one column per source token; open squares on
    the words the grammar aligns when the GRU wrote the reference (labels escaped as the heatmap's, so they land on
    its cells)."""
    rows, cols = view.row_labels, view.col_labels
    fig = attention_heatmap(view.attention, rows, cols, title=t("alignment_title"), x_title=t("axis_source"),
                            y_title=t("axis_output"), value_name=t("weight"))  # fmt: skip
    return with_cell_marks(fig, view.marks, rows, cols, t("grammar_alignment"))


def gradient_figure(panel, t) -> go.Figure:
    """Mean |d loss / d x_j| against the distance of word j from the last source token, log scale: with attention
    and through the recurrence only."""
    fig = go.Figure()
    for values, name, colour in ((panel.with_attention, t("with_attention"), BLUE),
                                 (panel.recurrence_only, t("recurrence_only"), ORANGE)):  # fmt: skip
        label = safe_label(name, 60)
        fig.add_trace(go.Scatter(x=panel.distances, y=values, mode="lines+markers", name=label,
                                 line=dict(color=colour),
                                 hovertemplate=f"{label}<br>%{{x}}: %{{y:.3g}}<extra></extra>"))  # fmt: skip
    title = t("gradient_title") if panel.length is None else t("gradient_long_title", n=panel.length)
    fig.update_xaxes(title=t("axis_distance"))
    fig.update_yaxes(
        title=t("axis_gradient"), type="log", **major_log_ticks([*panel.with_attention, *panel.recurrence_only])
    )
    return base_layout(fig, safe_label(title, 120), height=380, legend=LEGEND_AT_FOOT)


def timing_figure(view, t) -> go.Figure:
    """Time to encode one sentence against its length, log-log: core's GRU loop, torch.nn.GRU (when measured) and
    the Transformer encoder."""
    fig = go.Figure()
    series = [(view.gru_ms, view.gru_steps, t("gru"), ORANGE)]
    if any(v is not None for v in view.torch_gru_ms):
        series.append((view.torch_gru_ms, view.gru_steps, t("torch_gru"), RED))
    series.append((view.transformer_ms, view.transformer_steps, t("transformer"), BLUE))
    for values, steps, name, colour in series:
        label = safe_label(name, 60)
        fig.add_trace(go.Scatter(x=view.lengths, y=values, customdata=steps, mode="lines+markers", name=label,
                                 line=dict(color=colour),
                                 hovertemplate=f"{label}<br>n = %{{x}}: %{{y:.3g}} ms<br>"
                                 + safe_label(t("steps_in_sequence"), 60) + ": %{customdata}<extra></extra>"))  # fmt: skip
    # the cost figure's lengths are on a linear axis
    fig.update_xaxes(title=t("axis_length_log"), type="log", **major_log_ticks(view.lengths))
    times = [v for values, *_ in series for v in values]
    fig.update_yaxes(title=t("axis_cpu_ms" if view.cpu_time else "axis_ms"), type="log", **major_log_ticks(times))
    return base_layout(fig, safe_label(t("timing_title", device=view.device), 120), height=380,
                       legend=LEGEND_AT_FOOT)  # fmt: skip


def cost_figure(view, t) -> go.Figure:
    """Floating-point operations of one layer against n at width d, the crossover n = d and the chosen n marked."""
    fig = go.Figure()
    for values, name, colour in ((view.recurrent, t("cost_recurrent"), ORANGE),
                                 (view.attention, t("cost_attention"), BLUE)):  # fmt: skip
        label = safe_label(name, 60)
        fig.add_trace(go.Scatter(x=view.lengths, y=values, mode="lines", name=label, line=dict(color=colour),
                                 hovertemplate=f"{label}<br>n = %{{x}}: %{{y:.3g}}<extra></extra>"))  # fmt: skip
    fig.add_vline(x=view.crossover, line=dict(color=GREEN, dash="dash"))
    fig.add_annotation(x=view.crossover, y=1, yref="paper", showarrow=False, yanchor="bottom",
                       text=safe_label(t("crossover", d=view.d), 60), font=dict(color=GREEN))  # fmt: skip
    fig.add_vline(x=view.n, line=dict(color="#666", dash="dot"))
    fig.update_xaxes(title=t("axis_length"))
    fig.update_yaxes(title=t("axis_flops"))
    return base_layout(fig, safe_label(t("cost_title", d=view.d), 120), height=380,
                       legend=LEGEND_AT_FOOT)  # fmt: skip
