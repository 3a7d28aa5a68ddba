"""viz/positions/alibi.py: the slopes of core.positions.alibi's view on a log axis with major ticks only."""

import numpy as np

from app import i18n
from core.positions import alibi
from tests.references import is_major_tick
from viz.positions import alibi as figures


def t(key, **fmt):
    return i18n.text("en", "positions.figure", key, **fmt)


def test_slopes_figure_one_bar_per_head_on_a_log_axis():
    v = alibi.alibi_view(8, 6, 99)
    fig = figures.slopes_figure(v, t)
    np.testing.assert_allclose(fig.data[0].y, v.slopes)
    assert len(fig.data[0].x) == 8
    axis = fig.to_dict()["layout"]["yaxis"]
    assert axis["type"] == "log" and all(is_major_tick(x) for x in axis["tickvals"])
