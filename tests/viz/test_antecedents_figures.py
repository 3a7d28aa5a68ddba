"""viz/antecedents.py (and the bars of viz/bars.py it draws with): the head ranking, the held-out accuracy bars from
the committed results file through core/antecedents/view.py, and the per-head accuracy map, read back from the
figures' trace data."""

import functools
import html

import numpy as np
import pytest

from app import i18n
from core.antecedents import view
from viz import antecedents as figures

t = functools.partial(i18n.text, "en", "antecedents.figure")


def test_ranking_figure_groups_each_top_heads_weight_on_every_candidate():
    ranking = view.Ranking(
        heads=[(5, 11, 0.7), (2, 3, 0.4), (0, 0, 0.1)],
        shown=np.array([[0.7, 0.1], [0.4, 0.3]]),
        names=["cat", "<b>mat</b>"],
    )
    fig = figures.ranking_figure(ranking, t, "it", 0)
    assert [tr.type for tr in fig.data] == ["bar", "bar"]
    assert [tr.name for tr in fig.data] == ["cat", "&lt;b&gt;mat&lt;/b&gt;"]  # words are escaped, never markup
    assert list(fig.data[0].y) == ["L5 H11", "L2 H3"] and fig.data[0].orientation == "h"
    assert list(fig.data[0].x) == [0.7, 0.4] and list(fig.data[1].x) == [0.1, 0.3]
    assert html.unescape(fig.layout.title.text) == t("ranking_title", p="it", c="cat", n=3)  # escaped as text
    assert fig.layout.xaxis.title.text == t("weight_axis") and fig.layout.barmode == "group"
    assert fig.layout.yaxis.autorange == "reversed"  # the best head on top


def test_accuracy_figure_from_the_committed_results():
    results = view.load_results()
    if results is None:
        pytest.skip("no results/antecedents.json")
    bars, n_held = view.accuracy_bars(results)
    names = {key: key for key in results["models"]}
    labels = figures.bar_labels(bars, names, t)
    assert len(labels) == len(bars)
    for bar, label in zip(bars, labels):
        expect = t("bar_head", name=bar.model, l=bar.head[0], h=bar.head[1]) if bar.kind == "head" else None
        assert label == (expect or t("bar_choice", name=bar.model))
    fig = figures.accuracy_figure(bars, t, labels, n_held)
    (trace,) = fig.data
    assert trace.type == "bar" and list(trace.y) == labels
    np.testing.assert_allclose(trace.x, np.round([b.accuracy for b in bars], 3))
    # the whiskers reach the 95% interval on each side
    np.testing.assert_allclose(np.add(trace.x, trace.error_x.array), [b.high for b in bars], atol=2e-3)
    np.testing.assert_allclose(np.subtract(trace.x, trace.error_x.arrayminus), [b.low for b in bars], atol=2e-3)
    assert fig.layout.title.text == t("bars_title", n=n_held) and fig.layout.xaxis.title.text == t("acc_axis")
    assert list(fig.layout.xaxis.range) == [0, 1]
    chance = [s for s in fig.layout.shapes if s.type == "line"]
    assert len(chance) == 1 and chance[0].x0 == 0.5 and fig.layout.annotations[0].text == t("chance")


def test_per_head_figure_is_the_layer_by_head_accuracy_centred_on_chance():
    accuracy = np.array([[0.5, 0.75, 0.25], [1.0, 0.0, 0.6]])
    fig = figures.per_head_figure(accuracy, t, "MiniLM")
    (heat,) = [tr for tr in fig.data if tr.type == "heatmap"]
    np.testing.assert_allclose(np.array(heat.z, dtype=float), accuracy, atol=1e-6)
    assert list(heat.y) == ["0", "1"] and list(heat.x) == ["0", "1", "2"]
    assert heat.zmid == 0.5
    assert fig.layout.xaxis.title.text == t("head") and fig.layout.yaxis.title.text == t("layer")
    assert fig.layout.title.text == t("per_head_title", name="MiniLM")


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_rankings_rows_say_what_they_are(lang):
    # the rows, 'L5 H11' in every language, stood beside an untitled axis: nothing said that L is the layer, H the
    # head, nor that the best comes first
    words = functools.partial(i18n.text, lang, "antecedents.figure")
    ranking = view.Ranking(heads=[(5, 11, 0.7), (2, 3, 0.4)], shown=np.array([[0.7, 0.1], [0.4, 0.3]]),
                           names=["cat", "mat"])  # fmt: skip
    fig = figures.ranking_figure(ranking, words, "it", 0)
    assert fig.layout.yaxis.title.text == words("heads_axis") and "L" in fig.layout.yaxis.title.text
