"""viz/positions/sinusoidal.py: figures from core.positions.sinusoidal views, read back: the encoding matrix, the
variation per dimension on a log axis with major ticks only and its threshold label on its line."""

import functools

import numpy as np
import pytest

from app import i18n
from core.positions import sinusoidal
from tests.references import is_major_tick
from viz.positions import sinusoidal as figures


def t(key, **fmt):
    return i18n.text("en", "positions.figure", key, **fmt)


def test_variation_figure_log_axis_covers_the_values_with_major_ticks():
    v = sinusoidal.sparsity_view(8192, 512, 10000.0, 0.01)
    axis = figures.variation_figure(v, t).to_dict()["layout"]["yaxis"]
    assert axis["type"] == "log" and axis["tickmode"] == "array"
    assert len(axis["tickvals"]) >= 2 and all(is_major_tick(x) for x in axis["tickvals"])
    assert len(axis["ticktext"]) == len(axis["tickvals"])
    positive = v.variation[v.variation > 0]
    assert min(axis["tickvals"]) <= positive.min() and max(axis["tickvals"]) >= positive.max()


def test_threshold_label_sits_on_its_line_on_a_log_axis():
    """plotly reads an annotation's y on a log axis as log10(value): the label must be placed there by hand."""
    v = sinusoidal.sparsity_view(128, 512, 10000.0, 0.001)
    fig = figures.variation_figure(v, t).to_dict()["layout"]
    (line,) = fig["shapes"]
    (note,) = fig["annotations"]
    assert line["y0"] == line["y1"] == 0.001
    assert note["y"] == pytest.approx(-3.0) and note["text"] == t("threshold")


def test_pair_circle_figure_is_one_sin_cos_pair():
    v = sinusoidal.collision_view(20, 16, 10000.0, 1)
    fig = figures.pair_circle_figure(v, t)
    path = fig.data[1]
    np.testing.assert_allclose(np.hypot(path.x, path.y), 1.0, atol=1e-6)  # (sin, cos) of one frequency: radius 1
    assert len(path.x) == 20


def test_pooled_encoding_figure_draws_the_block_means_on_position_and_dimension_axes():
    view = sinusoidal.pooled_encoding(8192, 3072)
    fig = figures.pooled_encoding_figure(view, t)
    heat = fig.data[0]
    assert np.asarray(heat.z).shape == (128, 128)
    np.testing.assert_allclose(np.asarray(heat.z, dtype=np.float64), np.round(view.pe, 3), atol=1e-6)
    assert list(heat.y[:2]) == [0, 64] and list(heat.x[:2]) == [0, 24]  # blocks of 64 positions x 24 dimensions
    assert "n = 8,192 positions × d = 3,072 dimensions, as 128 × 128 block means" in fig.layout.title.text


LOG_SCALE = {"en": "log scale", "ja": "対数目盛", "ko": "로그 눈금"}


@pytest.mark.parametrize("lang", sorted(LOG_SCALE))
def test_variation_axis_says_it_is_logarithmic(lang):
    # the page counts the columns that vary by less than 1% of their range, against a threshold drawn on this axis:
    # logarithmic, which its words ('(max − min) / 2 over the context') did not say
    words = functools.partial(i18n.text, lang, "positions.figure")
    layout = figures.variation_figure(sinusoidal.sparsity_view(8192, 512, 10000.0, 0.01), words).layout
    assert layout.yaxis.type == "log" and LOG_SCALE[lang] in layout.yaxis.title.text
    assert LOG_SCALE[lang] not in layout.xaxis.title.text


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_the_collision_figures_value_axis_is_in_the_readers_language(lang):
    # its y axis came from the builder's default, 'sin(position × ω)', English on a Japanese or Korean page
    words = functools.partial(i18n.text, lang, "positions.figure")
    layout = figures.collision_figure(sinusoidal.collision_view(20, 16, 10000.0, 1), words).layout
    assert layout.yaxis.title.text == words("sine_axis") and "position" not in layout.yaxis.title.text
    assert layout.xaxis.title.text == words("position")
