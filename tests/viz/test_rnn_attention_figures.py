"""viz/rnn_attention: each figure read back: the numbers it was given are the numbers it draws, tokens escaped, the
crossover and the alignment marks where the view puts them."""

import functools

import numpy as np
import pytest

from app import i18n
from core.rnn_attention import compare as cmp
from core.rnn_attention import view as rv
from tests.phone_figures import placed_in_the_way_on_a_phone
from viz import rnn_attention as figs


def T(key, **fmt):
    return key + "".join(f" {k}={v}" for k, v in sorted(fmt.items()))


def sentence():
    return rv.SentenceView(
        source=["<2ja>", "the", "<b>cat</b>", "sleeps", ".", "</s>"],
        output=["猫", "は", "眠る", "。"],
        rows=["猫", "は", "眠る", "。", "</s>"],
        attention=np.eye(5, 6, 2).tolist(),
        marks=[(0, 2), (2, 3), (3, 4)],
        reference=["猫", "は", "眠る", "。"],
        transformer_output=["猫", "は", "眠る", "。"],
        verdict="both_right",
        state_width=128,
        final_width=64,
        attended_numbers=6 * 128,
    )


def test_alignment_figure_draws_the_weights_and_marks_the_grammars_alignment():
    fig = figs.alignment_figure(sentence(), T)
    heat, marks = fig.data[0], fig.data[-1]
    z = np.asarray(heat.z, dtype=np.float64)
    assert z.shape == (5, 6) and np.allclose(z, np.eye(5, 6, 2))
    assert all("<b>" not in str(x) for x in heat.x) and any("&lt;b&gt;" in str(x) for x in heat.x)
    assert list(marks.x) == [heat.x[2], heat.x[3], heat.x[4]]  # on the heatmap's (escaped) categories
    assert list(marks.y) == [heat.y[0], heat.y[2], heat.y[3]]
    # the squares are named: a heatmap is no legend entry, so plotly showed no legend for the one trace beside it
    assert fig.layout.showlegend and marks.name == "grammar_alignment" and marks.showlegend
    assert not placed_in_the_way_on_a_phone(fig.to_plotly_json())


def test_alignment_figure_without_marks_draws_only_the_heatmap():
    view = sentence()
    view = rv.SentenceView(**{**view.__dict__, "marks": []})
    assert [t.type for t in figs.alignment_figure(view, T).data] == ["heatmap"]


def test_gradient_figure_draws_both_series_on_a_log_axis():
    panel = rv.GradientPanel([0, 1, 2], [1.0, 0.9, 0.8], [1.0, 0.1, 0.01], 0.01, 0.8, 10, None, "vanishes")
    fig = figs.gradient_figure(panel, T)
    assert [list(t.y) for t in fig.data] == [[1.0, 0.9, 0.8], [1.0, 0.1, 0.01]]
    assert list(fig.data[0].x) == [0, 1, 2] and fig.layout.yaxis.type == "log"
    # powers of ten only, 0.01 .. 1 (plotly's own 2, 5 labels between them read as a linear axis), a little past
    # both: points lie on 0.01 and 1 (viz.linear_attention.END_PAD)
    assert fig.layout.yaxis.dtick == 1 and list(fig.layout.yaxis.range) == [-2.1, 0.1]
    assert fig.layout.title.text == "gradient_title"
    long = rv.GradientPanel([0, 1], [1.0, 1.0], [1.0, 0.5], 0.5, 1.0, 4, 60, "weaker")
    assert figs.gradient_figure(long, T).layout.title.text == "gradient_long_title n=60"
    # the legend at the figure's foot: 0.25 of the plot below it, it lay on the x axis's title at 390 px
    assert not placed_in_the_way_on_a_phone(fig.to_plotly_json())


def test_timing_figure_draws_the_measured_times_and_steps():
    view = rv.TimingView([8, 16], [1.0, 2.0], [0.2, 0.3], [0.5, 0.6], [16, 32], [2, 2], "cpu", True, 3.3, 0.5, "gru",
                         0.4, "gru")  # fmt: skip
    fig = figs.timing_figure(view, T)
    assert [list(t.y) for t in fig.data] == [[1.0, 2.0], [0.2, 0.3], [0.5, 0.6]]
    assert [list(t.customdata) for t in fig.data] == [[16, 32], [16, 32], [2, 2]]
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.dtick == 1 and list(fig.layout.xaxis.range) == [0, 2]  # 8, 16: 1, 10, 100 labelled
    assert fig.layout.yaxis.dtick == 1 and list(fig.layout.yaxis.range) == [-1, 1]
    assert fig.layout.yaxis.title.text == "axis_cpu_ms"
    older = rv.TimingView([8, 16], [1.0, 2.0], [None, None], [0.5, 0.6], [16, 32], [2, 2], "cpu", False, 3.3, None,
                          "transformer", None, "transformer")  # fmt: skip
    assert len(figs.timing_figure(older, T).data) == 2
    assert not placed_in_the_way_on_a_phone(fig.to_plotly_json())  # the legend at the figure's foot


def test_cost_figure_draws_both_counts_and_the_crossover_at_d():
    view = cmp.cost_view(32, 64)
    fig = figs.cost_figure(view, T)
    assert list(fig.data[0].y) == view.recurrent and list(fig.data[1].y) == view.attention
    lines = [s for s in fig.layout.shapes]
    assert [s.x0 for s in lines] == [64, 32]
    assert any(a.text == "crossover d=64" for a in fig.layout.annotations)
    assert not placed_in_the_way_on_a_phone(fig.to_plotly_json())  # the legend at the figure's foot


LOG_SCALE = {"en": "log scale", "ja": "対数目盛", "ko": "로그 눈금"}


@pytest.mark.parametrize("lang", sorted(LOG_SCALE))
def test_every_log_axis_says_it_is_one_and_no_linear_axis_does(lang):
    # the page reads these figures as ratios ('the gradient at distance 12 is 0.01 x the gradient at distance 0',
    # 'the GRU takes 3.3 x the Transformer's time'); on an axis not said to be logarithmic a hundredfold fall looks
    # like a gentle slope. The lengths' words are the cost figure's too, whose axis is linear.
    words = functools.partial(i18n.text, lang, "rnn_attention.figure")
    panel = rv.GradientPanel([0, 1, 2], [1.0, 0.9, 0.8], [1.0, 0.1, 0.01], 0.01, 0.8, 10, None, "vanishes")
    timing = [
        rv.TimingView(
            [8, 16], [1.0, 2.0], [0.2, 0.3], [0.5, 0.6], [16, 32], [2, 2], "cpu", cpu, 3.3, 0.5, "gru", 0.4, "gru"
        )  # fmt: skip
        for cpu in (True, False)
    ]
    drawn = [figs.gradient_figure(panel, words), *(figs.timing_figure(v, words) for v in timing)]
    drawn.append(figs.cost_figure(cmp.cost_view(32, 64), words))
    logs = 0
    for fig in drawn:
        for axis in (fig.layout.xaxis, fig.layout.yaxis):
            said = LOG_SCALE[lang] in axis.title.text
            assert said == (axis.type == "log"), (axis.title.text, axis.type)
            logs += axis.type == "log"
    assert logs == 5
