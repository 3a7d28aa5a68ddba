"""viz/linear_attention.py: every log axis carries major ticks only (checked on the figure's layout: dtick 1 = one
tick per power of ten, "D2" = 1-2-5), the traces carry the view's numbers, and words come from the catalog."""

import functools
import math

import pytest

from app import i18n
from core.linear_attention import measure
from core.linear_attention.exp_kernel import exp_kernel_view
from core.linear_attention.views import associativity_view, generation_view, implied_view, timing_view
from viz import linear_attention as vl


def t(key, /, **fmt):
    return i18n.text("en", "linear_attention.figure", key, **fmt)


def log_axes(fig):
    axes = [fig.layout.xaxis, fig.layout.yaxis]
    assert all(a.type == "log" for a in axes)
    return axes


def test_major_log_ticks_rule():
    assert vl.major_log_ticks([1e5, 1e13]) == {"dtick": 1}
    # the exp kernel's error axis (10^-15..1): every third power, sixteen labels ran into each other on a phone
    assert vl.major_log_ticks([1e-15, 1.0]) == {"dtick": 3}
    # narrow axes: powers of ten only (1-2-5 labels read as a linear axis), the range widened to whole decades
    assert vl.major_log_ticks([256, 16384]) == {"dtick": 1, "range": [2, 5]}
    assert vl.major_log_ticks([4.0, 50.0]) == {"dtick": 1, "range": [0, 2]}
    assert vl.major_log_ticks([None, float("nan"), 0, -1, 3.0]) == {"dtick": 1, "range": [0, 1]}
    assert vl.major_log_ticks([10.0]) == {"dtick": 1, "range": [0.95, 2]}  # 10 on the low end: see below
    assert vl.major_log_ticks([]) == {"dtick": 1}


def test_a_value_at_a_widened_axiss_end_gets_room_for_its_marker():
    """A narrow axis is widened to whole decades; a value exactly at a power of ten (a length of 100, 1 ms) stood on
    the frame, its marker cut in half (plotly pads a range it sets itself, not one it is given). That end moves out by
    END_PAD of the range; an end no value is near stays at its power of ten."""
    assert vl.major_log_ticks([100, 1000]) == {"dtick": 1, "range": [1.95, 3.05]}
    assert vl.major_log_ticks([100, 500]) == {"dtick": 1, "range": [1.95, 3]}
    assert vl.major_log_ticks([1.05, 50]) == {"dtick": 1, "range": [-0.1, 2]}  # 0.02 decades from 1: within a pad
    assert vl.major_log_ticks([2, 99.9]) == {"dtick": 1, "range": [0, 2.1]}
    for values in ([1, 10], [0.001, 0.1], [3, 7, 100], [1e-6, 4e-5], [1, 300]):
        low, high = vl.major_log_ticks(values)["range"]
        logs = [math.log10(v) for v in values]
        assert min(logs) - low >= vl.END_PAD * (high - low) * 0.9 and high - max(logs) >= vl.END_PAD * 0.9 * (
            high - low
        )
        assert math.floor(high) - math.ceil(low) >= 1  # two powers of ten at least still labelled


def test_cost_figure():
    sizes = [2**k for k in range(4, 18)]
    view = associativity_view(4096, 64, sizes)
    fig = vl.cost_figure(view, t)
    x, y = log_axes(fig)
    assert x.dtick == 1 and y.dtick == 1  # n over 3.9 decades, multiply-adds over 9
    assert list(fig.data[0].y) == view.curves["quadratic"] and list(fig.data[1].y) == view.curves["linear"]
    assert fig.layout.title.text == t("cost_title", d=64)


def test_cost_figure_ticks_follow_the_range():
    fig = vl.cost_figure(associativity_view(64, 16, [16, 32, 64]), t)
    assert fig.layout.xaxis.dtick == 1 and list(fig.layout.xaxis.range) == [1, 2]  # 16..64: 10 and 100 labelled
    wide = vl.cost_figure(associativity_view(64, 16, [2**k for k in range(4, 24)]), t)
    assert wide.layout.xaxis.dtick == 1


def test_timing_figure_draws_the_upper_half_fit():
    res = measure.load_results()
    if res is None:
        pytest.skip("no results/bench_linear.json")
    view = timing_view(res["scaling"]["rows"], res["scaling"]["slopes"])
    fig = vl.timing_figure(view, t)
    for axis in log_axes(fig):
        assert axis.dtick in (1, 3)
    fits = [tr for tr in fig.data if tr.line.dash == "dash"]
    assert len(fits) == 2
    assert fits[1].name.endswith(t("fit_label", slope=view.large["linear"], fit_from=view.large["fit_from"]))
    assert min(fits[1].x) == pytest.approx(view.large["fit_from"]) and max(fits[1].x) == pytest.approx(max(view.sizes))


def test_generation_and_exp_kernel_figures():
    res = measure.load_results()
    if res is not None:
        fig = vl.generation_figure(generation_view(res["generation"]["rows"]), t)
        assert all(a.dtick in (1, 3) for a in log_axes(fig))
        assert len(fig.data) == 3
    view = exp_kernel_view(4, 1.0)
    fig = vl.exp_kernel_figure(view, t)
    x, y = log_axes(fig)
    assert x.dtick == 3 and y.dtick == 3  # counts and errors span over nine decades: a tick every third power
    assert list(fig.data[0].x) == view.taylor_counts
    assert fig.data[0].text[3] == t("ek_order", m=3)
    # the legend at the figure's foot, under the x axis's labels and title (at 390 px in ja it lay over the title)
    assert (fig.layout.legend.yref, fig.layout.legend.y, fig.layout.legend.yanchor) == ("container", 0, "bottom")


def test_implied_figures():
    view = implied_view(5, 4, 1.0, True, 0)
    soft, lin = vl.implied_figures(view, t)
    assert soft.layout.title.text == t("softmax_title") and lin.layout.title.text == t("linear_title")
    ja = vl.implied_figures(view, functools.partial(i18n.text, "ja", "linear_attention.figure"))
    assert [f.data[0].colorbar.title.text for f in ja] == ["重み", "重み"]  # was heatmap's English default


TOKENS = {"en": "tokens", "ja": "トークン", "ko": "토큰"}


@pytest.mark.parametrize("lang", sorted(TOKENS))
def test_the_lengths_axis_gives_its_unit_as_the_contexts_does(lang):
    # n counts tokens, as the generation figure's context L does ('context L (tokens, log scale)'); the cost and
    # timing figures' lengths said only 'sequence length n (log scale)'
    words = functools.partial(i18n.text, lang, "linear_attention.figure")
    cost = vl.cost_figure(associativity_view(4096, 64, [2**k for k in range(4, 18)]), words)
    assert TOKENS[lang] in cost.layout.xaxis.title.text
    assert TOKENS[lang] in words("ctx_axis")
    res = measure.load_results()
    if res is not None:
        timing = vl.timing_figure(timing_view(res["scaling"]["rows"], res["scaling"]["slopes"]), words)
        assert TOKENS[lang] in timing.layout.xaxis.title.text
