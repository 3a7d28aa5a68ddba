"""viz/positions/rope.py: the angles of core.positions.rope's view, pairs counted from 0 as the slider does."""

import numpy as np

from app import i18n
from core.positions import rope
from viz.positions import rope as figures


def t(key, **fmt):
    return i18n.text("en", "positions.figure", key, **fmt)


def test_angles_figure_pair_axis_starts_at_zero():
    v = rope.rotation_view(8, 10000.0, 2)
    ang = rope.angles_view(v.inv_freq, 10, 3)
    fig = figures.angles_figure(ang, t)
    assert list(fig.data[0].x) == [0, 1, 2, 3]  # the pair axis starts at 0, as the slider does
    assert np.all(np.isfinite(np.asarray(fig.data[0].y, dtype=float)))
