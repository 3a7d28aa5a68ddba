"""viz/positions/rope.py: the angles of core.positions.rope's view, pairs counted from 0 as the slider does."""

import functools

import numpy as np
import pytest

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


def test_pooled_angles_figure_draws_the_circular_means_on_position_and_pair_axes():
    from core.positions import rope as rp

    view = rp.pooled_angles(8192, 3072)
    fig = figures.pooled_angles_figure(view, t)
    heat = fig.data[0]
    assert np.asarray(heat.z).shape == (128, 128) and list(heat.y[:2]) == [0, 64] and list(heat.x[:2]) == [0, 12]
    np.testing.assert_allclose(np.asarray(heat.z, dtype=np.float64), np.round(view.angles, 3), atol=1e-6)
    assert "n = 8,192 positions × d = 3,072 (128 × 128 block circular means)" in fig.layout.title.text


def ja(key, **fmt):
    return i18n.text("ja", "positions.figure", key, **fmt)


def test_the_trajectory_axes_are_in_the_readers_words():
    """The rotated pair's circle named its axes 'first coordinate' and 'second coordinate' in every language (the
    circle's own English defaults); they are now the [positions.figure] words, here Japanese."""
    v = rope.rotation_view(8, 10000.0, 2)
    fig = figures.trajectory_figure(rope.angles_view(v.inv_freq, 10, 3), ja)
    x, y = fig.layout.xaxis.title.text, fig.layout.yaxis.title.text
    assert "coordinate" not in x + y, (x, y)
    assert (x, y) == (ja("traj_x"), ja("traj_y"))


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_the_score_by_offset_title_is_in_the_readers_words(lang):
    """The curve's title was 'q_m · k_n  vs  m − n' on every page, the 'vs' the builder's own English."""
    words = functools.partial(i18n.text, lang, "positions.figure")
    fig = figures.check_offset_figure(rope.check_view(rope.rotation_view(8, 10000.0, 2).inv_freq, 6, 0), words)
    assert "vs" not in fig.layout.title.text and fig.layout.title.text == words("offset_scores_title")
