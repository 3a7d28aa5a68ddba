"""A figure's caption (app/ui.py, the text a screen reader reads) says a label as the figure shows it: the figures
escape a visitor's tokens for plotly (viz safe_label), the caption decodes them again inside an inert code span."""

import functools
import json

import numpy as np
import plotly.graph_objects as go
import pytest

from app import i18n, ui


def caption_of(fig, data=None, rows=None, cols=None) -> str:
    """The caption text_alternative puts under this figure (the one function that assembles it)."""
    return ui._caption(ui._traces(fig), fig.layout.to_plotly_json(), data, rows, cols)


def test_a_bar_label_is_read_as_shown_not_as_its_entities():
    fig = go.Figure(go.Bar(x=["0 &lt;script&gt;", "1 cat ✓", "2 a&amp;b"], y=[0, 2, 1]))
    said = caption_of(fig)
    assert "` 0 <script> `" in said and "` 1 cat ✓ `" in said
    assert "&lt;" not in said


def test_a_map_cell_is_read_as_shown():
    data = np.array([[0.9, 0.1], [0.2, 0.8]])
    labels = ["0 &lt;b&gt;", "1 x&amp;y"]
    fig = go.Figure(go.Heatmap(z=data, x=labels, y=labels))
    said = caption_of(fig, data, labels, labels)
    assert "<b>" in said and "x&y" in said and "&lt;" not in said and "&amp;" not in said


def test_a_figures_subtitle_is_read_after_its_title():
    """/kv-cache's step map says under its title which mark is which (a subtitle): read too, in its words."""
    fig = go.Figure(go.Heatmap(z=[[1.0]]))
    fig.update_layout(title=dict(text="Step 2,<br>layer 0", subtitle=dict(text="Policy rows: ✕<br>evicted")))
    said = caption_of(fig)
    assert "Step 2, layer 0" in said and "Policy rows: ✕ evicted" in said


@pytest.mark.parametrize(
    ("code", "heading", "ended"),
    [("en", "Step 2, layer 0. Policy rows: ✕ evicted. ", "Step 2, layer 0. Policy rows: ✕ evicted\\. "),
     ("ja", "Step 2, layer 0。Policy rows: ✕ evicted。", "Step 2, layer 0。Policy rows: ✕ evicted\\."),
     ("ko", "Step 2, layer 0. Policy rows: ✕ evicted. ", "Step 2, layer 0. Policy rows: ✕ evicted\\. ")],
)  # fmt: skip
def test_a_title_and_its_subtitle_are_read_as_sentences_in_the_readers_language(monkeypatch, code, heading, ended):
    """Each ends with the reader's full stop ('.', '。'); one written as a sentence gets no second."""
    monkeypatch.setattr(ui, "lang", lambda: code)
    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
    fig.update_layout(title=dict(text="Step 2,<br>layer 0", subtitle=dict(text="Policy rows: ✕<br>evicted")))
    assert caption_of(fig).startswith(heading)
    assert caption_of(fig).endswith(i18n.text(code, "common", "figure_end"))
    fig.update_layout(title=dict(subtitle=dict(text="Policy rows: ✕ evicted.")))
    said = caption_of(fig)
    assert said.startswith(ended) and said[len(ended)] not in ".。", said


def test_a_long_title_is_set_above_the_figure_whole_and_read_whole_and_a_figure_shown_again_is_fitted_once():
    """What st.plotly_chart sends (the figure's to_dict()) has no title: the page sets it above the figure, whole, for
    the browser to wrap at any width; the caption reads the title the figure keeps, whole (no line breaks read as
    spaces inside a Japanese word)."""
    title = "層 3・ヘッド 5: 回転後の q（行: トークン、列: 次元を二つに分けて回すレイアウトの次元）"
    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]), layout=dict(title=title))
    assert "title" not in ui._fitted(fig).to_dict()["layout"] and fig.layout.title.text == title
    assert ui._title(fig) == ui.FIGURE_TITLE.format(title)
    assert title in caption_of(fig)
    as_sent = fig.to_dict
    assert ui._fitted(fig).to_dict is as_sent  # shown at the next run too: not wrapped twice


def test_a_grids_map_is_read_with_its_own_panels_axis_titles_and_no_empty_names():
    """/multi-head draws its maps in a make_subplots grid: the caption named the first panel's (untitled) axes,
    'Rows: , columns: .'. It names the axes of the panel whose cell is strongest, or no axes when those are untitled."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2)
    fig.add_trace(go.Heatmap(z=[[0.1, 0.2]], x=["a", "b"], y=["p"]), row=1, col=1)
    fig.add_trace(go.Heatmap(z=[[0.9, 0.3]], x=["c", "d"], y=["q"]), row=1, col=2)
    fig.update_xaxes(title_text="key token", row=1, col=2)
    fig.update_yaxes(title_text="query token", row=1, col=2)
    said = caption_of(fig)
    assert said.startswith("Rows: query token, columns: key token.") and "` c `" in said
    fig.update_xaxes(title_text=None, row=1, col=2)
    said = caption_of(fig)
    assert said.startswith("Largest values:") and "Rows" not in said


def test_a_title_and_subtitle_are_set_as_inert_page_text():
    """A visitor's token in a title (escaped by safe_label, as the figures put it) shows as text on the page, never as
    markup; a tag plotly draws none of is dropped; the subtitle in its own smaller line."""
    fig = {
        "layout": {
            "title": {"text": "0 &lt;img src=x onerror=alert(1)&gt; <script>x</script>", "subtitle": "✕ <b>gone</b>"}
        }
    }
    shown = ui._title(fig)
    assert "<img" not in shown and "<script" not in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown
    assert shown == ui.FIGURE_TITLE.format(
        "0 &lt;img src=x onerror=alert(1)&gt; x" + ui.SUBTITLE.format("✕ <b>gone</b>")
    )
    assert ui._title({"layout": {}}) == "" and ui._title(go.Figure()) == ""


def plotly_own_sent(fig: go.Figure) -> dict:
    """What the page sends for a figure, made through plotly's own to_dict(): fitted, with viz.style's template."""
    from viz.labels import for_page
    from viz.style import PAGE_TEMPLATE

    own = for_page(go.Figure(fig).to_dict())
    own["layout"]["template"] = PAGE_TEMPLATE
    return own


def test_a_figure_is_sent_as_plotly_makes_it_and_keeps_what_it_holds():
    """What st.plotly_chart sends for a figure (its to_dict(), fitted for the page) is plotly's own to_dict() fitted,
    the same data (numpy arrays as base64) and layout, with viz.style's template for plotly's; sending it, twice,
    changes nothing the figure holds (its own template included)."""
    fig = go.Figure(go.Heatmap(z=np.arange(6.0).reshape(2, 3), x=["a", "b", "c"]), layout=dict(title="t", height=300))
    plotly_own, held = plotly_own_sent(fig), go.Figure(fig).to_dict()
    sent = ui._fitted(fig).to_dict()
    assert sent == plotly_own and "bdata" in sent["data"][0]["z"]
    assert ui._fitted(fig).to_dict() == plotly_own and go.Figure(fig).to_dict() == held
    assert isinstance(fig.data[0].z, np.ndarray) and fig.layout.title.text == "t"


def test_a_sent_figure_carries_the_small_template_and_what_the_figures_set():
    """Every way a figure is sent (a plotly figure, a shared one, a dict) carries viz.style.PAGE_TEMPLATE instead of
    the template plotly put in it (Streamlit's, 3.4 KB; its theme sets fonts, grid and backgrounds in the browser):
    our colour way, in a few bytes; what the figure sets itself (its background, grid colour, axis fonts, margins)
    goes as it was."""
    from viz.style import BLUE, PAGE_TEMPLATE, PALETTE, base_layout

    def made() -> go.Figure:
        fig = base_layout(go.Figure(go.Scatter(x=[0, 1], y=[1, 2], mode="markers")), "t", height=300)
        return fig.update_xaxes(gridcolor="#eee", tickfont=dict(size=11)).update_yaxes(showgrid=False)

    assert len(made().to_dict()["layout"]["template"]["data"]) > 0  # what plotly puts in every figure
    for sent in (ui._fitted(made()).to_dict(), ui.read_only(made()).to_dict(), ui._fitted(made().to_dict())):
        layout = sent["layout"]
        assert layout["template"] == PAGE_TEMPLATE == {"layout": {"colorway": PALETTE}}
        assert layout["template"]["layout"]["colorway"][0] == BLUE and len(json.dumps(layout["template"])) < 150
        assert layout["plot_bgcolor"] == "white" and layout["margin"]["l"] == 10
        assert layout["xaxis"]["gridcolor"] == "#eee" and layout["xaxis"]["tickfont"] == {"size": 11}
        assert layout["yaxis"]["showgrid"] is False
    fig = made()
    ui._fitted(fig).to_dict()
    assert fig.layout.template.data.scatter  # the figure keeps its own


def test_a_plotly_without_base64_sending_sends_its_own_to_dict(monkeypatch):
    """pyproject allows plotly from 5.20, whose to_dict() sends arrays as lists and which has no convert_to_base64:
    then the page sends plotly's own to_dict(), fitted, and never the figure's arrays as they are held."""
    monkeypatch.setattr(ui, "convert_to_base64", None)
    fig = go.Figure(go.Heatmap(z=np.arange(6.0).reshape(2, 3)), layout=dict(title="t", height=300))
    assert ui._fitted(fig).to_dict() == plotly_own_sent(fig)


def test_a_figure_is_sent_fitted_to_a_phones_figure_or_a_laptops_as_the_browser_says(monkeypatch):
    """A phone's browser gets a figure's panel titles cut to a phone's width; a laptop's whole where they fit it
    (which browser is which: tests/app/test_figure_fit.py). A fresh figure and a shared (read-only) one alike; a
    shared one whose two fits are the same keeps one."""
    from plotly.subplots import make_subplots

    from viz.labels import LAPTOP_FIGURE_PX, PHONE_FIGURE_PX

    def grid():
        return make_subplots(rows=1, cols=3, subplot_titles=["Q_0 (13 × 32)", "K_0 (13 × 32)", "V_0 (13 × 32)"])

    fresh, shared, plain = grid(), ui.read_only(grid()), ui.read_only(go.Figure(go.Bar(y=[1, 2])))
    sent = {}
    for px in (PHONE_FIGURE_PX, LAPTOP_FIGURE_PX):
        monkeypatch.setattr(ui, "figure_px", lambda px=px: px)  # what this browser said
        sent[px] = [ui._fitted(f).to_dict()["layout"]["annotations"][0]["text"] for f in (fresh, shared)]
        sent[px, "plain"] = plain.to_dict()
    assert sent[LAPTOP_FIGURE_PX] == ["Q_0 (13 × 32)"] * 2
    assert sent[PHONE_FIGURE_PX][0] == sent[PHONE_FIGURE_PX][1] != "Q_0 (13 × 32)"
    assert sent[PHONE_FIGURE_PX, "plain"] is sent[LAPTOP_FIGURE_PX, "plain"]


def test_a_masked_maps_caption_names_its_largest_weights_not_its_masked_cells():
    """attention_heatmap draws masked cells as a second layer (1.0 where masked, nothing elsewhere): read as a map
    of its own, its 1.0s were named the map's largest values, in a tile called 'masked' in English."""
    from core import figure_text
    from viz.heatmap import attention_heatmap

    weights = np.array([[1.0, 0.0, 0.0], [0.75, 0.25, 0.0], [0.25, 0.5, 0.25]])  # causal: row i sees keys 0..i
    masked = np.triu(np.ones((3, 3), dtype=bool), 1)
    labels = ["0 a", "1 b", "2 c"]
    fig = attention_heatmap(weights, labels, labels, masked, x_title="key", y_title="query", value_name="weight")
    assert len(fig.data) == 2  # the map and its masked cells' layer
    (told,) = figure_text.describe(ui._traces(fig), fig.layout.to_plotly_json()).statements
    assert told.cells == [figure_text.Cell("0 a", "0 a", 1.0), figure_text.Cell("1 b", "0 a", 0.75),
                          figure_text.Cell("2 c", "1 b", 0.5)]  # fmt: skip
    assert told.tiles == ["", "", ""]
    said = caption_of(fig)
    assert "masked" not in said and "0.75" in said and "0.5" in said, said


# --- numbers drawn in % are said and tabled in % --------------------------------------------------------------


def test_the_ablation_cards_caption_names_the_harms_it_draws():
    """/ablation's card draws its harms along x (the placebo draws and the claim's heads, named on y): the caption
    says them, in % on an accuracy card (its axis and hovers 3.2%), as plain numbers on a loss card (nats). Read
    from y, the dots were names, and the caption was empty."""
    import dataclasses

    from core import ablation as ab
    from viz import ablation as va

    cards = ab.committed_cards()
    if cards is None:
        pytest.skip("results/ablation.json not written yet")
    words = _words("en", "ablation.figure")
    by_metric = {card.metric: card for card in cards.values()}
    measured = dict(harm=0.032, placebo_harms=[0.01, -0.005, 0.02], placebo_interval=(-0.005, 0.02))
    share = dataclasses.replace(by_metric["antecedent_accuracy"], **measured)
    said = caption_of(va.claim_figure(share, words))
    assert said is not None, "the card's figure has no caption"
    chosen = words("chosen_name", k=len(share.heads))
    assert f"{chosen}: 3.2% at ` {words('chosen')} `" in said, said
    assert f"3 points at ` {words('placebo')} `, lowest -0.5%, highest 2.0%" in said, said
    assert "0.032" not in said and " to " not in said, said  # dots in the order drawn: no line from one to another
    loss = dataclasses.replace(by_metric["repeated_loss"], harm=0.4567, placebo_harms=[0.012], placebo_interval=(0, 0))
    said = caption_of(va.claim_figure(loss, words))
    assert said is not None and "0.457 at" in said and "0.012 at" in said and "%" not in said, said


def test_a_share_drawn_in_percent_is_hovered_and_said_to_one_decimal():
    """/antecedents' accuracy bars hovered 63% beside a caption of 63.2% (a table of 63.21%): a share drawn in % is
    hovered to one decimal, as the pages' sentences say it, and the caption says it to its hover's decimals (one
    declaration: the hover); the table and the CSV keep the number's own digits."""
    import re

    from viz.bars import accuracy_bars

    fig = accuracy_bars(["head", "choice"], [0.6321, 0.45], [0.5, 0.3], [0.7, 0.6], x_title="a", chance_label="c")
    assert re.findall(r"%\{[^}:]+:([^}]+)\}", fig.data[0].hovertemplate) == [".1%"] * 3
    said = caption_of(fig)
    assert "63.2%" in said and "45.0%" in said, said
    fig.update_traces(hovertemplate="%{y}<br>%{x:.0%}<extra></extra>")  # a figure hovering whole percents
    said = caption_of(fig)
    assert "63%" in said and "45%" in said and "63.2%" not in said, said


def _words(lang: str, section: str):
    return lambda key, /, **fmt: i18n.text(lang, section, key, **fmt)


def csv_cells(text: str) -> list[list[str]]:
    import csv
    import io

    return list(csv.reader(io.StringIO(text)))


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_alignment_figures_caption_and_table_say_the_shares_in_percent_as_drawn(monkeypatch, lang):
    """/encoder-decoder's alignment map and bars draw accuracies in % (cells 63%, hover 63.2%, colour bar and axis
    0% .. 100%); their caption said '0.632' and the map's CSV 0.6321 beside them."""
    from viz import encoder_decoder as figs

    monkeypatch.setattr(ui, "lang", lambda: lang)
    words = _words(lang, "encoder_decoder.figure")
    grid = {"accuracy": np.array([[0.6321, 0.2]]), "low": np.array([[0.581, 0.15]]), "high": np.array([[0.68, 0.26]])}
    layers, heads = figs.alignment_labels(grid, words)
    fig = figs.alignment_map(grid, words)
    said = caption_of(fig, grid["accuracy"], layers, heads)
    assert "63.2%" in said and "20.0%" in said and "0.632" not in said, said
    assert ui.numbers_in_percent(fig, grid["accuracy"]) is True
    rows = csv_cells(ui.to_csv(grid["accuracy"], layers, heads, percent=ui.numbers_in_percent(fig, grid["accuracy"])))
    assert rows[1][1:] == ["63.21%", "20%"], rows
    heads_measured = [{"layer": 0, "head": 0, "accuracy": 0.6321, "low": 0.581, "high": 0.68},
                      {"layer": 0, "head": 1, "accuracy": 0.2, "low": 0.15, "high": 0.26}]  # fmt: skip
    bars = figs.alignment_bars(heads_measured, {"accuracy": 0.4123, "low": 0.35, "high": 0.475}, 0.0625, words)
    said = caption_of(bars)
    assert "63.2%" in said and "20.0%" in said and "0.632" not in said, said


def test_the_moe_figures_drawn_in_percent_say_and_table_their_shares_in_percent():
    """/moe's load bars, dropped-share curve and share maps draw shares in %; the caption and the CSV said fractions
    (a count and a capacity factor, drawn as plain numbers, stay plain)."""
    import functools

    import torch

    from core.moe import balance_bounds, views
    from core.moe import checkpoint_views as cv
    from viz import moe as vmoe

    t = functools.partial(i18n.text, "en", "moe.figure")
    logits = torch.randn(5, 4, generator=torch.Generator().manual_seed(0)) * 2
    run = views.TextRun(["a", "b", "c", "d", "e"], 5, False, [logits], 4, 2, 64)
    view = views.text_routing({"balanced": run}, "balanced", 0, 0.5)
    load = vmoe.load_figure(view, t)
    share = float(view.load.max())
    assert f"{share:.1%}" in caption_of(load) and f"{share:.3g}" not in caption_of(load)
    data = {"expert": ["e0", "e1", "e2", "e3"], "share": view.load.tolist(), "count": view.counts.tolist()}
    assert ui.numbers_in_percent(load, data, {"share": "y"}) == {"share"}
    rows = csv_cells(ui.to_csv(data, percent={"share"}))
    assert [r[1] for r in rows[1:]] == [f"{v * 100:.10g}%" for v in view.load.tolist()]
    assert [r[2] for r in rows[1:]] == [str(c) for c in view.counts.tolist()]  # a count is no share
    dropped = vmoe.dropped_curve(view, t)
    along = {"capacity_factor": "x", "dropped_share": "y"}
    table = {"capacity_factor": view.factors, "dropped_share": view.dropped_by_factor}
    assert ui.numbers_in_percent(dropped, table, along) == {"dropped_share"}
    first = float(np.round(view.dropped_by_factor[0], 4))
    assert f"from {first:.1%} at" in caption_of(dropped), caption_of(dropped)
    shares = np.array([[0.6321, 0.3679], [1.0, 0.0]])
    spec = vmoe.category_heatmap(
        cv.Specialisation("balanced", 0, ["noun", "verb"], shares, shares, [], [0.5] * 2, 9), t
    )
    assert "63.2%" in caption_of(spec, shares, ["e0", "e1"], ["noun", "verb"]) and ui.numbers_in_percent(spec, shares)
    summary = cv.CheckpointSummary(2.1, shares / 2, 0.0, 0.5, [0], [3.0])
    layer_load = vmoe.layer_load_heatmap(
        cv.Comparison({"balanced": summary}, 4, 0.25, balance_bounds(4, 2)), t, "balanced"
    )
    assert "31.6%" in caption_of(layer_load) and ui.numbers_in_percent(layer_load, shares / 2)
    router = vmoe.router_heatmap(view, t)  # probabilities, drawn 0.632: said so
    assert ui.numbers_in_percent(router, view.probs) is False


def test_the_antecedent_and_ablation_figures_drawn_in_percent_table_their_accuracies_in_percent():
    """/antecedents' accuracy bars (viz.bars, x in %) and /ablation's accuracy card (harm axis in %): caption and CSV
    in %; a loss card's harm (nats) stays a plain number."""
    import dataclasses

    from core import ablation as ab
    from viz import ablation as va
    from viz.bars import accuracy_bars

    fig = accuracy_bars(
        ["head", "choice"], [0.6321, 0.45], [0.5, 0.3], [0.7, 0.6], x_title="accuracy", chance_label="c"
    )
    said = caption_of(fig)
    assert "63.2%" in said and "45.0%" in said and "0.632" not in said, said
    table = {"": ["head", "choice"], "accuracy": [0.6321, 0.45], "low": [0.5, 0.3], "high": [0.7, 0.6]}
    along = {"accuracy": "x", "low": "x", "high": "x"}
    assert ui.numbers_in_percent(fig, table, along) == {"accuracy", "low", "high"}
    assert csv_cells(ui.to_csv(table, percent={"accuracy", "low", "high"}))[1] == ["head", "63.21%", "50%", "70%"]
    cards = ab.committed_cards()
    if cards is None:
        pytest.skip("results/ablation.json not written yet")
    words = _words("en", "ablation.figure")
    by_metric = {card.metric: card for card in cards.values()}
    share, loss = by_metric["antecedent_accuracy"], by_metric["repeated_loss"]
    measured = dict(harm=0.032, placebo_harms=[0.01, -0.005], placebo_interval=(-0.005, 0.01))
    share = dataclasses.replace(share, **measured)  # the committed accuracy card may wait for its run
    for card, shown in ((share, {"placebo_harm"}), (loss, set())):
        data = {"placebo_harm": list(card.placebo_harms)}
        assert ui.numbers_in_percent(va.claim_figure(card, words), data, {"placebo_harm": "x"}) == shown


@pytest.mark.parametrize(("code", "first", "second"), [("en", "running max m, row 3: 3 points", "running sum l, row 3"),
                                                       ("ja", "累積最大値 m・行 3: 3 点", "累積和 l・行 3"),
                                                       ("ko", "누적 최댓값 m, 행 3: 점 3개", "누적 합 l, 행 3")])  # fmt: skip
def test_the_flash_attention_m_and_l_caption_names_each_lines_panel(monkeypatch, code, first, second):
    """Its two panels each draw a 'row 3': read without the panel's title, the caption said 'row 3' twice."""
    from core import flash_attention as fa
    from viz import flash_attention as fv

    monkeypatch.setattr(ui, "lang", lambda: code)
    view = fa.walk(n=6, d=4, br=2, bc=2, q_tile=1, seed=0)
    said = caption_of(fv.statistics_figure(view, ui.texts("flash_attention.figure"), 1))
    assert first in said and second in said and said.index(first) < said.index(second)


def test_the_flash_attention_uneven_tile_note_counts_its_rows_without_a_plural_hack():
    """'the last tile has only 1 row(s)': the count reads as 1 of its 4 rows, whatever it is."""
    said = i18n.text("en", "flash_attention", "block_uneven", name="Br", b=4, n=9, last=1)
    assert "(s)" not in said and "only 1 of its 4 rows" in said


def test_a_padded_sentences_caption_names_no_padding_querys_weights(monkeypatch):
    """/padded-batch draws a short sentence's head over the batch's whole width, padding queries' rows too, and says
    those rows are computed but never used: its caption named their weights among the map's largest."""
    from core import padded_batch
    from tests.fake_traces import fake_trace
    from viz import padded_batch as figures

    trace = fake_trace(lengths=(6, 4, 2))
    run = padded_batch.BatchRun(trace, trace.batch.attention_mask.bool(), "right", True)
    view = padded_batch.sentence_view(run, 2, 1, 3)
    words = functools.partial(i18n.text, "en", "padded_batch.figure")
    fig = figures.sentence_figure(view, words, 2)
    real, padding = view.labels[:2], view.labels[2:]
    np.testing.assert_array_equal(view.real_query_weights[:2], view.weights[:2])
    assert np.isnan(view.real_query_weights[2:]).all()
    # the whole map's largest weights lie in padding rows (the case the caption must not report)
    whole = caption_of(fig, view.weights, view.labels, view.labels)
    assert any(label in whole for label in padding), whole
    said = []
    monkeypatch.setattr(ui.st, "caption", said.append)
    ui.text_alternative(fig, view.weights, view.labels, view.labels, "k", table=False, said_of=view.real_query_weights)
    (caption,) = said
    assert not any(label in caption for label in padding) and any(label in caption for label in real), caption
