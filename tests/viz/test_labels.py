"""viz/labels.py: learner text in figure labels is escaped (never markup), clipped, and newlines/tabs are shown; a
long title is cut into lines of a width, where English, Japanese and Korean each allow a break; a figure's titles
are cut to fit a phone."""

import html
import unicodedata

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from app import i18n
from core.pooling import MAX_LABEL_CHARS
from core.results import load_result
from viz.labels import (
    BESIDE_GAP_PX,
    COLUMN_EM,
    HANGUL_EM,
    LAPTOP_FIGURE_PX,
    MIN_TOP,
    PHONE_FIGURE_PX,
    WIDE_EM,
    beside_px,
    columns_in,
    figure_title,
    for_page,
    label_columns,
    label_html,
    number_ticks_columns,
    safe_label,
    wrapped_label,
)


def test_markup_is_escaped_to_entities():
    assert safe_label("<script>alert('x')</script>", 100) == "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"
    assert safe_label('a & "b"') == "a &amp; &quot;b&quot;"


def test_newlines_and_tabs_are_visible_marks():
    assert safe_label("a\nb\tc") == "a⏎b⇥c"


def test_long_text_is_clipped():
    assert len(safe_label("x" * 500)) <= MAX_LABEL_CHARS
    assert len(safe_label("y" * 50, 10)) <= 10
    assert safe_label("short", 10) == "short"


def columns(line: str) -> float:
    """A line's width in columns by the measured widths (results/figure_text_widths.json), each character's own."""
    drawn = load_result("figure_text_widths")["em_per_character"]
    em = {"W": drawn["kanji"]["14"], "F": drawn["full-width"]["14"]}
    return sum(
        drawn["hangul"]["14"] / COLUMN_EM
        if "가" <= c <= "힣"
        else em.get(unicodedata.east_asian_width(c), COLUMN_EM) / COLUMN_EM
        for c in html.unescape(line)
    )


def test_the_width_guess_is_what_chromium_draws():
    """A kana or kanji takes its type's size, a Hangul syllable 0.92 of it, as plotly draws them in the app's fonts
    (scripts/figure_text_widths.py); a Latin character's guess covers nine in ten of the catalogs' English figure
    words. Two columns for a wide character (1.16 em) cut ja titles 16% early and ko ones 26%."""
    drawn = load_result("figure_text_widths")
    for script, em in (("kana", WIDE_EM), ("kanji", WIDE_EM), ("full-width", WIDE_EM), ("hangul", HANGUL_EM)):
        assert all(abs(em - measured) <= 0.01 for measured in drawn["em_per_character"][script].values()), script
    assert drawn["catalog_strings"]["en"]["em_per_latin_character"]["p90"] <= COLUMN_EM
    assert label_columns("注意のかたち") * COLUMN_EM == pytest.approx(
        6 * drawn["em_per_character"]["kanji"]["14"], 0.01
    )
    assert label_columns("어텐션 헤드") * COLUMN_EM == pytest.approx(
        5 * drawn["em_per_character"]["hangul"]["14"] + COLUMN_EM, 0.01
    )


def test_figures_beside_one_another_stand_on_one_line_of_a_1280_px_windows_column():
    """Pairs and triples of figures (app/ui.beside) were sized for a 1,366 px window's column (a row of 880 px) and
    wrapped one per line at 1,280 px, the browser test's own window, the right half of the page blank. Each row, its
    gaps Streamlit's small gap, fits the narrowest column measured at 1,280 (chromium with the sidebar open, a scroll
    bar drawn: scripts/beside_row_check.py) and at 1,366."""
    measured = load_result("beside_rows")["per_visit"]
    for window in (1280, 1366):
        column = min(v["column_px"] for v in measured if v["window_px"] == window)
        for n in (2, 3):
            assert n * beside_px(n) + (n - 1) * BESIDE_GAP_PX <= column, (window, n)
    assert {r["gap_px"] for v in measured for r in v["rows"]} == {BESIDE_GAP_PX}
    assert min(v["column_px"] for v in measured if v["window_px"] == 1280) == 810  # the scroll bar's 10 px counted


@pytest.mark.parametrize(
    "text, width, lines",
    [  # hand-broken: where a reader of each script would break it
        ("the new token's query, head by head (rows)", 24, ["the new token's query,", "head by head (rows)"]),
        (
            "新しいトークンのクエリ（行: ヘッドごと）",
            24,
            ["新しいトークンのクエリ", "（行: ヘッドごと）"],
        ),  # before the bracket
        ("내보내기 방식", 10, ["내보내기", "방식"]),  # a Hangul word kept whole, as a Latin one
        (
            "方式の行: ✕ 列の位置をすべて追い出し、◐ その一部",
            40,
            ["方式の行: ✕ 列の位置をすべて追い出し、", "◐ その一部"],
        ),
        ("猫猫猫猫猫猫猫猫猫猫猫猫", 6, ["猫猫猫"] * 4),  # no break point but between characters
        ("猫。猫猫", 2, ["猫。", "猫", "猫"]),  # never a line starting with closing punctuation
        ("supercalifragilistic word", 10, ["supercalifragilistic", "word"]),  # a long word keeps its own line
    ],
)
def test_wrapped_label_breaks_where_each_script_allows(text, width, lines):
    assert [html.unescape(line) for line in wrapped_label(text, width).split("<br>")] == lines


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
@pytest.mark.parametrize("key", ["heads_axis", "step_title", "marks_partly"])
@pytest.mark.parametrize("width", [10, 24, 48])
def test_wrapped_label_lines_fit_their_width_and_lose_nothing(lang, key, width):
    """Every line within `width` columns unless one word alone is wider; the lines, joined, are the text."""
    text = i18n.text(lang, "kv_cache.figure", key, step=5, layer=29, n=8192, evicted="✕", partly="◐")
    lines = wrapped_label(text, width).split("<br>")
    words = text.split()
    assert all(columns(line) <= max(width, max(columns(w) for w in words)) for line in lines)
    assert all(columns(line) <= width for line in lines if " " in line)
    solid = "".join(html.unescape(line) for line in lines).replace(" ", "")
    assert solid == text.replace(" ", "")
    assert len(lines) == 1 or columns(text) > width


def test_wrapped_label_escapes_markup_and_keeps_short_text_on_one_line():
    assert wrapped_label("<b>x</b> & y", 40) == "&lt;b&gt;x&lt;/b&gt; &amp; y"
    assert wrapped_label("short", 40) == "short" and wrapped_label("", 10) == ""


LONG_TITLE = "Layer 3, head 5: rotated q (rows: tokens, columns: dimensions in rotate_half layout)"  # 84 columns


def test_for_page_takes_the_title_out_and_the_room_it_took_and_keeps_the_plot_its_height():
    """The page sets the title above the figure (app/ui.py): the figure goes without it, and without the margin its
    lines took (a long title fitted to a phone took 3 lines above the plot); the plot keeps its 350 px."""
    fig = go.Figure(
        layout=dict(title=dict(text=LONG_TITLE, subtitle=dict(text="a note")), height=400, margin=dict(t=50))
    )
    as_dict = for_page(fig.to_dict())
    for_page(fig)
    assert "title" not in fig.to_dict()["layout"] and "title" not in as_dict["layout"]
    assert fig.layout.margin.t == MIN_TOP and fig.layout.height == 400 - 50 + MIN_TOP
    assert as_dict["layout"] == fig.to_dict()["layout"]


def test_for_page_leaves_room_for_what_stands_above_the_plot():
    """A top x axis's labels and its title's lines (/moe's map), the top row's panel titles, a note standing on the
    plot's top edge (/antecedents' chance level) keep the room above the plot they need, the title gone."""
    top_axis = for_page(go.Figure(layout=dict(title=LONG_TITLE, xaxis=dict(side="top", title_text=LONG_TITLE))))
    lines = top_axis.layout.xaxis.title.text.count("<br>") + 1
    assert lines == 2 and top_axis.layout.margin.t >= 60 + 18 * lines  # the labels, then the title's lines
    note = dict(text="chance<br>50%", x=0.5, y=1, xref="x", yref="y domain", yanchor="bottom", showarrow=False)
    noted = for_page(go.Figure(layout=dict(title="t", margin=dict(t=20), annotations=[note])))
    assert noted.layout.margin.t >= 2 * 18 > MIN_TOP
    inside = dict(note, yanchor="top")  # hanging from the top edge, inside the plot: no room needed
    assert for_page(go.Figure(layout=dict(title="t", annotations=[inside]))).layout.margin.t == MIN_TOP


def test_for_page_changes_nothing_else_and_twice_nothing_more():
    short = go.Figure(layout=dict(xaxis_title="key", yaxis_title="query", margin=dict(t=MIN_TOP)))
    assert for_page(go.Figure(short)).to_dict() == short.to_dict()
    once = for_page(go.Figure(layout=dict(title=LONG_TITLE, xaxis_title=LONG_TITLE, yaxis_title=LONG_TITLE)))
    assert for_page(go.Figure(once)).to_dict() == once.to_dict()


def test_label_html_shows_a_figures_text_as_plotly_does_and_makes_none_of_it_markup():
    assert (
        label_html("0 &lt;script&gt;alert(1)&lt;/script&gt; a&amp;b")
        == "0 &lt;script&gt;alert(1)&lt;/script&gt; a&amp;b"
    )
    assert (
        label_html("<b>QK<sup>T</sup></b><br>x<sub>i</sub> <i>it") == "<b>QK<sup>T</sup></b><br>x<sub>i</sub> <i>it</i>"
    )
    # tags plotly draws none of are dropped, their words kept; a closing tag closes what it holds, a stray one goes
    assert label_html('<img src=x onerror="alert(1)"><script>x</script> <a href="javascript:y">y</a>') == "x y"
    assert label_html("<b>a <i>b</b> c</i> d") == "<b>a <i>b</i></b> c d"
    assert label_html('don\'t & "quote" 猫') == 'don\'t &amp; "quote" 猫'


def test_figure_title_reads_a_title_written_either_way():
    assert figure_title({"title": "plain"}) == ("plain", "")
    assert figure_title({"title": {"text": "t", "subtitle": {"text": "s"}}}) == ("t", "s")
    assert figure_title({}) == ("", "") and figure_title({"title": {"x": 0.05}}) == ("", "")


def test_for_page_gives_each_panel_its_share_and_sets_a_narrow_panels_words_smaller():
    """Five panels in a row (/transformer-xl's masks): about 60 px each on a phone, so 'independent segments' goes
    on two lines in type small enough for 'independent'; a dict figure (as the app draws some) the same."""
    fig = make_subplots(rows=1, cols=5, subplot_titles=["independent segments", "XL memory", "a", "b", "c"])
    as_dict = for_page(fig.to_dict())
    for_page(fig)
    first = fig.layout.annotations[0]
    assert first.text == "independent<br>segments" and first.font.size < 16
    share = fig.layout.xaxis.domain[1] - fig.layout.xaxis.domain[0]
    assert label_columns("independent") <= columns_in(PHONE_FIGURE_PX * share, first.font.size)
    assert fig.layout.annotations[2].text == "a" and fig.layout.margin.t >= 2 * 20  # room above for two lines
    assert as_dict["layout"] == fig.to_dict()["layout"]


def test_for_page_cuts_an_x_axis_title_to_its_panels_share():
    fig = make_subplots(rows=1, cols=2)
    fig.update_xaxes(title_text="key: source token (from the encoder's output)", row=1, col=2)
    for_page(fig)
    share = fig.layout.xaxis2.domain[1] - fig.layout.xaxis2.domain[0]
    lines = fig.layout.xaxis2.title.text.split("<br>")
    assert len(lines) > 1 and all(label_columns(x) <= columns_in(PHONE_FIGURE_PX * share, 14) for x in lines)


def test_for_page_cuts_a_y_title_taller_than_the_plot_and_leaves_a_grids_panels_alone():
    # /rnn-attention's map in ja at 390 px: the y title, stood up the plot, ran over the figure's title
    text = "書かれたトークン (クエリ: デコーダの状態)"
    fig = go.Figure(layout=dict(height=380, margin=dict(t=50, b=10), yaxis_title_text=text))
    for_page(fig)
    plot_px = 380 - 50 - 10 - 90  # less a bottom x axis's rotated labels and title
    lines = fig.layout.yaxis.title.text.split("<br>")
    assert len(lines) == 2 and all(label_columns(x) <= columns_in(plot_px, 14) for x in lines)
    grid = make_subplots(rows=3, cols=1)
    grid.update_yaxes(title_text=text, row=2, col=1)
    assert for_page(grid).layout.yaxis2.title.text == text  # beside empty margin: left standing in one line


def test_for_page_measures_a_panel_under_a_full_width_row_by_its_own_width():
    """/multi-head's grid: a third-width panel under a panel spanning the row above (whose domain holds its x too)."""
    specs = [[{"colspan": 3}, None, None], [{}, {}, {}]]
    fig = make_subplots(rows=2, cols=3, specs=specs, subplot_titles=["X (13 × 384)", "A_0: weights (13 × 13)", "", ""])
    for_page(fig)
    assert fig.layout.annotations[0].text == "X (13 × 384)"
    share = fig.layout.xaxis2.domain[1] - fig.layout.xaxis2.domain[0]
    lines = fig.layout.annotations[1].text.split("<br>")
    assert len(lines) > 1 and all(label_columns(x) <= columns_in(PHONE_FIGURE_PX * share, 16) for x in lines)


def test_for_page_cuts_titles_to_a_laptops_figure_only_where_they_do_not_fit_it():
    """/multi-head's third-width panels and /moe's top axis: cut to a phone's figure, 'Q_0 (13 × 32)' read 'Q_0 (13'
    over '× 32)' on a laptop too; fitted to a laptop's (a page whose browser is not a phone's: app/ui.figure_px) they
    stay whole, and a title too long even there is cut to the laptop's width, not the phone's."""
    top_axis = "expert   (● chosen (top-2), ✕ dropped (expert full))"  # 47 columns: a phone has 44 at 14 px
    long_panel = "Layer output after W^O, residuals, LayerNorm and the feed-forward block (13 × 384)"

    def grid():
        fig = make_subplots(rows=2, cols=3, specs=[[{"colspan": 3}, None, None], [{}, {}, {}]],
                            subplot_titles=[long_panel, "Q_0 (13 × 32)", "K_0 (13 × 32)", "V_0 (13 × 32)"])  # fmt: skip
        return fig.update_xaxes(title_text=top_axis, side="top", row=1, col=1)

    phone, laptop = for_page(grid()), for_page(grid(), LAPTOP_FIGURE_PX)
    assert phone.layout.annotations[1].text != "Q_0 (13 × 32)"  # two lines on a phone
    assert [a.text for a in laptop.layout.annotations[1:]] == ["Q_0 (13 × 32)", "K_0 (13 × 32)", "V_0 (13 × 32)"]
    assert "<br>" in phone.layout.xaxis.title.text and laptop.layout.xaxis.title.text == top_axis
    lines = laptop.layout.annotations[0].text.split("<br>")
    assert len(lines) < len(phone.layout.annotations[0].text.split("<br>"))
    assert all(label_columns(x) <= columns_in(LAPTOP_FIGURE_PX, 16) for x in lines) and len(lines) == 2


@pytest.mark.parametrize("as_dict", [False, True])
def test_for_page_cuts_an_x_title_to_the_plot_the_rows_labels_leave(as_dict):
    """/encoder-decoder's cross map in ja with a long text at 390 px: its rows labelled by a Japanese sentence (48
    columns) pushed the plot right, and the key axis's title, centred on the plot, ran past the figure's right edge
    (chromium). It is cut to what the rows' labels and the y title leave; with nothing beside the plot it stays whole."""
    title = "キー: ソーストークン（エンコーダの出力から）"  # 44 columns: a phone's whole figure holds 44 at 14 px
    long_rows = ["0 <2ja>", "1 北の海岸を四十年見守ってきた灯台守は、若い技術…"]

    def sent(rows, y_title="クエリ"):
        fig = go.Figure(go.Heatmap(z=[[0.5, 0.5], [0.5, 0.5]], x=["0 a", "1 b"], y=rows))
        fig.update_layout(xaxis_title_text=title, yaxis_title_text=y_title)
        return for_page(fig.to_dict() if as_dict else fig)

    lines = str(layout(sent(long_rows))["xaxis"]["title"]["text"]).split("<br>")
    # the plot's centre stood 223 px from the figure's left edge (the labels' margin stops at about 0.4 of it)
    assert len(lines) == 2 and all(label_columns(x) <= columns_in(2 * (PHONE_FIGURE_PX - 223), 14) for x in lines)
    assert layout(sent(None, None))["xaxis"]["title"]["text"] == title  # nothing beside the plot: whole


@pytest.mark.parametrize("as_dict", [False, True])
def test_for_page_cuts_an_x_title_to_the_plot_a_numeric_y_axiss_labels_leave(as_dict):
    """A line chart's y axis writes its numbers ('400μ') left of the plot, and plotly centres the x axis's title on the
    plot: fitted to what the y title alone leaves of a phone's figure (41 columns), a Japanese title of 40 stood whole,
    drawn from 39 to 361 px in the 358 px figure, the numbers pushing the plot 52 px right (chromium, plotly.js with
    the axes' automargin as Streamlit's theme sets it). It is cut to what the numbers and the y title leave (drawn 95
    to 305 px); a y axis with no numbers leaves it whole."""
    title = "テキストでの位置（それより前に見たトークン数）"  # 23 wide characters: 40 columns

    def x_title(numbers: bool) -> str:
        fig = go.Figure(go.Scatter(x=[0, 1, 2], y=[0.00011, 0.00042, 0.00035]))
        fig.update_layout(xaxis_title_text=title, margin=dict(l=10, r=10))
        fig.update_yaxes(showticklabels=numbers, title_text="loss" if numbers else "")
        return str(layout(for_page(fig.to_dict() if as_dict else fig))["xaxis"]["title"]["text"])

    # as plotly writes them: '100μ' to '400μ' (exponentformat B), '0.001' to '0.004', '25k', '−1.5'
    assert number_ticks_columns([0.00011, 0.00042]) == 4 and number_ticks_columns([0.0011, 0.0042]) == 5
    assert number_ticks_columns([0, 25000]) == 3 and number_ticks_columns([-1.5, 0.5]) == 4
    lines = x_title(True).split("<br>")
    beside = 4 * COLUMN_EM * 12 + 18  # the numbers and the y title standing up
    assert len(lines) == 2 and all(label_columns(x) <= columns_in(PHONE_FIGURE_PX - beside, 14) for x in lines)
    assert x_title(False) == title


def layout(fig) -> dict:
    return fig["layout"] if isinstance(fig, dict) else fig.layout.to_plotly_json()


def test_for_page_fits_a_grids_panels_x_title_across_its_share_whatever_its_rows_labels():
    """/multi-head's A_0 panel in ja (a third of the figure, its rows '0 [CLS]' ... beside it): its key axis's title
    'キートークン（列）' is cut across the panel's share as before, in two lines; narrowed by the rows' labels it was cut
    into four lines of one or two characters and ran into the panel title below (chromium, 390 px)."""
    fig = make_subplots(rows=1, cols=3)
    rows = [f"{i} {w}" for i, w in enumerate("[CLS] the cat sat on the mat because it was tired . [SEP]".split())]
    fig.add_trace(go.Heatmap(z=[[0.1] * 13] * 13, y=rows), row=1, col=1)
    fig.update_xaxes(title_text="キートークン（列）", row=1, col=1)
    fig.update_yaxes(title_text="トークン（行: クエリ）", row=1, col=1)
    lines = for_page(fig).layout.xaxis.title.text.split("<br>")
    assert len(lines) == 2, lines


def test_for_page_cuts_a_whole_width_panels_title_to_the_plot_its_rows_labels_leave():
    """/multi-head's ko 'Concat' panel (a whole row of its grid, its rows labelled by tokens) at 390 px: its title,
    centred on the plot that the rows' labels push right, ran 3 px past the figure's right edge (chromium). It is
    cut to what the rows' labels leave; a panel with nothing beside it keeps its title whole, a third-width one is
    cut across its share as before."""
    title = "12개 헤드 Z의 연결 (384열, 헤드 경계 표시)"  # about 37 columns: a phone's figure holds 38 at 16 px

    def fitted(rows):
        fig = make_subplots(rows=2, cols=3, specs=[[{"colspan": 3}, None, None], [{}, {}, {}]],
                            subplot_titles=[title, "Q", "K", "V"])  # fmt: skip
        fig.add_trace(go.Heatmap(z=[[0.5, 0.5], [0.5, 0.5]], y=rows), row=1, col=1)
        return for_page(fig).layout.annotations[0].text

    assert fitted(None) == title and label_columns(title) <= columns_in(PHONE_FIGURE_PX, 16)
    lines = fitted(["0 [CLS]", "1 안개가", "2 [SEP]"]).split("<br>")
    assert len(lines) == 2 and "".join(lines).replace(" ", "") == title.replace(" ", "")
