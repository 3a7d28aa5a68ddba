"""viz/rope_scaling.py: figures from core.rope_scaling.formulas views, read back: the computed angles on
power-of-two ticks, and log axes that carry major ticks (1, 2, 5 x 10^k) only."""

import functools

import numpy as np
import pytest

from app import i18n
from core.rope_scaling import experiment, formulas
from tests.references import is_major_tick
from viz import rope_scaling as figures


def t(key, /, **fmt):
    return key


def test_resolution_figure_plots_the_computed_angles_on_power_of_two_ticks():
    view = formulas.resolution_view(4.0)
    res = view.angles
    fig = figures.resolution_figure(view, t, "fastest_pair")
    for trace in fig.data:
        np.testing.assert_allclose(trace.y, np.asarray(res[trace.name]["fastest_pair"], dtype=np.float32))
        np.testing.assert_allclose(trace.x, formulas.RES_FACTORS)
    ticks = list(fig.layout.xaxis.tickvals)
    assert ticks[0] == formulas.RES_FACTORS[0] and ticks[-1] == pytest.approx(formulas.RES_FACTORS[-1])
    assert all(b == 2 * a for a, b in zip(ticks, ticks[1:]))
    # the angles are labelled at powers of ten only, at least two of them (1-2-5 labels read as a linear axis)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.dtick == 1
    low, high = fig.layout.yaxis.range
    assert (
        high - low >= 1
        and 10.0**low <= min(min(tr.y) for tr in fig.data)
        and max(max(tr.y) for tr in fig.data) <= 10.0**high
    )


def test_wavelength_and_decay_figures_have_major_log_ticks():
    freq, decay = formulas.frequency_view(4.0, 4 * 8192), formulas.decay_view(4.0, 20000)
    for fig, axis in ((figures.wavelength_figure(freq, t), "yaxis"), (figures.decay_figure(decay, t), "xaxis")):
        layout = fig.to_dict()["layout"][axis]
        assert layout["type"] == "log" and layout["tickmode"] == "array"
        assert len(layout["tickvals"]) >= 2 and all(is_major_tick(v) for v in layout["tickvals"])


def test_loss_figure_titles_itself_from_the_bucket_in_the_figure_section():
    words = functools.partial(i18n.text, "en", "rope_scaling.figure")
    lengths = sorted(experiment.results_by_length())
    if not lengths:
        pytest.skip("no committed long-context results")
    view = experiment.experiment_view(lengths[0])
    bucket = view.results["bucket"]
    fig = figures.loss_figure(view.loss, words, bucket)
    assert fig.layout.title.text == words("loss_title", b=bucket)
    assert fig.layout.xaxis.title.text == words("position") and fig.layout.yaxis.title.text == words("loss")
    assert [tr.name for tr in fig.data if tr.mode and "lines" in tr.mode] == [r["label"] for r in view.loss.runs]
    live = figures.loss_figure(view.loss, words, 128, live=True)
    assert live.layout.title.text == words("live_title", b=128)


@pytest.mark.parametrize("lang, plain", [("ja", "スケーリングなし"), ("ko", "스케일링 없음")])
def test_the_plain_run_is_named_in_the_readers_words(lang, plain):
    """Plain RoPE's curve was 'no scaling' (the results files' label) on the Japanese and Korean pages; the scaled
    runs keep their method's name and factor ('yarn x4')."""
    lengths = sorted(experiment.results_by_length())
    if not lengths:
        pytest.skip("no committed long-context results")
    view = experiment.experiment_view(lengths[0])
    fig = figures.loss_figure(view.loss, functools.partial(i18n.text, lang, "rope_scaling.figure"), 1024)
    names = [tr.name for tr in fig.data if tr.mode and "lines" in tr.mode]
    assert plain in names and "no scaling" not in names and "yarn x4" in names


LOG_SCALE = {"en": "log scale", "ja": "対数目盛", "ko": "로그 눈금"}


@pytest.mark.parametrize("lang", sorted(LOG_SCALE))
def test_every_log_axis_says_it_is_one_in_every_language(lang):
    # a log axis read as linear turns a halving into a constant step: the page's distance and scale factor said so,
    # the wavelengths' and the angles' axes (log too, the angles' on the same figure as the factor's) did not
    words = functools.partial(i18n.text, lang, "rope_scaling.figure")
    freq, decay = formulas.frequency_view(4.0, 4 * 8192), formulas.decay_view(4.0, 20000)
    res = formulas.resolution_view(4.0)
    figs = {
        "wavelength": figures.wavelength_figure(freq, words),
        "ratio": figures.ratio_figure(freq, words),
        "decay": figures.decay_figure(decay, words),
        "resolution": figures.resolution_figure(res, words, "fastest_pair"),
    }
    logs = []
    for name, fig in figs.items():
        for axis in ("xaxis", "yaxis"):
            layout = fig.layout[axis]
            if layout.type == "log":
                logs.append((name, axis))
                assert LOG_SCALE[lang] in layout.title.text, (name, axis, layout.title.text)
            else:
                assert LOG_SCALE[lang] not in (layout.title.text or ""), (name, axis)
    assert ("wavelength", "yaxis") in logs and ("resolution", "yaxis") in logs
