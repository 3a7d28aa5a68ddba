"""viz/positions/learned.py: the cosine-similarity map of a (random, seeded) position table built by
core.positions.learned, and its mean by distance with the min-max band, read back from the figures."""

import numpy as np
import torch

from app import i18n
from core.positions import learned
from viz.positions import learned as figures


def t(key, **fmt):
    return i18n.text("en", "positions.figure", key, **fmt)


def test_similarity_figure_is_the_views_matrix_on_position_axes():
    view = learned.table_view(torch.randn(40, 8, generator=torch.Generator().manual_seed(0)), 30)
    fig = figures.similarity_figure(view, t)
    (heat,) = fig.data
    np.testing.assert_allclose(np.array(heat.z, dtype=float), np.round(view.shown, 3), atol=1e-6)
    assert np.array(heat.z).shape == (30, 30)
    np.testing.assert_allclose(heat.x, view.axis) and np.testing.assert_allclose(heat.y, view.axis)
    assert (heat.zmin, heat.zmax) == (-1.0, 1.0)
    assert fig.layout.xaxis.title.text == fig.layout.yaxis.title.text == t("position")
    assert fig.layout.title.text == t("sim_title")  # not pooled at 30 positions


def test_a_pooled_view_says_so_in_the_title():
    view = learned.table_view(torch.randn(600, 8, generator=torch.Generator().manual_seed(1)), 512)
    assert view.factor == 2
    assert figures.similarity_figure(view, t).layout.title.text == t("sim_title") + t("pooled", k=2)


def test_by_distance_figure_is_the_mean_with_its_range():
    view = learned.table_view(torch.randn(20, 4, generator=torch.Generator().manual_seed(2)), 20)
    fig = figures.by_distance_figure(view, t)
    band, mean = fig.data
    by = view.by_distance
    np.testing.assert_allclose(mean.x, by["distance"])
    np.testing.assert_allclose(mean.y, by["mean"], atol=1e-6)
    np.testing.assert_allclose(band.y, np.concatenate([by["max"], by["min"][::-1]]), atol=1e-6)
    assert mean.name == t("mean")
    assert fig.layout.xaxis.title.text == t("distance") and fig.layout.yaxis.title.text == t("similarity")
