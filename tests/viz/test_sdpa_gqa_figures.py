"""viz/sdpa_gqa.py: the grouped bars, the backends' time and memory figures from the committed benchmark rows (through
core/sdpa_gqa/views.py) and the KV-cache figure of a preset, read back: one bar per series and category, gaps for
missing values, log axes with major ticks only, titles and axis titles from the [sdpa_gqa.figure] catalog section."""

import functools

import pytest

from app import i18n
from core.sdpa_gqa import backends as sb
from core.sdpa_gqa import configs as kvc
from core.sdpa_gqa.views import backends_view, kv_cache_view
from viz.sdpa_gqa import backend_figures, grouped_bars, kv_cache_figure

t = functools.partial(i18n.text, "en", "sdpa_gqa.figure")


def test_grouped_bars_one_bar_per_series_and_gaps_for_missing_values():
    fig = grouped_bars(["n=512", "<n>"], {"naive": [10.0, 50.0], "flash": [None, float("nan")]}, y_title="ms")
    naive, flash = fig.data
    assert list(naive.x) == ["n=512", "&lt;n&gt;"] and list(naive.y) == [10.0, 50.0]
    assert list(flash.y) == [None, None] and list(flash.text) == ["", ""]
    assert list(naive.text) == ["10", "50"]  # few bars: values written on them
    assert fig.layout.barmode == "group" and fig.layout.yaxis.type == "linear" and fig.layout.yaxis.title.text == "ms"
    log = grouped_bars(["a"], {"x": [0.01], "y": [5000.0]}, log_y=True)
    assert log.layout.yaxis.type == "log" and log.layout.yaxis.dtick == 1  # many decades: powers of ten


def test_backend_figures_from_the_committed_rows():
    res = sb.load_results()
    if res is None or not isinstance(res.get("cpu"), dict):
        pytest.skip("no committed CPU run")
    view = backends_view(res["cpu"]["rows"])
    ms, mem = backend_figures(view, t)
    assert [tr.name for tr in ms.data] == list(view.ms)
    for tr in ms.data:
        assert list(tr.x) == view.categories and list(tr.y) == view.ms[tr.name]
    assert ms.layout.title.text == t("ms_title") and ms.layout.yaxis.title.text == t("ms_axis")
    assert mem.layout.title.text == t("mem_title") and mem.layout.yaxis.title.text == t("mem_axis")
    for fig in (ms, mem):
        assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick == 1


@pytest.mark.parametrize("lang, causal", [("ja", "因果"), ("ko", "인과")])
def test_a_causal_shape_is_named_in_the_readers_words(lang, causal):
    """The committed runs' shapes read 'n=4096 causal' under the Japanese and Korean pages' bars (core's notation):
    the mask is said in the reader's words, the sizes and the number type as written."""
    res = sb.load_results()
    if res is None or not isinstance(res.get("cpu"), dict):
        pytest.skip("no committed CPU run")
    view = backends_view(res["cpu"]["rows"])
    assert any("causal" in c.split() for c in view.categories)  # the committed run has causal shapes
    ms, _ = backend_figures(view, functools.partial(i18n.text, lang, "sdpa_gqa.figure"))
    shown = [str(x) for x in ms.data[0].x]
    assert not any("causal" in x for x in shown) and any(x.endswith(causal) or f" {causal} " in x for x in shown)
    assert [x.replace(causal, "causal") for x in shown] == view.categories


@pytest.mark.parametrize("cfg", list(kvc.PRESETS))
def test_kv_cache_figure_is_the_variants_gib(cfg):
    view = kv_cache_view(kvc.PRESETS[cfg], 32768, 2, "float16")
    fig = kv_cache_figure(view, t)
    (bar,) = fig.data
    assert list(bar.y) == view.variant_gib and bar.name == t("col_cache")
    assert [x.endswith(t("this_model")) for x in bar.x] == [r["configured"] for r in view.variants]
    assert fig.layout.title.text == t("cache_title") and fig.layout.yaxis.title.text == t("gib")
    assert fig.layout.yaxis.type == "linear"


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_every_axis_is_titled_in_the_readers_language(lang):
    # the bars' categories ('n=4096 causal', 'GQA (this model)') stood under an untitled axis: what n counts, and
    # that the groups are shapes or attention variants, was said nowhere on the figure
    words = functools.partial(i18n.text, lang, "sdpa_gqa.figure")
    figs = [kv_cache_figure(kv_cache_view(kvc.PRESETS[cfg], 32768, 2, "float16"), words) for cfg in kvc.PRESETS]
    res = sb.load_results()
    if res is not None and isinstance(res.get("cpu"), dict):
        figs += backend_figures(backends_view(res["cpu"]["rows"]), words)
        assert figs[-1].layout.xaxis.title.text == words("shape_axis")
    for fig in figs:
        assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    assert figs[0].layout.xaxis.title.text == words("variant_axis")


def test_a_narrow_log_axis_labels_powers_of_ten_only():
    # 4 .. 50 ms: plotly's 1-2-5 labels (2, 5, 20, 50 between 10 and 100) read as a linear axis
    fig = grouped_bars(["a", "b"], {"x": [4.0, 50.0]}, log_y=True)
    axis = fig.layout.yaxis
    assert axis.type == "log" and axis.dtick == 1 and axis.tickvals is None
    assert list(axis.range) == [0, 2]  # 1, 10 and 100 labelled: the bars lie between two powers of ten
