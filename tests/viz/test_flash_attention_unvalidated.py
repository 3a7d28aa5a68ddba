"""viz/flash_attention.statistics_figure is built from plain dicts on a cached subplot grid, unvalidated (issue 26):
what it sends is what a validated rebuild sends, and its step markers are what plotly's own add_vline draws."""

from __future__ import annotations

import functools
import json

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app import i18n
from core import flash_attention as fa
from viz import flash_attention as fv

t = functools.partial(i18n.text, "en", "flash_attention.figure")


def sent(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def test_statistics_figure_is_what_validation_and_plotlys_add_vline_would_build():
    view = fa.walk(n=9, d=3, br=3, bc=2, q_tile=2, causal=True)
    for step in (0, len(view.steps) - 1, 0):  # the grid is cached: nothing of one step stays in the next figure
        fig = fv.statistics_figure(view, t, step)
        out = sent(fig)
        assert out == sent(go.Figure(fig.to_dict()))
        reference = make_subplots(rows=1, cols=2)
        for col in (1, 2):
            reference.add_vline(x=step, line=dict(color=fv.RED, width=2, dash="dash"), row=1, col=col,
                                exclude_empty_subplots=False)  # fmt: skip
        assert out["layout"]["shapes"] == sent(reference)["layout"]["shapes"]
        rows = view.queries[1] - view.queries[0]
        assert [d["xaxis"] for d in out["data"]] == ["x", "x2"] * rows
        assert [a["text"] for a in out["layout"]["annotations"]] == [t("m_title"), t("l_title")]
