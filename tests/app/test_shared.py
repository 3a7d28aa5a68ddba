"""Views and figures every session at the same state shares (app/shared.py): one object for the same call, its own
for another state or language, at most ENTRIES of each kept; a shared figure is drawn as a fresh one is; two
visitors of /masks at one state get the page's view from one computation."""

import plotly.io

from app import shared, ui
from core.masks import batch as masks_core
from tests.apptest_helpers import figure_titles, function_app, open_view

calls: list = []


def square_view(n: int, labels: list[str]) -> dict:
    calls.append(n)
    return {"n": n * n, "labels": list(labels)}


def titled(view: dict, words, where: str) -> dict:
    import plotly.graph_objects as go

    calls.append(("figure", where))
    return {
        "bars": go.Figure(
            go.Bar(x=view["labels"], y=[view["n"]] * len(view["labels"])), layout={"title": words("language")}
        )
    }


def test_the_same_state_gets_the_same_view_and_another_state_its_own():
    shared._view.clear()
    calls.clear()
    first = shared.view(square_view, 3, ["a", "b"])
    assert shared.view(square_view, 3, ["a", "b"]) is first and calls == [3]  # a second session: no second call
    other = shared.view(square_view, 3, ["a", "c"])
    assert other is not first and other["labels"] == ["a", "c"] and calls == [3, 3]


def test_at_most_entries_views_are_kept():
    shared._view.clear()
    for n in range(shared.ENTRIES + 1):
        shared.view(square_view, n, [])
    calls.clear()
    shared.view(square_view, shared.ENTRIES, [])  # the newest is kept
    shared.view(square_view, 0, [])  # the oldest made way for it: made again
    assert calls == [0]


def test_figures_are_built_once_per_view_and_language(monkeypatch):
    shared._figures.clear()
    calls.clear()
    view = shared.view(square_view, 2, ["x", "y"])
    monkeypatch.setattr(ui, "lang", lambda: "en")
    en = shared.figures(titled, view, "common", "here")
    assert shared.figures(titled, view, "common", "here") is en
    monkeypatch.setattr(ui, "lang", lambda: "ja")
    ja = shared.figures(titled, view, "common", "here")
    assert ja is not en and ja["bars"].layout.title.text != en["bars"].layout.title.text
    assert calls.count(("figure", "here")) == 2


def draw_fresh_and_read_only() -> None:
    import numpy as np
    import plotly.graph_objects as go

    from app import ui

    z = np.array([[0.9, 0.1], [0.2, 0.8]])

    def heatmap():
        return go.Figure(go.Heatmap(z=z, x=["k0", "k1"], y=["q0", "q1"]), layout={"title": "weights"})

    def bars():  # its caption reads the traces
        return go.Figure(go.Bar(x=["a", "b", "c"], y=np.array([0.2, 0.7, 0.1])), layout={"title": "scores"})

    for key, drawn in (("fresh", heatmap()), ("kept", ui.read_only(heatmap()))):
        ui.show_figure(drawn, key, data=z, row_labels=["q0", "q1"], col_labels=["k0", "k1"], key=key, tables=False)
    for key, drawn in (("fresh-bars", bars()), ("kept-bars", ui.read_only(bars()))):
        ui.show_figure(drawn, key, key=key)


def test_a_read_only_figure_is_sent_and_captioned_as_a_fresh_one():
    at = function_app(draw_fresh_and_read_only).run()
    assert not at.exception
    fresh, kept, fresh_bars, kept_bars = at.get("plotly_chart")
    assert kept.proto.spec == fresh.proto.spec and '"q0"' in kept.proto.spec
    assert kept_bars.proto.spec == fresh_bars.proto.spec
    said = [c.value for c in at.caption]
    assert len(said) == 4 and said[0] == said[1] and said[2] == said[3]
    assert "q0" in said[0] and "` b `" in said[2]  # the map's strongest cell, the largest bar
    assert figure_titles(at) == ["weights", "weights", "scores", "scores"]  # set above each, as the page's text


def draw_a_read_only_figure_whose_kept_spec_is_marked() -> None:
    import plotly.graph_objects as go
    import streamlit as st

    from app import ui

    fig = ui.read_only(go.Figure(go.Bar(x=["a", "b"], y=[0.3, 0.7])))
    drawn = fig.to_dict()
    drawn.spec = drawn.spec.replace('"type":"bar"', '"type":"bar","name":"from the kept spec"', 1)
    st.plotly_chart(fig)


def test_streamlit_sends_a_read_only_figures_json_as_kept_not_encoded_again():
    """The JSON of a shared figure is encoded once: Streamlit's own encoding at each draw (plotly.io.to_json, which
    app/ui.py answers from the figure) must be what it sends. A Streamlit that encodes another way fails here."""
    at = function_app(draw_a_read_only_figure_whose_kept_spec_is_marked).run()
    assert not at.exception
    assert '"name":"from the kept spec"' in at.get("plotly_chart")[0].proto.spec


def test_two_visitors_of_masks_at_one_state_share_its_view(monkeypatch):
    made = []

    def mask_steps_view(*args, **kwargs):  # a name of its own: no earlier test's kept view answers for it
        made.append(args)
        return real(*args, **kwargs)

    real = masks_core.mask_steps_view
    monkeypatch.setattr(masks_core, "mask_steps_view", mask_steps_view)
    state = {"row": "1", "head": "0", "mask": "both"}
    first = open_view("masks", state)
    with monkeypatch.context() as encoded_anew:  # the second without the figures' kept JSON: Streamlit encodes it
        encoded_anew.setattr(plotly.io, "to_json", ui._plotly_to_json)
        second = open_view("masks", state)
    assert len(made) == 1  # the second visitor's page used the first one's view
    specs = [[c.proto.spec for c in at.get("plotly_chart")] for at in (first, second)]
    assert len(specs[0]) == 10 and specs[0] == specs[1]
    open_view("masks", {**state, "row": "0"})
    assert len(made) == 2 and made[1][1] == 0  # another state: its own view


def test_a_shared_figures_caption_is_made_once_per_language_and_numbers(monkeypatch):
    import numpy as np
    import plotly.graph_objects as go

    fig = ui.read_only(go.Figure(go.Heatmap(z=[[0.9, 0.1], [0.2, 0.8]], x=["k0", "k1"], y=["q0", "q1"])))
    made, said = [], []
    caption = ui._caption
    monkeypatch.setattr(ui, "_caption", lambda *a: made.append(a[2]) or caption(*a))
    monkeypatch.setattr(ui.st, "caption", said.append)
    z = np.array([[0.9, 0.1], [0.2, 0.8]])

    def draw(data, language="en"):
        monkeypatch.setattr(ui, "lang", lambda: language)
        ui.text_alternative(fig, data, ["q0", "q1"], ["k0", "k1"], key="k", table=False)

    draw(z)
    draw(z.copy())  # another learner, the same numbers: the kept caption
    assert len(made) == 1 and said[0] == said[1] and "q0" in said[0]
    draw(z[::-1].copy())  # other numbers: their own caption, their own strongest cell
    draw(z, "ja")  # another language: its own words
    assert len(made) == 3 and said[2] != said[0] and said[3] != said[0]
    for n in range(ui.CAPTIONS_KEPT + 3):
        draw(z + n)
    assert len(getattr(fig, ui.CAPTIONS)) <= ui.CAPTIONS_KEPT


def navigation_twice() -> None:
    import streamlit as st

    from app import catalog

    st.session_state[st.session_state.get("lang", "en")] = (catalog.navigation(), catalog.navigation())


def test_the_navigation_is_built_once_per_language_and_copied_for_each_run(monkeypatch):
    from app import catalog

    built = []
    page = catalog.streamlit_page
    monkeypatch.setattr(catalog, "streamlit_page", lambda p: built.append(p) or page(p))
    catalog._sections.cache_clear()
    at = function_app(navigation_twice).run()
    assert not at.exception
    first, second = at.session_state["en"]
    assert len(built) == len(catalog.PAGES)  # the second run builds nothing
    pages = [p for ps in first.values() for p in ps]
    again = [p for ps in second.values() for p in ps]
    assert [p.url_path for p in pages] == [p.url_path for p in again] and len(pages) == len(catalog.PAGES)
    assert all(a is not b for a, b in zip(pages, again, strict=True))  # st.navigation marks its run's own copy
    at.session_state["lang"] = "ja"
    at.run()
    assert list(at.session_state["ja"][0]) != list(first) and len(built) == 2 * len(
        catalog.PAGES
    )  # its own section titles
    catalog._sections.cache_clear()


def test_a_failed_view_is_made_again_when_asked_again():
    kept, tries = shared.Kept(2), []

    def fail_once():
        tries.append(1)
        if len(tries) == 1:
            raise ValueError("first try")
        return "made"

    try:
        kept.get("k", fail_once)
    except ValueError:
        pass
    assert kept.get("k", fail_once) == "made" and kept.get("k", fail_once) == "made" and len(tries) == 2


def lengths_table(view: dict, words):
    import pandas as pd

    calls.append(("table", words("language")))
    return pd.DataFrame({words("language"): view["labels"]}, index=pd.Index(view["labels"], name="row"))


def draw_fresh_and_shared_table() -> None:
    import streamlit as st

    from app import i18n, shared
    from tests.app.test_shared import lengths_table

    view = {"labels": ["a", "b"]}
    st.dataframe(lengths_table(view, lambda key: i18n.text("en", "common", key)))
    st.dataframe(shared.table(lengths_table, view, "common"))


def test_a_table_is_converted_once_per_view_and_language_and_sent_as_a_fresh_one(monkeypatch):
    shared._tables.clear()
    calls.clear()
    view = shared.view(square_view, 4, ["x", "y"])
    monkeypatch.setattr(ui, "lang", lambda: "en")
    en = shared.table(lengths_table, view, "common")
    assert shared.table(lengths_table, view, "common") is en and len(calls) == 2  # the view, then one table
    monkeypatch.setattr(ui, "lang", lambda: "ja")
    ja = shared.table(lengths_table, view, "common")
    assert ja is not en and ja.column_names != en.column_names and len(calls) == 3
    monkeypatch.undo()
    at = function_app(draw_fresh_and_shared_table).run()
    fresh, kept = at.dataframe
    assert not at.exception and kept.proto.arrow_data.data == fresh.proto.arrow_data.data


def test_two_visitors_of_moe_with_one_text_share_its_routing_and_figures(monkeypatch):
    """A room's learners on one /moe step: the routing of their text at the layer and capacity factor is computed
    once, and its four figures built once per language, however many open it."""
    from core.moe import views as moe_views
    from viz import moe as vmoe

    routed, built = [], []
    real_routing, real_router = moe_views.text_routing, vmoe.router_heatmap

    def text_routing(*args, **kwargs):
        routed.append(args[2:])
        return real_routing(*args, **kwargs)

    def router_heatmap(*args, **kwargs):  # a name of its own: no earlier test's kept figure answers for it
        built.append(1)
        return real_router(*args, **kwargs)

    monkeypatch.setattr(moe_views, "text_routing", text_routing)
    monkeypatch.setattr(vmoe, "router_heatmap", router_heatmap)
    state = {"text": "the cat sat on the mat and the dog ran to the park", "layer": "0", "cf": "1.5"}
    first, second = open_view("moe", state), open_view("moe", state)
    assert len(routed) == 1 and len(built) == 1  # the second visitor's page used the first one's
    specs = [[c.proto.spec for c in at.get("plotly_chart")] for at in (first, second)]
    assert specs[0] == specs[1]
    open_view("moe", {**state, "layer": "1"})
    assert len(routed) == 2 and len(built) == 2  # another layer: its own routing and figure
