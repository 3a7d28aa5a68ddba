"""viz/moe's expert-load bars are built from plain dicts, unvalidated (issue 26): what they send is what a validated
rebuild sends, and their reference lines with labels are what plotly's own add_hline draws."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from viz import moe


def words(key, /, **fmt):
    return key + "".join(f" {v}" for v in fmt.values())


def sent(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


@pytest.mark.parametrize("capacity", [None, 0.3])
def test_load_bars_are_what_validation_and_plotlys_add_hline_would_build(capacity):
    loads = {"<b>balanced</b>": np.full(8, 1 / 8), "collapsed": np.array([0.6, 0.3, 0.1, 0, 0, 0, 0, 0])}
    fig = moe._load_bars(loads, words, "load", capacity)
    out = sent(fig)
    assert out == sent(go.Figure(fig.to_dict()))
    reference = go.Figure()
    reference.add_hline(y=1 / 8, line_dash="dash", line_color="#555", annotation_text="uniform 1/8",
                        annotation_position="top left")  # fmt: skip
    if capacity is not None:
        reference.add_hline(y=capacity, line_dash="dot", line_color=moe.RED, annotation_text="capacity_line",
                            annotation_position="top right")  # fmt: skip
    ref = sent(reference)["layout"]
    assert out["layout"]["shapes"] == ref["shapes"] and out["layout"]["annotations"] == ref["annotations"]
    assert "<b>" not in json.dumps(out["data"])  # series names made safe
