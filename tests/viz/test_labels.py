"""viz/labels.py: learner text in figure labels is escaped (never markup), clipped, and newlines/tabs are shown; a
long title is cut into lines of a width, where English, Japanese and Korean each allow a break."""

import html
import unicodedata

import pytest

from app import i18n
from core.pooling import MAX_LABEL_CHARS
from viz.labels import safe_label, wrapped_label


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
