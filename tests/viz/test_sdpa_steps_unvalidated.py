"""viz/sdpa_steps' entropy curve and row bars are built from plain dicts, unvalidated (issue 26): what they send is
what a validated rebuild sends, and their reference lines are what plotly's own add_hline / add_vline draw."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from viz import sdpa_steps as vs

# the page's words, as [sdpa_steps.figure] hands them
CURVES = dict(scaled_name="softmax(q·k / √d_k)", unscaled_name="softmax(q·k)", max_name="ln(n): uniform weights",
              x_title="d_k", y_title="mean entropy of a row (nats)", unit="nats")  # fmt: skip
ROW = dict(scaled_name="with 1/√d_k", unscaled_name="without", x_title="key", y_title="weight")


def sent(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


@pytest.mark.parametrize("chosen", [None, 16])
def test_entropy_figure_is_what_validation_and_plotlys_lines_would_build(chosen):
    d_k = [1, 2, 4, 8, 16, 32, 64]
    fig = vs.entropy_vs_dk_figure(
        d_k, np.linspace(2, 1, 7), np.linspace(2, 0.1, 7), 2.3, chosen, title="<b>t</b>", **CURVES
    )
    out = sent(fig)
    assert out == sent(go.Figure(fig.to_dict()))
    reference = go.Figure()
    reference.add_hline(y=2.3, line_dash="dash", line_color="#777", annotation_text="ln(n): uniform weights = 2.300",
                        annotation_position="top left")  # fmt: skip
    if chosen is not None:
        reference.add_vline(x=chosen, line_dash="dot", line_color="#444")
    ref = sent(reference)["layout"]
    assert out["layout"]["shapes"] == ref["shapes"] and out["layout"]["annotations"] == ref["annotations"]
    assert "<b>" not in out["layout"]["title"]["text"]


def test_row_bars_are_what_validation_would_build():
    fig = vs.softmax_row_bars([0.1, 0.9], [0.0, 1.0], ["cat", "<b>mat</b>"], title="row", **ROW)
    assert sent(fig) == sent(go.Figure(fig.to_dict()))
    assert [t["type"] for t in sent(fig)["data"]] == ["bar", "bar"]
