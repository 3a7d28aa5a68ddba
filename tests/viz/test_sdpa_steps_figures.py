"""viz/sdpa_steps.py: the step figures carry the view's numbers and labels; the saturation figures its curves."""

import functools

import numpy as np

from app import i18n
from core.sdpa_steps import CLASSIC_K, CLASSIC_Q, CLASSIC_V, saturation_view, steps_view
from viz.sdpa_steps import saturation_figures, step_figures


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
