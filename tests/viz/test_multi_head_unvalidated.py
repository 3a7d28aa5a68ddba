"""viz/multi_head.chain_figure is built from plain dicts, unvalidated, its subplot grid cached (issue 26: 0.44 s of
figure building per rerun, most of it plotly's add_vline re-walking every shape): what it sends is what a validated
rebuild sends, and its head boundaries are the shapes plotly's own add_vline / add_vrect draw."""

from __future__ import annotations

import json

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core import multi_head as mh
from viz import multi_head as figs


def english(key, /, **fmt):
    return key + "".join(f" {k}={v}" for k, v in sorted(fmt.items()))


def test_chain_figure_is_what_validation_and_plotlys_own_shapes_would_build(minilm):
    walk = mh.layer_walk(minilm, "<b>The</b> cat sat on the mat.", 1)
    for head in (0, walk.n_heads - 1, 0):  # the second 0 reuses the cached grid: nothing of head 11 left in it
        fig = figs.chain_figure(walk, head, english)
        sent = json.loads(fig.to_json())
        assert sent == json.loads(go.Figure(fig.to_dict()).to_json())
        reference = make_subplots(**figs.GRID)  # plotly's own subplot bookkeeping places the shapes
        d_k = walk.head_dim
        for i in range(1, walk.n_heads):
            reference.add_vline(
                x=i * d_k - 0.5, line_width=1, line_color="#444", row=4, col=1, exclude_empty_subplots=False
            )
        reference.add_vrect(x0=head * d_k - 0.5, x1=(head + 1) * d_k - 0.5, line_width=2,
                            line_color=fig.layout.shapes[-1].line.color, row=4, col=1,
                            exclude_empty_subplots=False)  # fmt: skip
        assert json.loads(reference.to_json())["layout"]["shapes"] == sent["layout"]["shapes"]
        assert len(sent["layout"]["shapes"]) == walk.n_heads
        assert sent["layout"]["shapes"][-1]["x0"] == head * d_k - 0.5
