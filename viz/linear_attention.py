"""Figures of /linear-attention: counted costs, the implied attention matrices, how finite feature maps approach
softmax's exp kernel, measured time against n with fitted slopes, and generation speed. Each takes the view
dataclass of core/linear_attention/views.py (or exp_kernel.py) and `t(key, **fmt)` for its words (the
[linear_attention.figure] catalog section); it draws and does not compute.

Log axes carry major ticks only: powers of ten, a narrow axis widened to whole decades (plotly's default labels
every digit of a short log axis, which reads as clutter, and its 1-2-5 labels read as a linear axis)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from .heatmap import attention_heatmap
from .labels import safe_label
from .style import LEGEND_AT_FOOT, MARGIN, colour

if TYPE_CHECKING:
    from core.linear_attention.copy_task import QualityView
    from core.linear_attention.exp_kernel import ExpKernelView
    from core.linear_attention.views import AssociativityView, GenerationView, ImpliedView, TimingView

Text = Callable[..., str]
DECADES_FOR_POWERS_OF_TEN = 2.5  # narrower axes are widened to whole decades
# wider still, a tick every third power (1, 1m, 1µ, ...): /linear-attention's error axis spans 10^-15..1, and on a
# phone its sixteen labels, 13 px apart, ran into each other
DECADES_FOR_THOUSANDS = 9
# A widened axis's end that a value sits on (or within this share of the range from it) moves out by this share: a
# point exactly at a power of ten (a length of 100, a time of 1 ms) stood on the frame, its marker cut in half
END_PAD = 0.05


def major_log_ticks(values: Sequence) -> dict:
    """Axis settings for a log axis over `values` (None, NaN and values <= 0 ignored): labels at powers of ten only.
    {"dtick": 3} (every third power of ten) over more than DECADES_FOR_THOUSANDS decades, {"dtick": 1} over more than
    DECADES_FOR_POWERS_OF_TEN; a narrower axis also gets a range widened to whole decades, so that at least two
    powers of ten are labelled (plotly's 1-2-5 labels between them read as if the axis were linear); an end that a
    value sits on is moved out by END_PAD of the range, so that its marker is drawn whole (plotly's own range pads
    for markers; a set one does not)."""
    v = [float(x) for x in values if x is not None and math.isfinite(float(x)) and float(x) > 0]
    decades = math.log10(max(v) / min(v)) if v else 0
    if decades > DECADES_FOR_THOUSANDS:
        return {"dtick": 3}
    if decades > DECADES_FOR_POWERS_OF_TEN or not v:
        return {"dtick": 1}
    lowest, highest = math.log10(min(v)), math.log10(max(v))
    low = math.floor(lowest)
    high = max(low + 1, math.ceil(highest))
    pad = END_PAD * (high - low)
    return {
        "dtick": 1,
        "range": [
            round(low - pad, 6) if lowest - low < pad else low,
            round(high + pad, 6) if high - highest < pad else high,
        ],
    }


def _line(x, y, name: str, i: int, dash: str | None = None, markers: bool = True) -> dict:
    label = safe_label(name, 60)
    return {
        "type": "scatter",
        "x": list(x),
        "y": [None if v is None or not math.isfinite(v) else float(v) for v in y],
        "mode": "lines+markers" if markers else "lines",
        "name": label,
        "line": {"color": colour(i), "width": 2} if dash is None else {"color": colour(i), "dash": dash, "width": 1.5},
        "hovertemplate": f"{label}<br>%{{x:,}}: %{{y:.4g}}<extra></extra>",
    }


def _figure(traces: list[dict], title: str, x_axis: dict, y_axis: dict, height: int) -> go.Figure:
    """Plain trace and layout dicts, one go.Figure without plotly's per-property validation: a class of 30 reruns
    this page, and validation with update_layout/update_*axes was most of its figure time (py-spy); a test
    rebuilds each figure with validation and compares what the browser gets."""
    layout = {
        "title": {"text": safe_label(title, 120)},
        "height": height,
        "plot_bgcolor": "white",
        "margin": dict(MARGIN),
        "legend": dict(LEGEND_AT_FOOT),
        "xaxis": {"gridcolor": "#eee", **x_axis},
        "yaxis": {"gridcolor": "#eee", **y_axis},
    }
    return go.Figure({"data": traces, "layout": layout}, _validate=False)


def _loglog(traces: list[dict], title: str, x_title: str, y_title: str, height: int = 420) -> go.Figure:
    xs = [x for tr in traces for x in tr["x"]]
    ys = [y for tr in traces for y in tr["y"]]
    x_axis = {"type": "log", "title": {"text": x_title}, **major_log_ticks(xs)}
    y_axis = {"type": "log", "title": {"text": y_title}, **major_log_ticks(ys)}
    return _figure(traces, title, x_axis, y_axis, height)


def cost_figure(view: AssociativityView, t: Text) -> go.Figure:
    traces = [_line(view.sizes, view.curves[o], t(f"order_{o}"), i) for i, o in enumerate(("quadratic", "linear"))]
    return _loglog(traces, t("cost_title", d=view.d), t("n_axis"), t("multiply_adds"), height=360)


def implied_figures(view: ImpliedView, t: Text) -> tuple[go.Figure, go.Figure]:
    """Softmax's and linear attention's (n x n) weights on the same colour scale, masked cells marked."""
    return tuple(
        attention_heatmap(
            getattr(view, kind),
            view.queries,
            view.keys,
            masked=view.mask,
            title=t(f"{kind}_title"),
            x_title=t("key_axis"),
            y_title=t("query_axis"),
            value_name=t("weight"),
            zmax=1.0,
        )
        for kind in ("softmax", "linear")
    )


def exp_kernel_figure(view: ExpKernelView, t: Text) -> go.Figure:
    """Error of the attention weights against the number of feature coordinates: Taylor (one point per order)
    and random features."""
    taylor = _line(view.taylor_counts, view.taylor_error, t("ek_taylor"), 0)
    taylor["text"] = [t("ek_order", m=m) for m in view.orders]
    taylor["hovertemplate"] = "%{text}<br>%{x:.3g}: %{y:.2e}<extra></extra>"
    random = _line(view.random_counts, view.random_error, t("ek_random"), 1)
    return _loglog([taylor, random], t("ek_title", d=view.d), t("ek_x"), t("ek_y"), height=380)


def timing_figure(view: TimingView, t: Text) -> go.Figure:
    """Measured times; dashed: the power law fitted on the upper half of the sizes, over that range."""
    traces = []
    for i, kind in enumerate(("softmax", "linear")):
        traces.append(_line(view.sizes, view.ms[kind], t(kind), i))
        slope, intercept, lo = view.large[kind], view.large[f"{kind}_intercept"], view.large["fit_from"]
        if slope is not None:
            hi = max(n for n, ms in zip(view.sizes, view.ms[kind]) if ms is not None)
            xs = [lo * (hi / lo) ** (j / 19) for j in range(20)]
            label = f"{t(kind)} — {t('fit_label', slope=slope, fit_from=lo)}"
            traces.append(_line(xs, [math.exp(intercept) * x**slope for x in xs], label, i, "dash", markers=False))
    title = t("time_title", heads=view.heads, d=view.head_dim, kind=t("kind_causal" if view.causal else "kind_full"))
    return _loglog(traces, title, t("n_axis"), t("ms_axis"))


def generation_figure(view: GenerationView, t: Text) -> go.Figure:
    traces = [_line(view.contexts, view.tok_s[m], t(m), i) for i, m in enumerate(view.tok_s)]
    return _loglog(traces, t("gen_title"), t("ctx_axis"), t("tok_axis"))


def quality_figures(view: QualityView, t: Text) -> dict[str, go.Figure]:
    """{"steps": training loss against steps, "time": against training seconds (wall clock)}, both kinds, log
    loss axis, with chance (ln of the number of symbols) and the "copies" threshold as dashed lines."""
    figs = {}
    for name, x_key, x_title in (("steps", "step", t("q_x_steps")), ("time", "wall_s", t("q_x_time"))):
        traces = [
            _line(view.curves[kind][x_key], view.curves[kind]["loss"], t(f"q_{kind}"), i, markers=False)
            for i, kind in enumerate(("softmax", "linear"))
        ]
        # chance and the threshold as traces (a shape's annotation would sit at 10^y on a log axis)
        xs = [x for tr in traces for x in tr["x"]]
        for y, label, dash in (
            (view.chance, t("q_chance", v=view.chance), "dash"),
            (view.threshold, t("q_threshold", v=view.threshold), "dot"),
        ):
            traces.append(
                {
                    "type": "scatter",
                    "x": [min(xs), max(xs)],
                    "y": [y, y],
                    "mode": "lines",
                    "name": safe_label(label, 80),
                    "line": {"color": "#999", "dash": dash, "width": 1},
                    "hoverinfo": "skip",
                }
            )
        x_axis = {"title": {"text": safe_label(x_title, 60)}}
        every_y = [y for tr in traces for y in tr["y"]]
        y_axis = {"type": "log", "title": {"text": safe_label(t("q_y"), 60)}, **major_log_ticks(every_y)}
        figs[name] = _figure(traces, t(f"q_fig_{name}"), x_axis, y_axis, 380)
    return figs
