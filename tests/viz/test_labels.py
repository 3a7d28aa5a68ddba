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
from viz.labels import (
    PHONE_FIGURE_PX,
    TITLE_PX,
    columns_in,
    fit_titles,
    label_columns,
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


def columns(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in html.unescape(line))


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


def test_fit_titles_cuts_a_long_title_makes_room_above_it_and_keeps_the_plot_its_height():
    fig = go.Figure(layout=dict(title=LONG_TITLE, height=400, margin=dict(t=50)))
    fit_titles(fig)
    lines = fig.layout.title.text.split("<br>")
    fit = columns_in(PHONE_FIGURE_PX, TITLE_PX)  # 36 columns of 17 px type
    assert len(lines) == 3 and all(label_columns(line) <= fit for line in lines), lines
    assert " ".join(lines) == html.escape(LONG_TITLE, quote=True)
    top = fig.layout.margin.t
    assert top >= 3 * 17 and fig.layout.height == 400 + top - 50  # the plot keeps its 350 px
    assert fig.layout.title.yanchor == "top" and fig.layout.title.yref == "container"


def test_fit_titles_leaves_what_fits_and_fitting_twice_changes_nothing():
    short = go.Figure(layout=dict(title="Attention weights", xaxis_title="key", yaxis_title="query"))
    assert fit_titles(go.Figure(short)).to_dict() == short.to_dict()
    once = fit_titles(go.Figure(layout=dict(title=LONG_TITLE, xaxis_title=LONG_TITLE, yaxis_title=LONG_TITLE)))
    assert fit_titles(go.Figure(once)).to_dict() == once.to_dict()


def test_fit_titles_gives_each_panel_its_share_and_sets_a_narrow_panels_words_smaller():
    """Five panels in a row (/transformer-xl's masks): about 60 px each on a phone, so 'independent segments' goes
    on two lines in type small enough for 'independent'; a dict figure (as the app draws some) the same."""
    fig = make_subplots(rows=1, cols=5, subplot_titles=["independent segments", "XL memory", "a", "b", "c"])
    as_dict = fit_titles(fig.to_dict())
    fit_titles(fig)
    first = fig.layout.annotations[0]
    assert first.text == "independent<br>segments" and first.font.size < 16
    share = fig.layout.xaxis.domain[1] - fig.layout.xaxis.domain[0]
    assert label_columns("independent") <= columns_in(PHONE_FIGURE_PX * share, first.font.size)
    assert fig.layout.annotations[2].text == "a" and fig.layout.margin.t > 100  # the panels' second line: room above
    assert as_dict["layout"] == fig.to_dict()["layout"]


def test_fit_titles_cuts_an_x_axis_title_to_its_panels_share():
    fig = make_subplots(rows=1, cols=2)
    fig.update_xaxes(title_text="key: source token (from the encoder's output)", row=1, col=2)
    fit_titles(fig)
    share = fig.layout.xaxis2.domain[1] - fig.layout.xaxis2.domain[0]
    lines = fig.layout.xaxis2.title.text.split("<br>")
    assert len(lines) > 1 and all(label_columns(x) <= columns_in(PHONE_FIGURE_PX * share, 14) for x in lines)


def test_fit_titles_cuts_a_y_title_taller_than_the_plot_and_leaves_a_grids_panels_alone():
    # /rnn-attention's map in ja at 390 px: the y title, stood up the plot, ran over the figure's title
    text = "書かれたトークン (クエリ: デコーダの状態)"
    fig = go.Figure(layout=dict(height=380, margin=dict(t=50, b=10), yaxis_title_text=text))
    fit_titles(fig)
    plot_px = 380 - 50 - 10 - 90  # less a bottom x axis's rotated labels and title
    lines = fig.layout.yaxis.title.text.split("<br>")
    assert len(lines) == 2 and all(label_columns(x) <= columns_in(plot_px, 14) for x in lines)
    grid = make_subplots(rows=3, cols=1)
    grid.update_yaxes(title_text=text, row=2, col=1)
    assert fit_titles(grid).layout.yaxis2.title.text == text  # beside empty margin: left standing in one line


def test_fit_titles_measures_a_panel_under_a_full_width_row_by_its_own_width():
    """/multi-head's grid: a third-width panel under a panel spanning the row above (whose domain holds its x too)."""
    specs = [[{"colspan": 3}, None, None], [{}, {}, {}]]
    fig = make_subplots(rows=2, cols=3, specs=specs, subplot_titles=["X (13 × 384)", "A_0: weights (13 × 13)", "", ""])
    fit_titles(fig)
    assert fig.layout.annotations[0].text == "X (13 × 384)"
    share = fig.layout.xaxis2.domain[1] - fig.layout.xaxis2.domain[0]
    lines = fig.layout.annotations[1].text.split("<br>")
    assert len(lines) > 1 and all(label_columns(x) <= columns_in(PHONE_FIGURE_PX * share, 16) for x in lines)
