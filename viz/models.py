"""The figure of /models: how far each layer of a learner's own model is from transformers' eager attention."""

from __future__ import annotations

import math
from collections.abc import Callable

import plotly.graph_objects as go

from core.models.local import EXACT, Parity

from .linear_attention import major_log_ticks

FLOOR = 1e-12  # a layer that matches to the last bit is drawn at this height on the log axis


def parity_figure(parity: Parity, t: Callable[..., str]) -> go.Figure:
    """One bar per layer: the largest |ours − eager| over its heads and real query rows, on a log axis, with the
    1e-5 line under which the page calls the model exact. t: the [models.figure] words."""
    layers = list(range(parity.layers))
    heights = [max(d, FLOOR) for d in parity.per_layer]
    bars = {
        "type": "bar",
        "x": layers,
        "y": heights,
        "customdata": list(parity.per_layer),
        "hovertemplate": t("parity_hover") + "<extra></extra>",
        "marker": {"color": ["#2a6fdb" if d <= EXACT else "#d1495b" for d in parity.per_layer]},
    }
    line = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": EXACT, "y1": EXACT, "line": {"dash": "dash"}}
    layout = {
        "title": {"text": t("parity_title")},
        "xaxis": {"title": {"text": t("parity_layer")}, "dtick": 1},  # layers are whole numbers
        # powers of ten only, the exact line's 1e-5 within the range
        "yaxis": {"title": {"text": t("parity_difference")}, "type": "log", **major_log_ticks([*heights, EXACT])},
        "shapes": [line],
        # on a log axis an annotation's y is in decades: log10 of the value
        "annotations": [
            {
                "xref": "paper",
                "x": 1,
                "xanchor": "right",
                "yref": "y",
                "y": math.log10(EXACT),
                "yanchor": "bottom",
                "text": t("parity_line"),
                "showarrow": False,
            }
        ],
        "height": 320,
        "margin": {"t": 50, "b": 40},
    }
    # plain dicts without plotly's per-property validation (a class loads this page together)
    return go.Figure({"data": [bars], "layout": layout}, _validate=False)
