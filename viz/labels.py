"""Text that goes into figures. Plotly renders a small HTML subset in labels (<b>, <a>, <br>), so user text
is escaped to entities: '<script>' shows as text and never becomes markup."""

import base64
import functools
import html
import math
import re
import unicodedata

import numpy as np

from core.pooling import COLUMN_EM, MAX_LABEL_CHARS, char_columns, clip_label, is_hangul, is_wide
from core.pooling import HANGUL_EM as HANGUL_EM  # how wide a character is drawn: measured, declared in core
from core.pooling import WIDE_EM as WIDE_EM
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


def _solid(ch: str) -> bool:
    """A wide character of a script set without spaces (not Hangul)."""
    return is_wide(ch) and not is_hangul(ch)


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


def _width(line: str) -> float:
    return sum(map(char_columns, line.rstrip()))


def label_columns(label: str) -> float:
    """Columns a figure's (escaped) label takes as drawn (a Latin character one, a wide one about 1.7, an entity
    one)."""
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
    """A figure's text (escaped as safe_label does) in as few lines as fit `width` columns (label_columns: a kana
    or kanji about 1.7, a Hangul syllable 1.6), as even as that allows, joined by plotly's <br>: plotly never wraps
    a title or an axis title itself, so a long one runs off a phone's figure or into the tick labels. Lines end at
    spaces, after punctuation or before a bracket, never between a mark and the word after it; text set solid is cut
    between characters only where that gives fewer lines."""
    text = clip_label(_one_line(text), max_chars)
    at_breaks, anywhere = _balanced(_pieces(text, False), width), _balanced(_pieces(text, True), width)
    lines = at_breaks if len(at_breaks) <= len(anywhere) and _width(max(at_breaks, key=_width)) <= width else anywhere
    return "<br>".join(html.escape(line, quote=True) for line in lines)


# A phone's figure, for what stays in it: plotly wraps no text, so an axis's or a panel's title is cut into lines that
# fit it. The narrowest figure each kind of screen draws, a page's whole column (chromium, Streamlit 1.67, wide layout,
# results/tablet_layout.json): a 390 px phone 358 px; a window over 768 px opens the sidebar, so an 800 px tablet held
# upright 468 (an iPad's 820: 488, a phone on its side 844: 512); a laptop's window 640 at 1,100 px, 906 at 1366. A
# page fits a figure to the kind its browser says it is (app/ui.figure_px); figures side by side to their own width
# (app/ui.beside).
# A column, a Latin character, is COLUMN_EM of the type's size, a kana or kanji about 1.7 columns, a Hangul syllable
# 1.6 (core.pooling.char_columns: measured in chromium). Plotly's own sizes where a figure sets none: title 1.4 and
# axis titles 1.17 times the 12 px font, make_subplots' panel titles 16 px. (The figure's own title is not drawn in
# it: see for_page.)
PHONE_FIGURE_PX = 358
TABLET_FIGURE_PX = 468
LAPTOP_FIGURE_PX = 640
# The widths (px) a figure fitted for each kind is drawn at, from the narrowest to the widest of the screens of that
# kind as they are read (chromium, Streamlit 1.67): a tablet held upright from an 800 px Android tablet to an 820 px
# iPad, a laptop's window from 1,100 px to 1,366. A phone's upright only: on its side (844 px, drawn 512) a map fitted
# for the middle of the two would leave a quarter of its room blank held upright too, as a phone is mostly read. A
# figure fitted for another width (beside others, in the sidebar) is drawn that wide.
DRAWN_PX = {PHONE_FIGURE_PX: (358, 358), TABLET_FIGURE_PX: (468, 488), LAPTOP_FIGURE_PX: (640, 906)}
# Streamlit's sidebar (1.67: 18.75rem, 300 px, wide or narrow window; a phone's opens over the page at the same
# width) leaves 240 px for what stands in it, measured in chromium at 1366, 1100 and 800 px: a study room's
# learner panel draws the step's figure and the class's answers there (app/ui.in_sidebar)
SIDEBAR_FIGURE_PX = 240
# Figures beside one another (app/ui.beside) are drawn each as wide as n of them fit on one line of a 1,280 px laptop
# window's column, with Streamlit's small gap between: 256 px three, 392 two. The main column with the sidebar open
# (chromium, Streamlit 1.67, results/beside_rows.json) is 640 px at a 1,100 px window, 820 at 1,280, 906 at 1,366,
# 10 px less each where the browser draws a scroll bar (a desktop Chrome's: playwright hides it): 630, 810, 896. A row
# sized for 1,366's column (880) wrapped pairs and triples one per line at 1,280, the right half of the page blank;
# 800 stands on one line at 1,280 and 1,366 with a scroll bar and 10 px to spare (at 1,100 they still wrap)
BESIDE_ROW_PX, BESIDE_GAP_PX = 800, 16
FONT_PX, TITLE_PX, AXIS_TITLE_PX, PANEL_TITLE_PX = 12, 17, 14, 16
PANEL_TITLE_LINE, AXIS_TITLE_LINE, TOP_AXIS_LABELS = 20, 18, 60  # px: per line of each; a top x axis's labels (/moe)
# px above the plot when nothing else is: plotly's tool bar (the camera button) stands there, over no data
MIN_TOP = 30
ROW_LABELS_AT_MOST = 0.4  # of a figure's width: what a map's rows' labels push its plot right, at most (chromium)
ABOVE_PAD = 8  # px between what stands above the plot and the figure's top edge
MIN_REDUCED_PX = 64  # plotly's layout.minreducedheight: a plot whose axes push its margins is kept this tall
# px chromium leaves between a y axis's title and its labels, and between them and the plot (the model view's layer
# numbers at 390 and 1366 px: the plot starts 66 px into the figure, title 19 px and numbers 6 px wide)
Y_LABELS_GAP = 16
X_AXIS_BELOW = (
    90  # px under the plot a bottom x axis's rotated labels and title take (a y title stands beside the rest)
)


def beside_px(n: int) -> int:
    """The width of each of n figures beside one another (BESIDE_ROW_PX)."""
    return (BESIDE_ROW_PX - (n - 1) * BESIDE_GAP_PX) // n


def columns_in(px: float, font_px: float) -> int:
    """How many columns of `font_px` type fit `px` pixels (by the estimate above)."""
    return max(1, int(px / (COLUMN_EM * font_px)))


MIN_TITLE_PX = 9  # a title whose longest word is wider than its panel is set smaller, down to this
# What stands right of a map's plot (px): its colour bar with its numbers and its title standing up its side, from the
# plot's edge (chromium, /masks' maps drawn 282 px wide; viz.heatmap); with a short title across the bar's top
# instead, less: 18 px back to the plot for /moe's 'share', 10 for /flash-attention's 'weight' (chromium, 392 px), the
# lesser counted
COLOUR_BAR_PX, COLOUR_BAR_TOP_TITLED_PX = 74, 64
# A map's cell labels. Plotly sets every label of a map in one type, the largest in which the longest line of any
# label fits the narrowest cell (CELL_CHAR_EM of the type a character, lines CELL_LINE_EM apart) up to the figure's
# font (plotly.js, traces/heatmap/plot.js): one decimal more on every label shrinks them all. Numbers set under
# CELL_TEXT_AT_LEAST px are not read on a phone (/moe's share maps labelled '12.5%' came to 5 and 6 px at 390 px,
# chromium: results/phone_cell_text.json); the colour, the hover, the caption and the table say them still.
CELL_TEXT_AT_LEAST = 9
CELL_CHAR_EM, CELL_LINE_EM = 0.65, 1.3
# The type is estimated from the figure's width (what stands beside its plot counted to some 10 px of what chromium
# draws: 151 to 193 px against 159 to 188), with no pixel of slack: one let /moe's layer loads, estimated 8 px beside
# each other at a 1,280 px window, be drawn in 8 px type, and a phone's too (their colour bar's title now stands
# across its top: 9 px). scripts/phone_layout_check.py reports what is drawn smaller.
# a label that is a number or an interval of numbers ('63.2%', '[58.1%,<br>68.0%]', '−0.25'), not a mark or a word
_NUMBER_LABEL = re.compile(r"[\s\d.,%+\-−\[\]()]*\d[\s\d.,%+\-−\[\]()]*")
# A map's marks (a cell's label of one character: /masks' cross, /kv-cache's half-filled circle) are wider than
# CELL_CHAR_EM, the width plotly fits its type to: a cross in 9 px type is 8 px wide, in 12 px 10 (chromium), so
# plotly set crosses wider than cells 6 px wide (/why-head's maps on a phone) and touching at 8 px (/kv-cache's
# steps). A mark is set in type whose width, MARK_EM of it, fits its cell; where that is under CELL_TEXT_AT_LEAST
# px it is left out, its cell's colour (masked grey, evicted grey) saying it still.
MARK_EM = 0.95
# A heatmap's meta where its cells' labels are words its hover says too (/logit-lens' top tokens: 8 characters in 19
# positions' cells, 31 x 19 px at a 1,280 px window, set in 5 px type): left out, as numbers are, where a figure's
# width would set them under CELL_TEXT_AT_LEAST px
LABELS_IN_HOVER = {"cell_labels": "in hover"}


def fitted_title(text: str, px: float, font_px: float) -> tuple[str, float]:
    """An axis's or a panel's title as drawn (escaped, lines joined by <br>) and its type size: cut anew where a line
    is wider than `px` pixels, in smaller type (not under MIN_TITLE_PX) where a word alone is wider. A title whose
    every line fits is returned as it is (so fitting twice changes nothing)."""
    lines = str(text).split("<br>")
    if all(label_columns(line) <= columns_in(px, font_px) for line in lines):
        return text, font_px
    plain = " ".join(html.unescape(line) for line in lines)
    size = font_px
    while True:
        fitted = wrapped_label(plain, columns_in(px, size))
        if size <= MIN_TITLE_PX or max(map(label_columns, fitted.split("<br>"))) <= columns_in(px, size):
            return fitted, size
        size -= 1


def for_page(fig, width: int = PHONE_FIGURE_PX):
    """A figure as a page draws it: without its title, which the page sets as text above it (title_html), where the
    browser wraps it to any screen (plotly wraps no text: a title cut to fit a phone read as a narrow column of two or
    three lines on a laptop's full-width figure); what stays in it cut into lines that fit a figure `width` px wide (a
    phone's unless the page knows better: cut to a phone's, /multi-head's panel titles read 'Q_0 (13' over '× 32)' on
    a laptop): x axes' titles and make_subplots' panel titles, each across the width it has (a panel's or an axis's share of the figure),
    and a y axis's title that stands up the whole plot's height (the figure's, less its margins and a bottom x axis's
    labels) taller than that. The top margin is what still stands above the plot needs (a top x axis's labels and
    title, the top row's panel titles, a note set on the plot's top edge; legends and colour bars make their own room),
    at least MIN_TOP; the plot keeps its height. Takes a plotly figure or its dict (app/ui.py fits the dict it sends);
    returns it, changed in place."""
    as_dict = isinstance(fig, dict)
    layout = fig.get("layout", {}) if as_dict else fig.layout.to_plotly_json()
    changes: dict = {}
    font = (layout.get("font") or {}).get("size") or FONT_PX
    margin = layout.get("margin") or {}
    above = MIN_TOP  # px the plot needs above it: the tool bar, a top x axis, panel titles, notes
    for name, axis in layout.items():
        if name.startswith("xaxis") and isinstance(axis, dict):
            lo, hi = axis.get("domain", (0, 1))
            axis_title = axis.get("title")
            text = axis_title.get("text") if isinstance(axis_title, dict) else axis_title
            fitted = text
            if text:
                size = ((axis_title if isinstance(axis_title, dict) else {}).get("font") or {}).get("size")
                size = size or round(font * AXIS_TITLE_PX / FONT_PX)
                # centred on the plot, which a map's rows' labels push right (plotly's margin for them stops short:
                # longer ones run off the left edge); a grid's panels are left as they are: fitted to what the rows'
                # labels leave, /multi-head's ja key axis went to three lines and met the panel title below
                whole = lo < 0.01 and hi - lo > 0.99
                beside = min(_row_labels_px(fig, layout, name, font), ROW_LABELS_AT_MOST * width) if whole else 0
                fitted, fitted_size = fitted_title(text, (width - beside) * (hi - lo), size)
                if fitted != text:
                    changes[name] = dict(title=dict(text=fitted, font=dict(size=fitted_size)), automargin=True)
            if axis.get("side") == "top":
                lines = fitted.count("<br>") + 1 if fitted else 0
                above = max(above, TOP_AXIS_LABELS + AXIS_TITLE_LINE * lines + ABOVE_PAD)
    plot_px = (layout.get("height") or 450) - margin.get("t", 100) - margin.get("b", 80) - X_AXIS_BELOW
    cut = _undrawn_px(layout, width, font) or _undrawn_panels_px(fig, layout, width, font)
    plot_px -= cut
    for name, axis in layout.items():  # a full-height y axis's title stands up the plot's height, no higher
        if name.startswith("yaxis") and isinstance(axis, dict):
            axis_title = axis.get("title")
            text = axis_title.get("text") if isinstance(axis_title, dict) else axis_title
            lo, hi = axis.get("domain", (0, 1))
            # a grid's panel's title may run past its row into the empty margin beside the rows next to it:
            # wrapped to one row it would widen that margin and narrow every panel
            if text and hi - lo > 0.99:
                size = ((axis_title if isinstance(axis_title, dict) else {}).get("font") or {}).get("size")
                size = size or round(font * AXIS_TITLE_PX / FONT_PX)
                fitted, fitted_size = fitted_title(text, max(plot_px, 0) * (hi - lo), size)
                if fitted != text:
                    changes[name] = dict(title=dict(text=fitted, font=dict(size=fitted_size)), automargin=True)
    notes = [dict(n) for n in layout.get("annotations") or ()]
    for note in notes:
        if _panel_title(note):
            axis, share = _panel_axis(layout, note)
            # a panel across the whole figure stands right of its rows' labels, as a whole x axis's title does:
            # /multi-head's ko 'Concat' title, centred on its panel, ran 3 px past the figure's right edge at 390 px
            whole = share > 0.99 and axis is not None
            beside = min(_row_labels_px(fig, layout, axis, font), ROW_LABELS_AT_MOST * width) if whole else 0
            size = (note.get("font") or {}).get("size") or PANEL_TITLE_PX
            fitted, fitted_size = fitted_title(note["text"], (width - beside) * share, size)
            if fitted != note["text"]:
                note["text"], note["font"] = fitted, {**(note.get("font") or {}), "size": fitted_size}
            if note.get("y", 0) >= 0.999:  # the top row's stand in the space above the panels
                lines = note["text"].count("<br>") + 1
                above = max(above, PANEL_TITLE_LINE * lines + ABOVE_PAD)
        elif _on_top_edge(note):
            lines = str(note.get("text") or "").count("<br>") + 1
            above = max(above, AXIS_TITLE_LINE * lines + ABOVE_PAD)
    if any(n.get("text") != o.get("text") for n, o in zip(notes, layout.get("annotations") or ())):
        changes["annotations"] = notes
    # numbers on a map's cells that this width would set too small to read are left to its colour and hover
    unlabelled = _unreadable_cell_labels(fig, layout, width, plot_px, font, changes)
    marks = {i: size for i, size in fitted_marks(fig, layout, width, font, changes).items() if i not in unlabelled}
    top = margin.get("t", 100)
    if above != top:
        changes["margin"] = dict(margin, t=above)
    if above != top or cut:  # the plot keeps its height, or takes what its width draws
        changes["height"] = (layout.get("height") or 450) + above - top - cut
    if as_dict:
        fig["layout"] = _merged(layout, changes)
        fig["layout"].pop("title", None)
        if unlabelled:  # the traces copied where changed: a shared figure's dict is fitted for every width
            fig["data"] = [
                {k: v for k, v in trace.items() if k not in ("text", "texttemplate")} if i in unlabelled else trace
                for i, trace in enumerate(fig["data"])
            ]
        if marks:
            fig["data"] = [_with_marks(trace, marks[i]) if i in marks else trace for i, trace in enumerate(fig["data"])]
    else:
        fig.update_layout(changes)
        fig.layout.title = None
        for i in unlabelled:
            fig.data[i].update(text=None, texttemplate=None)
        for i, size in marks.items():
            fig.data[i].update(textfont=dict(size=size)) if size else fig.data[i].update(text=None, texttemplate=None)
    return fig


def _with_marks(trace: dict, size: int) -> dict:
    """A copy of a map's trace with its marks set in `size` px type, or left out (0)."""
    if not size:
        return {k: v for k, v in trace.items() if k not in ("text", "texttemplate")}
    return trace | dict(textfont={**(trace.get("textfont") or {}), "size": size})


def mark_px(cell_px: float, size: float) -> int:
    """The type (px) a map's marks are set in, in cells `cell_px` wide, set in `size` px where they fit: as large
    as a mark (MARK_EM of it) fits the cell, up to `size`; 0 (left out) under CELL_TEXT_AT_LEAST."""
    fits = min(int(size), math.floor(cell_px / MARK_EM))
    return fits if fits >= CELL_TEXT_AT_LEAST else 0


def fitted_marks(fig, layout: dict, width: int, font: float, fitted: dict | None = None) -> dict[int, int]:
    """The maps of a figure `width` px wide whose marks (cells' labels of one character) are wider than their cells
    in the type they are set in: {trace's index: the type that fits (mark_px), or 0 to leave them out}. The plot is
    what the margins, the rows' labels and title (_unreadable_cell_labels') and a standing colour bar of any map on
    its axes leave of its share of the width."""
    margin = layout.get("margin") or {}
    traces = list(fig.get("data", ()) if isinstance(fig, dict) else fig.data)
    reads = [trace.get if isinstance(trace, dict) else trace.__getitem__ for trace in traces]
    found = {}
    for i, read in enumerate(reads):
        labels = _cell_labels(read)
        shown = [str(label) for row in labels or () for label in row if label]
        if not shown or max(map(len, shown)) != 1:
            continue
        xref = str(read("xaxis") or "x")
        xaxis = "xaxis" + xref[1:]
        beside = _row_labels_px(fig, layout, xaxis, font) + 2 * Y_LABELS_GAP
        for other in reads:  # a colour bar standing beside the plot (a lying one takes no width)
            if other("type") != "heatmap" or str(other("xaxis") or "x") != xref or other("showscale") is False:
                continue
            bar = other("colorbar") or {}
            bar = bar if isinstance(bar, dict) else bar.to_plotly_json()
            if bar.get("orientation") == "h":
                continue
            on_top = (bar.get("title") or {}).get("side") == "top"
            beside += COLOUR_BAR_TOP_TITLED_PX if on_top else COLOUR_BAR_PX
            break
        title = ((fitted or {}).get("yaxis" + str(read("yaxis") or "y")[1:]) or {}).get("title") or {}
        beside += AXIS_TITLE_LINE * str(title.get("text") or "").count("<br>")
        lo, hi = (layout.get(xaxis) or {}).get("domain", (0, 1))
        plot_width = (width - margin.get("l", 80) - margin.get("r", 80) - beside) * (hi - lo)
        textfont = read("textfont") or {}
        textfont = textfont if isinstance(textfont, dict) else textfont.to_plotly_json()
        size = textfont.get("size") or font
        fits = mark_px(plot_width / max(len(row) for row in labels), size)
        if fits != size:
            found[i] = fits
    return found


def rows_labels_px(columns: float, titled: bool, font: float = FONT_PX) -> float:
    """px a y axis's labels of `columns` columns and its title (one line, standing up) take left of the plot."""
    return columns * COLUMN_EM * font + Y_LABELS_GAP + (AXIS_TITLE_LINE + Y_LABELS_GAP) * titled


def scaled_plot_px(width: int, beside: float, margins: float) -> float:
    """px wide the plot of a map drawn to scale (its height set by its width) is fitted for, in a figure fitted for
    `width` (DRAWN_PX: drawn from its narrowest to its widest), `beside` px of labels beside the plot and `margins` px
    of the figure's left and right margins. Fitted for the narrowest, the widest draws the map no wider than that, its
    room beside it blank; for the widest, the narrowest leaves its room above it blank (/attention's grid, fitted for
    a 1,366 px window, used 59% of its height at 1,100 px, 198 px blank). Fitted for the geometric mean of the two
    plots' widths, it takes the same share of its room at both ends, the most both can take: at a laptop's 640 and
    906 px, 82% (564 / 830 = 0.82²). (The room beside a map its height leaves narrow is the plot's only where its
    labels keep their room in the margin: plotly lets them into the blank beside it otherwise: viz/grid.py.)"""
    lo, hi = DRAWN_PX.get(width, (width, width))
    return math.sqrt((lo - margins - beside) * (hi - margins - beside))


def _undrawn_px(layout: dict, width: int, font: float) -> int:
    """px of a plot's height that a figure fitted for `width` leaves blank: a plot whose y axis is drawn to its x axis's
    scale (scaleanchor, both ranges set, constrained to their domains: /attention's grid of heads) is only as tall as
    the width it is drawn at draws it, the rest of its height stood empty above it (about 330 px of a phone's model
    view; a laptop's was as tall as a 1,366 px window draws it, 284 px blank at 1,100 px): cut to the width
    scaled_plot_px fits it for."""
    x, y = layout.get("xaxis") or {}, layout.get("yaxis") or {}
    if y.get("scaleanchor") != "x" or y.get("constrain") != "domain" or not x.get("range") or not y.get("range"):
        return 0
    margin = layout.get("margin") or {}
    title = y.get("title")
    titled = bool(title.get("text") if isinstance(title, dict) else title)
    numbers = max(map(label_columns, map(str, y.get("ticktext") or ("",))))
    beside = rows_labels_px(numbers, titled, font)
    left = margin.get("l", 80)
    # labels that fit the left margin stand in it (viz/grid.py), else plotly pushes the margin by them
    beside, margins = (0, left + margin.get("r", 80)) if left >= beside else (beside, left + margin.get("r", 80))
    plot_width = scaled_plot_px(width, beside, margins)
    (x0, x1), (y0, y1) = x["range"], y["range"]
    drawn = plot_width * abs(y1 - y0) / abs(x1 - x0) * (y.get("scaleratio") or 1)
    plot = (layout.get("height") or 450) - margin.get("t", 100) - margin.get("b", 80)
    return max(0, int(plot - drawn))


def _shape(z) -> tuple[int, int] | None:
    """(rows, columns) of a heatmap's z: a list of rows, an array, or plotly's base64 dict ('shape': '12, 12')."""
    if isinstance(z, dict):
        shape = [int(n) for n in str(z.get("shape") or "").split(",") if n.strip()]
        return (shape[0], shape[1]) if len(shape) == 2 and min(shape) > 0 else None
    shape = getattr(z, "shape", None) or ((len(z), len(z[0])) if len(z) and hasattr(z[0], "__len__") else None)
    return (int(shape[0]), int(shape[1])) if shape and len(shape) == 2 and min(shape) > 0 else None


def _undrawn_panels_px(fig, layout: dict, width: int, font: float) -> int:
    """px of a row of panels' height that a figure `width` px wide leaves blank under them: maps of square cells (each
    x axis drawn to its y axis's scale, both constrained to their domains, the maps hung from the top: /transformer-xl's
    five masks) are as tall as their panel's width draws them, the rest of the plot's height stood empty under them
    (at 468 px, 28% of it drawn). Three lines are kept under them for their x axes' labels and title."""
    panels = []
    for trace in fig.get("data", ()) if isinstance(fig, dict) else fig.data:
        read = trace.get if isinstance(trace, dict) else trace.__getitem__
        z = read("z") if read("type") == "heatmap" else None
        xname, yname = "xaxis" + str(read("xaxis") or "x")[1:], "yaxis" + str(read("yaxis") or "y")[1:]
        x, y = layout.get(xname) or {}, layout.get(yname) or {}
        if z is None or x.get("scaleanchor") != "y" + yname[len("yaxis") :] or x.get("constrain") != "domain":
            continue
        shape = _shape(z)
        if y.get("constrain") != "domain" or y.get("constraintoward") != "top" or not shape:
            continue
        lo, hi = x.get("domain", (0, 1))
        panels.append((hi - lo, *shape))  # its share of the width, its rows and columns
    if not panels:
        return 0
    margin = layout.get("margin") or {}
    y = layout.get("yaxis") or {}
    title = y.get("title")
    titled = bool(title.get("text") if isinstance(title, dict) else title)
    numbers = max(len(str(rows - 1)) for _, rows, _ in panels)  # the first panel's rows' numbers beside it
    beside = numbers * COLUMN_EM * font + Y_LABELS_GAP + (AXIS_TITLE_LINE + Y_LABELS_GAP) * titled
    plot_width = scaled_plot_px(width, beside, margin.get("l", 80) + margin.get("r", 80))
    drawn = max(plot_width * share * rows / columns for share, rows, columns in panels)
    plot = (layout.get("height") or 450) - margin.get("t", 100) - margin.get("b", 80)
    # plotly keeps a plot at least layout.minreducedheight tall (64 px) by shrinking the margins its axes' labels
    # push, which set the panels' titles past the figure's top edge
    return max(0, int(plot - max(drawn, MIN_REDUCED_PX + ABOVE_PAD) - 3 * AXIS_TITLE_LINE))


def cell_text_px(labels, plot_px: tuple[float, float], font: float = FONT_PX) -> int:
    """The type (px) plotly sets a map's cell labels in, `labels` its rows of cells' text (lines joined by <br>), its
    plot `plot_px` (width, height) wide and tall: the largest in which the longest line fits the narrowest cell, the
    most lines its height, up to the figure's `font`. Plotly measures a cell between its neighbours' centres, each
    rounded to a pixel: the narrowest of cells 21.5 px wide is 21."""
    rows = [list(row) for row in labels]
    shown = [str(label).split("<br>") for row in rows for label in row if label]
    if not shown:
        return int(font)
    columns = max(len(row) for row in rows)
    chars = max(len(line) for lines in shown for line in lines)
    lines = max(len(lines) for lines in shown)
    wide = math.floor(plot_px[0] / columns) / max(chars, 1) / CELL_CHAR_EM
    tall = math.floor(plot_px[1] / len(rows)) / lines / CELL_LINE_EM
    return int(min(math.floor(wide), math.floor(tall), font))


# a map's texttemplate that is its z alone, to a format the page reads: '%{z}', '%{z:.2f}', '%{z:.1%}' (d3's fixed and
# percent formats, which Python's read alike)
_Z_TEMPLATE = re.compile(r"%\{z(?::(\.\d+[f%]))?\}")


def _cell_labels(read) -> list[list[str]] | None:
    """A heatmap's cells' labels as plotly writes them, rows of text, from its text (texttemplate '%{text}') or from
    its z through a texttemplate that formats z alone (/encoder-decoder's weights: '%{z:.2f}'; /masks' scores:
    '%{z}', a number plotly writes in its shortest form); None for a map labelled otherwise or not at all."""
    template = read("texttemplate")
    if read("type") != "heatmap" or not isinstance(template, str):
        return None
    if template == "%{text}":
        text = read("text")
        return [list(row) for row in text] if isinstance(text, (list, tuple)) else None
    form = _Z_TEMPLATE.fullmatch(template)
    z = _values(read("z")) if form else None
    if z is None or z.ndim != 2:
        return None
    spec = form.group(1) or ".6g"
    return [[format(float(v), spec) if np.isfinite(v) else "" for v in row] for row in z.tolist()]


def _values(z) -> np.ndarray | None:
    """A heatmap's z as an array of floats: a list of rows, an array, or plotly's base64 dict (what to_dict sends)."""
    if isinstance(z, dict):
        shape = tuple(int(n) for n in str(z.get("shape") or "").split(",") if n.strip())
        try:
            return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).astype(np.float64).reshape(shape)
        except (KeyError, TypeError, ValueError):
            return None
    try:
        return np.array(z, dtype=np.float64) if z is not None else None
    except (TypeError, ValueError):
        return None


def _labelled_with_numbers(read) -> list[list[str]] | None:
    """A heatmap's cells' labels (_cell_labels) where they are numbers in plotly's own type: numbers its colour and
    hover say too, not marks or tokens that only the labels show (but words its meta says its hover shows:
    LABELS_IN_HOVER); else None."""
    labels, font = _cell_labels(read), read("textfont") or {}
    if labels is None or (font.get("size") if isinstance(font, dict) else font.size) is not None:
        return None
    shown = [str(label).replace("<br>", " ") for row in labels for label in row if label]
    in_hover = read("meta") == LABELS_IN_HOVER
    return labels if shown and (in_hover or all(_NUMBER_LABEL.fullmatch(label) for label in shown)) else None


def _unreadable_cell_labels(
    fig, layout: dict, width: int, plot_height: float, font: float, fitted: dict | None = None
) -> list[int]:
    """Which of a figure's heatmaps (their indices) a figure `width` px wide would label with numbers in type under
    CELL_TEXT_AT_LEAST px (cell_text_px): its plot what the margins, the rows' labels and title
    (with their gaps, the title in the lines for_page cut it into: `fitted`, its changes) and the colour bar leave of
    the width."""
    margin = layout.get("margin") or {}
    found = []
    for i, trace in enumerate(fig.get("data", ()) if isinstance(fig, dict) else fig.data):
        read = trace.get if isinstance(trace, dict) else trace.__getitem__
        labels = _labelled_with_numbers(read)
        if labels is None:
            continue
        xaxis = "xaxis" + str(read("xaxis") or "x")[1:]
        beside = _row_labels_px(fig, layout, xaxis, font) + 2 * Y_LABELS_GAP
        bar = read("colorbar") or {}
        bar = bar if isinstance(bar, dict) else bar.to_plotly_json()
        on_top = ((bar.get("title") or {}).get("side")) == "top"  # not standing up the bar's side: no width of its own
        beside += (COLOUR_BAR_TOP_TITLED_PX if on_top else COLOUR_BAR_PX) if read("showscale") is not False else 0
        # a short map's rows' title stands in lines side by side: /masks' three-token decoder map's 'queries (rows):
        # attending' in three left it 69 px of the 96 estimated with one (its '0.02' in 8 px type, chromium)
        title = ((fitted or {}).get("yaxis" + str(read("yaxis") or "y")[1:]) or {}).get("title") or {}
        beside += AXIS_TITLE_LINE * str(title.get("text") or "").count("<br>")
        plot_width = width - margin.get("l", 80) - margin.get("r", 80) - beside
        if cell_text_px(labels, (plot_width, plot_height), font) < CELL_TEXT_AT_LEAST:
            found.append(i)
    return found


def _row_labels_px(fig, layout: dict, xaxis: str, font: float) -> float:
    """px the y axis's labels (categories drawn as text, or the numbers plotly writes on a numeric axis:
    number_ticks_columns) and its title take left of the plot of the traces drawn on x axis `xaxis`:
    /encoder-decoder's Japanese sentence as its rows' labels pushed its key axis's title, centred on the plot, past the
    figure's right edge at 390 px."""
    ref = "x" + xaxis[len("xaxis") :]
    widest, yaxis = 0, "yaxis"
    for trace in fig.get("data", ()) if isinstance(fig, dict) else fig.data:
        read = trace.get if isinstance(trace, dict) else trace.__getitem__  # a plotly trace: no copy of its data
        if (read("xaxis") or "x") != ref:
            continue
        yaxis = "yaxis" + str(read("yaxis") or "y")[1:]
        axis = layout.get(yaxis) or {}
        labels = read("y")
        shown = axis.get("showticklabels") is not False and axis.get("side") != "right"
        if not shown:
            continue
        if isinstance(labels, (list, tuple)) and labels and isinstance(labels[0], str):
            widest = max(widest, *map(label_columns, labels))
        elif axis.get("ticktext"):
            widest = max(widest, *(label_columns(str(label)) for label in axis["ticktext"]))
        elif labels is not None and read("type") not in ("heatmap", "image") and axis.get("type") in (None, "linear"):
            widest = max(widest, number_ticks_columns(_values(labels), axis))
    axis = layout.get(yaxis) or {}
    title = axis.get("title")
    titled = bool(title.get("text") if isinstance(title, dict) else title)
    return widest * COLUMN_EM * font + AXIS_TITLE_LINE * titled


def number_ticks_columns(values, axis: dict | None = None) -> int:
    """Columns of the widest label plotly writes on a linear axis over `values` (its range where set): a tick every 1,
    2 or 5 times a power of ten, some five over the span, each to its step's decimals (or the axis's tickformat, '.2f'
    or '.0%'), a minus sign a column; ticks of 10,000 and over, or under 0.001, in SI units as plotly's exponentformat
    B writes them ('25k', '400μ')."""
    axis = axis or {}
    values = np.asarray(values if values is not None else (), dtype=np.float64).ravel()
    values = values[np.isfinite(values)]
    if axis.get("range") and len(axis["range"]) == 2 and all(isinstance(v, (int, float)) for v in axis["range"]):
        values = np.asarray(axis["range"], dtype=np.float64)
    if not values.size:
        return 0
    lo, hi = float(values.min()), float(values.max())
    span = hi - lo or abs(hi) or 1.0
    power = 10.0 ** math.floor(math.log10(span / 5))
    step = min((m * power for m in (1, 2, 5, 10) if m * power >= span / 5 * (1 - 1e-9)), default=10 * power)
    ticks = {round(lo / step) * step, round(hi / step) * step, math.floor(hi / step) * step}
    form = re.fullmatch(r"\.(\d+)([f%])", str(axis.get("tickformat") or ""))
    largest = max(abs(v) for v in ticks)
    exponent = math.floor(math.log10(largest)) if largest else 0
    unit = 3 * math.floor(exponent / 3) if abs(exponent) > 3 and not form else 0
    decimals = max(0, -math.floor(math.log10(step / 10.0**unit) + 1e-9))
    prefix = {3: "k", 6: "M", 9: "G", 12: "T", -3: "m", -6: "μ", -9: "n", -12: "p"}.get(unit, "")

    def written(v: float) -> str:
        if form:
            return format(v, f".{form.group(1)}{form.group(2)}")
        return f"{v / 10.0**unit:.{decimals}f}" + prefix

    return max(len(written(v)) for v in ticks) + len(str(axis.get("ticksuffix") or ""))


def _on_top_edge(note: dict) -> bool:
    """A note set on the plot's top edge, above it (a chance level's label): in paper or an axis's domain
    coordinates, at y 1 or higher, standing on that height."""
    ref = str(note.get("yref") or "y")
    return (
        (ref == "paper" or ref.endswith(" domain"))
        and (note.get("y") or 0) >= 0.999
        and note.get("yanchor") == "bottom"
    )


_TAG = re.compile(r"<(/?)([a-zA-Z]+)\b[^>]*>")
_INLINE_TAGS = ("b", "i", "em", "sub", "sup")  # plotly's text markup a title may carry, kept as the page's


def label_html(text: str) -> str:
    """A figure's text (plotly's markup: entities, <br>, <b>, <i>, <sub>, <sup>) as HTML for a page: every character
    escaped, entities decoded first (as plotly shows them); <br> and the inline tags kept, each opened one closed;
    every other tag dropped (plotly draws no other either). Nothing of the text becomes markup of its own."""
    out, opened, at = [], [], 0
    for tag in _TAG.finditer(text):
        out.append(html.escape(html.unescape(text[at : tag.start()]), quote=False))
        at = tag.end()
        closing, name = tag.group(1), tag.group(2).lower()
        if name == "br" and not closing:
            out.append("<br>")
        elif name in _INLINE_TAGS and not closing:
            opened.append(name)
            out.append(f"<{name}>")
        elif name in _INLINE_TAGS and name in opened:
            while opened:  # a tag closed with those opened inside it, as a browser would
                inner = opened.pop()
                out.append(f"</{inner}>")
                if inner == name:
                    break
    out.append(html.escape(html.unescape(text[at:]), quote=False))
    return "".join(out) + "".join(f"</{name}>" for name in reversed(opened))


def figure_title(layout: dict) -> tuple[str, str]:
    """A figure's title and subtitle as plotly's markup (empty where it has none), from its layout (a figure's
    layout.to_plotly_json() or its dict's)."""
    title = layout.get("title")
    if not isinstance(title, dict):
        return str(title or ""), ""
    subtitle = title.get("subtitle")
    return str(title.get("text") or ""), str((subtitle.get("text") if isinstance(subtitle, dict) else subtitle) or "")


def _panel_axis(layout: dict, note: dict) -> tuple[str | None, float]:
    """The x axis of the panel a title stands on and its share of the figure's width: the axis whose domain holds
    the title's x and whose y axis's domain ends where the title stands (a panel spanning the row above holds that x
    too: the narrowest). (None, 1) where no axis does."""
    panels = []
    for name, axis in layout.items():
        if name.startswith("xaxis") and isinstance(axis, dict):
            lo, hi = axis.get("domain", (0, 1))
            y = layout.get("yaxis" + str(axis.get("anchor", "y"))[1:], {})
            if lo <= note["x"] <= hi and abs(y.get("domain", (0, 1))[1] - note.get("y", 1)) < 1e-3:
                panels.append((hi - lo, name))
    share, name = min(panels, default=(1, None))
    return name, share


def _merged(old: dict, new: dict) -> dict:
    """`old` updated by `new` as plotly's update_layout does: dicts merged key by key, anything else replaced."""
    out = dict(old)
    for key, value in new.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _panel_title(note: dict) -> bool:
    """An annotation make_subplots puts above a panel: centred on it, at its top, in paper coordinates, no arrow."""
    return (
        note.get("xref") == "paper"
        and note.get("yref") == "paper"
        and note.get("showarrow") is False
        and note.get("xanchor") == "center"
        and note.get("yanchor") == "bottom"
        and isinstance(note.get("text"), str)
        and isinstance(note.get("x"), (int, float))
    )


def hover_names(y_title: str, x_title: str) -> str:
    """A cell's hover lines for its row and column, named as the axes are (the page's words, in the reader's
    language); a value alone where an axis has no title."""
    return "".join(
        f"{safe_label(t, 40)}: %{{{v}}}<br>" if t else f"%{{{v}}}<br>" for t, v in ((y_title, "y"), (x_title, "x"))
    )
