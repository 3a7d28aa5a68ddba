"""viz/positions/relative.py: the three figures of Shaw et al.'s relative positions built from core's ShawView
(seeded random Q, K, E), read back: which clipped offset each cell uses, the relative scores and the weights, with
queries on the rows and keys on the columns."""

import numpy as np

from app import i18n
from core.positions import relative
from viz.positions import relative as figures


def t(key, **fmt):
    return i18n.text("en", "positions.figure", key, **fmt)


VIEW = relative.shaw_view(6, 4, 2, 7)
LABELS = [str(i) for i in range(6)]


def axes_are_query_rows_and_key_columns(fig):
    assert fig.layout.xaxis.title.text == t("key_axis") and fig.layout.yaxis.title.text == t("query_axis")
    assert list(fig.data[0].x) == list(fig.data[0].y) == LABELS


def test_offsets_figure_shows_the_clipped_offsets():
    fig = figures.offsets_figure(VIEW, t)
    z = np.array(fig.data[0].z, dtype=float)
    expected = np.clip(np.subtract.outer(np.arange(6), np.arange(6)), -2, 2)  # clip(i - j, -k, k), by hand
    np.testing.assert_array_equal(z, expected)
    assert fig.layout.title.text == t("offset_title")
    axes_are_query_rows_and_key_columns(fig)


def test_relative_scores_figure():
    fig = figures.relative_scores_figure(VIEW, t)
    np.testing.assert_allclose(np.array(fig.data[0].z, dtype=float), np.round(VIEW.relative, 2), atol=1e-6)
    assert fig.layout.title.text == t("s_title")
    axes_are_query_rows_and_key_columns(fig)


def test_weights_figure_rows_are_distributions():
    fig = figures.weights_figure(VIEW, t)
    z = np.array(fig.data[0].z, dtype=float)
    np.testing.assert_allclose(z, np.round(VIEW.weights, 3), atol=1e-6)
    np.testing.assert_allclose(z.sum(1), 1.0, atol=6 * 5e-4)  # 3 decimals per cell
    assert fig.layout.title.text == t("rel_w_title")
    axes_are_query_rows_and_key_columns(fig)
    ja = figures.weights_figure(VIEW, lambda key, **fmt: i18n.text("ja", "positions.figure", key, **fmt))
    assert ja.data[0].colorbar.title.text == "重み"  # was heatmap's English default
