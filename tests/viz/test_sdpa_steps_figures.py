"""viz/sdpa_steps.py: the step figures carry the view's numbers and labels; the saturation figures its curves."""

import functools

import numpy as np
import pytest

from app import i18n
from core.sdpa_steps import CLASSIC_K, CLASSIC_Q, CLASSIC_V, lookup_view, saturation_view, steps_view
from viz.sdpa_steps import lookup_figures, saturation_figures, step_figures


def t(key, /, **fmt):
    return key + "".join(f" {v}" for v in fmt.values())


def test_step_figures_show_each_step():
    view = steps_view(CLASSIC_Q, CLASSIC_K, CLASSIC_V)
    figs = step_figures(view, t)
    assert set(figs) == {"scores", "scaled", "weights", "output"}
    np.testing.assert_allclose(np.array(figs["scores"].data[0].z, dtype=float), view.steps.scores)
    np.testing.assert_allclose(
        np.array(figs["weights"].data[0].z, dtype=float), np.round(view.steps.weights, 4), atol=1e-6
    )
    assert list(figs["output"].data[0].x) == view.v_labels and list(figs["scores"].data[0].y) == view.q_labels
    assert figs["scaled"].layout.title.text == "fig_scaled" and figs["scores"].layout.xaxis.title.text == "key"


def test_saturation_figures_draw_the_curve_and_the_row():
    view = saturation_view(64, 8)
    figs = saturation_figures(view, t)
    scaled, unscaled = figs["entropy"].data
    np.testing.assert_allclose(scaled.y, np.round(view.curve.entropy_scaled, 4))
    np.testing.assert_allclose(unscaled.x, view.curve.d_k)
    assert figs["row"].layout.title.text == "row_title 64" and list(figs["row"].data[0].x) == view.key_labels


def test_titles_and_axes_come_from_the_figure_section():
    words = functools.partial(i18n.text, "en", "sdpa_steps.figure")
    figs = step_figures(steps_view(CLASSIC_Q, CLASSIC_K, CLASSIC_V), words)
    for name in ("scores", "scaled", "weights", "output"):
        assert figs[name].layout.title.text == words(f"fig_{name}")
    assert figs["scores"].layout.xaxis.title.text == words("key")
    assert figs["scores"].layout.yaxis.title.text == words("query")
    # the colour bars' words too: heatmap's English defaults ('weight', 'output') stood on the ja and ko pages
    ja = step_figures(
        steps_view(CLASSIC_Q, CLASSIC_K, CLASSIC_V), functools.partial(i18n.text, "ja", "sdpa_steps.figure")
    )
    assert ja["weights"].data[0].colorbar.title.text == "重み" and "出力" in ja["output"].data[0].hovertemplate
    sat = saturation_figures(saturation_view(64, 8), words)
    assert [tr.name for tr in sat["entropy"].data] == [words("sat_scaled"), words("sat_unscaled")]


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_the_entropy_curves_hover_says_its_unit_in_the_readers_words(lang):
    """The entropy curve's hover said '1.234 nats' in English to a Japanese or Korean reader whose axis, beside it,
    says ナット or 내트: the unit was the builder's own word."""
    words = functools.partial(i18n.text, lang, "sdpa_steps.figure")
    fig = saturation_figures(saturation_view(64, 8), words)["entropy"]
    for trace in fig.data:
        assert "nats" not in trace.hovertemplate and words("sat_unit") in trace.hovertemplate
    assert words("sat_unit") in words("sat_y")  # the unit the axis names


LOG_SCALE = {"en": "log scale", "ja": "対数目盛", "ko": "로그 눈금"}


@pytest.mark.parametrize("lang", sorted(LOG_SCALE))
def test_every_log_axis_of_the_curves_says_so_and_no_linear_one_does(lang):
    # d_k doubles from tick to tick and τ divides every score: both axes are logarithmic, which their words
    # ('d_k', a bare symbol outside the catalog, and 'Temperature τ (scores divided by τ)') did not say
    words = functools.partial(i18n.text, lang, "sdpa_steps.figure")
    sat = saturation_figures(saturation_view(64, 8), words)
    curve = lookup_figures(lookup_view(1, 0.5, ["cat", "dog", "car", "bus"]), words)["curve"]
    logs = []
    for name, fig in (("entropy", sat["entropy"]), ("row", sat["row"]), ("curve", curve)):
        for axis_name in ("xaxis", "yaxis"):
            axis = fig.layout[axis_name]
            if axis.type == "log":
                logs.append((name, axis_name))
            assert (LOG_SCALE[lang] in axis.title.text) == (axis.type == "log"), (name, axis_name, axis.title.text)
    assert logs == [("entropy", "xaxis"), ("curve", "xaxis")]
