"""viz/positions/common.curves (every curve of /positions and /rope-scaling) is built from plain dicts, unvalidated
(issue 26): what it sends is what a validated rebuild sends, and its reference lines are the shapes plotly's own
add_vline / add_hline draw."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from viz.positions import common
from viz.positions.log_axis import log_ticks

X = np.arange(1, 300)
SERIES = {"<b>base</b>": np.exp(-X / 80.0) + 0.1, "scaled": np.exp(-X / 160.0) + 0.1}
CASES = [
    dict(),
    dict(log_x=True, markers=True),
    dict(log_y=True, bands={"scaled": (SERIES["scaled"] * 0.9, SERIES["scaled"] * 1.1)}),
    dict(vlines=[(64, "L₀"), (256, "L")], hlines=[(0.5, "half")], log_x=True, log_y=True, height=300),
    dict(x_per_series={"scaled": X * 2}, vlines=[(10, "ten")]),
]


def sent(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(sorted(c)) or "plain")
def test_curves_are_what_validation_and_plotlys_own_lines_would_build(case):
    fig = common.curves(X, SERIES, "title", "position", "value", **case)
    out = sent(fig)
    assert out == sent(go.Figure(fig.to_dict()))
    reference = go.Figure()
    for value, _ in case.get("vlines", []):
        reference.add_vline(x=value, line_dash="dash", line_color="#555")
    for value, _ in case.get("hlines", []):
        reference.add_hline(y=value, line_dash="dot", line_color="#888")
    assert out["layout"].get("shapes", []) == sent(reference)["layout"].get("shapes", [])
    assert len(out["layout"].get("annotations", [])) == len(case.get("vlines", [])) + len(case.get("hlines", []))
    if case.get("log_x"):
        assert out["layout"]["xaxis"]["type"] == "log"
        assert (
            out["layout"]["xaxis"]["tickvals"]
            == log_ticks(np.concatenate([X, [v for v, _ in case.get("vlines", [])]]))[0]
        )
    assert "<b>" not in json.dumps(out["data"])  # names made safe
