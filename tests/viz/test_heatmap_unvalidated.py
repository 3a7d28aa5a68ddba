"""viz/heatmap.py builds its figures without plotly's validation (issue 26: half of /masks' rerun under load): what
it sends is what a validated rebuild of the same figure sends, named colour scales included."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from viz import heatmap


def sent(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())  # what st.plotly_chart hands the browser


def validated_rebuild(fig: go.Figure) -> dict:
    return sent(go.Figure(fig.to_dict()))  # every property through plotly's validators


AXES = dict(x_title="key axis", y_title="query axis", value_name="number")  # as a page hands its own words
CELLS = dict(x_title="key axis", y_title="query axis", allowed_name="seen", masked_name="hidden")
CASES = [
    dict(n=3, masked=False, kw={}),
    dict(n=5, masked=True, kw=dict(title="causal", zmax=1.0, show_values=True, height=300)),
    dict(n=12, masked=True, kw=dict(colorscale="Viridis", decimals=2, value_name="p")),
    dict(n=45, masked=True, kw=dict(zmin=None, x_title="k", y_title="q")),  # no crosses above 40 x 40
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"n{c['n']}-masked{c['masked']}")
def test_attention_heatmap_is_what_validation_would_build(case):
    n, rng = case["n"], np.random.default_rng(case["n"])
    weights = rng.random((n, n))
    masked = np.triu(np.ones((n, n), dtype=bool), 1) if case["masked"] else None
    labels = [f"tok{i}<b>" for i in range(n)]  # markup in a label is made safe before it reaches the figure
    fig = heatmap.attention_heatmap(weights, labels, labels, masked, **{**AXES, **case["kw"]})
    assert sent(fig) == validated_rebuild(fig)
    assert len(fig.data) == (2 if case["masked"] else 1)


def test_matrix_heatmap_is_what_validation_would_build():
    fig = heatmap.matrix_heatmap(np.linspace(-1, 1, 12).reshape(3, 4), list("abc"), list("wxyz"), title="Q", **AXES)
    assert sent(fig) == validated_rebuild(fig)


def test_named_colour_scales_are_sent_as_stops():
    # plotly.js has its own scales with the same names that look different: a name must never reach the browser
    fig = heatmap.attention_heatmap(np.eye(3), list("abc"), list("abc"), **AXES)
    scale = sent(fig)["data"][0]["colorscale"]
    assert isinstance(scale, list) and scale[0] == [0.0, "rgb(247,251,255)"]  # plotly.py's Blues (ColorBrewer)


def test_the_figure_can_still_be_changed_by_callers():
    fig = heatmap.attention_heatmap(np.eye(3), list("abc"), list("abc"), **AXES)
    fig.update_layout(height=123)
    fig.add_shape(type="rect", x0=0, x1=1, y0=0, y1=1)
    assert fig.layout.height == 123 and len(fig.layout.shapes) == 1


@pytest.mark.parametrize("n", [4, 45])  # with and without the per-cell marks (drawn up to 40 x 40)
def test_mask_figure_is_what_validation_would_build(n):
    from viz import masks

    allowed = np.tril(np.ones((n, n), dtype=bool))
    labels = [f"t{i}" for i in range(n)]
    for marks in (("", masks.MASKED_MARK), ("1", "0")):
        fig = masks.mask_figure(allowed, labels, labels, title="causal", marks=marks, **CELLS)
        assert sent(fig) == validated_rebuild(fig)
        assert [t.type for t in fig.data] == ["heatmap", "scatter", "heatmap", "scatter"]
