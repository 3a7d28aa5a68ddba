"""viz/linear_attention.py builds its line figures as plain dicts without plotly's validation (a class reruns the
page; update_layout/update_*axes were most of its figure time): what it sends is what a validated rebuild sends."""

from __future__ import annotations

import json

import plotly.graph_objects as go

from core.linear_attention import measure
from core.linear_attention.copy_task import load_quality, quality_view
from core.linear_attention.exp_kernel import exp_kernel_view
from core.linear_attention.views import associativity_view, generation_view, timing_view
from viz import linear_attention as vl


def t(key, /, **fmt):
    return f"<{key}>" + "".join(f" {k}={v}" for k, v in sorted(fmt.items()))


def sent(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())  # what st.plotly_chart hands the browser


def test_every_line_figure_sends_what_a_validated_rebuild_sends():
    figures = [
        vl.cost_figure(associativity_view(4096, 64, [2**k for k in range(4, 18)]), t),
        vl.exp_kernel_figure(exp_kernel_view(4, 1.0), t),
    ]
    res = measure.load_results()
    assert res is not None, "results/bench_linear.json is committed"
    figures.append(vl.timing_figure(timing_view(res["scaling"]["rows"], res["scaling"]["slopes"]), t))
    figures.append(vl.generation_figure(generation_view(res["generation"]["rows"]), t))
    figures += list(vl.quality_figures(quality_view(load_quality()), t).values())
    for fig in figures:
        assert sent(fig) == sent(go.Figure(fig.to_dict()))  # every property through plotly's validators
        assert fig.layout.xaxis.title.text and fig.layout.yaxis.type == "log"
