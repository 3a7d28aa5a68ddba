"""The /moe page headless: the balance bounds it states (issue #19: N/k and N/k - 1 under top-k routing, not N and
N - 1) in every language, its figures against core.moe on the same text, and links that keep their settings."""

import numpy as np
import pytest

from app import i18n
from core import moe
from core.moe import views
from tests.apptest_helpers import count_builds, figure_traces, open_view, plotted_values

TEXT = "The little cat sees a big dog. She runs to the park quickly, and they play together!"


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_page_states_the_top_k_bounds(lang):
    at = open_view("moe", {"layer": "1"}, state={"lang": lang})
    bounds = moe.balance_bounds(8, 2)
    assert (bounds.switch_max, bounds.deviation_max) == (4.0, 3.0)  # the hand-worked maxima
    expected = i18n.text(lang, "moe", "bounds_note", n=8, k=2, load=0.5, switch=4.0, dev=3.0)
    assert expected in [c.value for c in at.caption]
    helps = {m.label: m.help for m in at.metric}
    switch_help = helps[i18n.text(lang, "moe", "m_switch")]
    dev_help = helps[i18n.text(lang, "moe", "m_dev")]
    assert switch_help == i18n.text(lang, "moe", "m_switch_help", n=8, k=2, max=4.0) and "= 4" in switch_help
    assert dev_help == i18n.text(lang, "moe", "m_dev_help", n=8, k=2, max=3.0) and "= 3" in dev_help


def test_page_figures_are_core_routing_of_the_text_and_links_keep_their_settings(moe_variants):
    params = {"ckpt": "collapsed", "layer": "3", "cf": "0.5", "text": TEXT}
    at = open_view("moe", params)
    assert at.slider(key="layer").value == 3 and at.slider(key="cf").value == 0.5
    assert at.selectbox(key="ckpt").value == "collapsed" and at.text_area(key="text").value == TEXT
    assert not [w.value for w in at.warning if "Ignored link parameters" in w.value]
    runs = {v: views.run_text(m, TEXT) for v, m in moe_variants.items()}
    view = views.text_routing(runs, "collapsed", 3, 0.5)
    # The router heatmap holds the core routing's probabilities (rounded to 3 decimals for the browser).
    sent = figure_traces(at, 0)[0]["z"]  # {"dtype", "bdata", "shape": "rows, cols"}: the flat array is enough here
    z = plotted_values({"dtype": sent["dtype"], "bdata": sent["bdata"]}).reshape(view.probs.shape)
    np.testing.assert_allclose(z, np.round(view.probs, 3), atol=1e-6)
    # An independent route of the same layer's router logits gives the same load and dropped count.
    model = moe_variants["collapsed"]
    logits = model.run(model.tokenize([TEXT])).router_logits[3]
    r = moe.route_tokens(logits, 2, capacity_factor=0.5)
    np.testing.assert_allclose(view.load, moe.expert_load(r.top_k_index, 8).numpy())
    assert view.n_dropped == int((~r.kept).sum()) and view.capacity == r.capacity
    assert any(m.value == f"{view.n_dropped} / {view.n_assignments}" for m in at.metric)
    assert view.switch_loss <= view.bounds.switch_max and view.deviation <= view.bounds.deviation_max
    # The comparison bars: each checkpoint's load on the same text and layer, from its own routing.
    other = moe_variants["balanced"]
    index = moe.route_tokens(other.run(other.tokenize([TEXT])).router_logits[3], 2).top_k_index
    np.testing.assert_allclose(view.load_by_variant["balanced"], moe.expert_load(index, 8).numpy())
    assert (
        views.run_text(model, " \n ") is None and views.text_routing({"collapsed": None}, "collapsed", 3, 0.5) is None
    )


def test_blank_text_still_shows_the_held_out_parts():
    at = open_view("moe", {"text": "   "})
    assert any("Type some text" in i.value for i in at.info)
    # No figure of the text; the specialisation map, both layer-load maps and the training curves remain.
    assert [c.key for c in at.get("plotly_chart")] == ["spec", "layer-load-balanced", "layer-load-collapsed", "curves"]


def test_the_held_out_figures_are_built_once_for_every_visitor_and_text(monkeypatch):
    """The specialisation map, the layer-load maps and the training curves depend on the checkpoints, the layer and
    the language, not on the text: built once per process for every visitor and every new text (they were a third
    of a rerun's figure building), again for a new layer, and each visitor's routing figures still follow their
    own text."""
    from viz import moe as vmoe

    spec = count_builds(monkeypatch, vmoe, "category_heatmap")
    loads = count_builds(monkeypatch, vmoe, "layer_load_heatmap")
    curves = count_builds(monkeypatch, vmoe, "loss_curves")
    first, second = open_view("moe"), open_view("moe")
    second.text_area(key="text").input("the dog sees the cat").run()
    assert (len(spec), len(loads), len(curves)) == (1, 2, 1) and not second.exception
    charts = [{c.key: c.proto.spec for c in at.get("plotly_chart")} for at in (first, second)]
    for key in ("spec", "layer-load-balanced", "layer-load-collapsed", "curves"):
        assert charts[0][key] == charts[1][key]
    assert charts[0]["router"] != charts[1]["router"]
    second.slider(key="layer").set_value(2).run()  # the specialisation map is per layer; the others are not
    assert (len(spec), len(loads), len(curves)) == (2, 2, 1) and not second.exception
    assert {c.key: c.proto.spec for c in second.get("plotly_chart")}["spec"] != charts[1]["spec"]


def test_the_real_models_table_is_the_catalogs_built_once_per_language(monkeypatch):
    """The table of real MoE models is the same for every visitor: made and converted once per language, not at
    every run (its cells still the catalog's published sizes, headed in the reader's language)."""
    from app.views.moe import real_models
    from core.moe import catalog

    built = count_builds(monkeypatch, real_models, "table")
    first, second = open_view("moe"), open_view("moe", {"text": "the dog sees the cat"})
    assert len(built) == 1 and not first.exception and not second.exception
    ja = open_view("moe", state={"lang": "ja"})
    assert len(built) == 2
    published = catalog.moe_table()
    for at, lang in ((first, "en"), (second, "en"), (ja, "ja")):
        shown = at.dataframe[-1].value
        assert list(shown.columns)[0] == i18n.text(lang, "moe", "c_model")
        assert list(shown.iloc[:, 0]) == list(published["model"])
        assert list(shown.iloc[:, 3]) == [f"{t:g}B" for t in published["total_params_b"]]


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_each_checkpoints_weights_are_named_once(lang):
    """Loading the two checkpoints names how each was trained; the page then named the chosen one's weights a
    third time under its settings, three near-identical lines in a row."""
    at = open_view("moe", {"layer": "1"}, state={"lang": lang})
    start = i18n.text(lang, "models", "weights", note="").strip()
    named = [c.value for c in at.caption if c.value.startswith(start)]
    assert len(named) == len(set(named)) == 2, named
