"""Text that goes into figures. Plotly renders a small HTML subset in labels (<b>, <a>, <br>), so user text
is escaped to entities: '<script>' shows as text and never becomes markup."""

import functools
import html
import unicodedata

from core.pooling import MAX_LABEL_CHARS, clip_label
from core.pooling import indexed_labels as indexed_labels  # token labels are data, made in core; re-exported


def safe_label(text: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    return html.escape(clip_label(_one_line(text), max_chars), quote=True)


def _one_line(text) -> str:
    return str(text).replace("\n", "⏎").replace("\t", "⇥")


# Where a line may end: at a space; in text set solid (Japanese, Chinese) also after punctuation and before an opening
# bracket, and at a pinch between any two of its characters; never before closing punctuation, nor between a mark
# (✕) and the word it stands before. Korean sets spaces
# between words, so a Hangul word is kept whole, as a Latin one is.
_NO_LINE_START = set("、。，．,.:：;；!！?？)）」』】〕〉》ー・…")
_OPENING = set("（「『【〔〈《")
_SOLID_PUNCTUATION = set("、。，．：；！？）」』】〕〉》")


def _cells(ch: str) -> int:
    """Columns a character takes: 2 for East Asian wide and full-width ones, 1 for the rest."""
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _solid(ch: str) -> bool:
    """A wide character of a script set without spaces (not Hangul)."""
    return _cells(ch) == 2 and not (
        0x1100 <= ord(ch) <= 0x11FF or 0x3130 <= ord(ch) <= 0x318F or 0xAC00 <= ord(ch) <= 0xD7AF
    )


def _pieces(text: str, anywhere: bool) -> list[str]:
    """The text cut where a line may end (`anywhere`: between two solid characters too); a piece ending in a space
    gives it up at a line's end."""
    pieces, start = [], 0
    for i in range(len(text) - 1):
        ch, nxt = text[i], text[i + 1]
        if nxt in _NO_LINE_START or nxt == " " or (ch == " " and i and unicodedata.category(text[i - 1]) == "So"):
            continue  # nor after a mark standing before its word (a figure's ✕ and what it means)
        if ch == " " or nxt in _OPENING or ch in _SOLID_PUNCTUATION or (anywhere and _solid(ch) and _solid(nxt)):
            pieces.append(text[start : i + 1])
            start = i + 1
    return [*pieces, text[start:]]


def _fill(pieces: list[str], width: int) -> list[str]:
    lines, line = [], ""
    for piece in pieces:
        if line and _width(line + piece) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece
    return [*lines, line.rstrip()]


def _width(line: str) -> int:
    return sum(map(_cells, line.rstrip()))


def label_columns(label: str) -> int:
    """Columns a figure's (escaped) label takes as drawn: a wide character two, an entity one."""
    return _width(html.unescape(label))


def _balanced(pieces: list[str], width: int) -> list[str]:
    """The fewest lines of at most `width` columns (a piece wider than that alone on its line), as even as that
    number allows: the narrowest width that gives no more lines and no wider one."""
    lines = _fill(pieces, width)
    widest = max(map(_width, lines))
    while widest > 1:
        narrower = _fill(pieces, widest - 1)
        if len(narrower) > len(lines) or max(map(_width, narrower)) >= widest:
            break
        lines, widest = narrower, max(map(_width, narrower))
    return lines


@functools.lru_cache(maxsize=256)  # a page's titles recur at every run: 0.3 ms each to cut anew
def wrapped_label(text: str, width: int, max_chars: int = 400) -> str:
    """A figure's text (escaped as safe_label does) in as few lines as fit `width` columns (a wide character takes
    two), as even as that allows, joined by plotly's <br>: plotly never wraps a title or an axis title itself, so a
    long one runs off a phone's figure or into the tick labels. Lines end at spaces, after punctuation or before a
    bracket, never between a mark and the word after it; text set solid is cut between characters only where that
    gives fewer lines."""
    text = clip_label(_one_line(text), max_chars)
    at_breaks, anywhere = _balanced(_pieces(text, False), width), _balanced(_pieces(text, True), width)
    lines = at_breaks if len(at_breaks) <= len(anywhere) and _width(max(at_breaks, key=_width)) <= width else anywhere
    return "<br>".join(html.escape(line, quote=True) for line in lines)
