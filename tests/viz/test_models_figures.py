"""viz/models.py: the per-layer parity bars read back: one bar per layer at its difference (a perfect layer at the
log axis' floor), colours by the 1e-5 line, axis titles and the line itself."""

import plotly.graph_objects as go

from core.models.local import EXACT, Parity
from viz import models as figures


def words(key: str, **_) -> str:
    return f"<{key}>"


def test_parity_bars_follow_the_differences():
    parity = Parity((0.0, 3e-7, 2e-3))
    fig = figures.parity_figure(parity, words)
    bar = fig.data[0]
    assert list(bar.x) == [0, 1, 2]
    assert list(bar.y) == [figures.FLOOR, 3e-7, 2e-3]
    assert list(bar.customdata) == [0.0, 3e-7, 2e-3]
    blue, red = bar.marker.color[0], bar.marker.color[2]
    assert bar.marker.color[1] == blue and red != blue
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.title.text == "<parity_layer>" and fig.layout.yaxis.title.text == "<parity_difference>"
    assert [s.y0 for s in fig.layout.shapes] == [EXACT]
    assert go.Figure(fig.to_dict()).to_dict() == fig.to_dict()  # what was built unvalidated passes validation
    assert not parity.exact and parity.max_difference == 2e-3 and parity.layers == 3
