"""Shared page furniture: UI language, widgets bound to the URL, figure rendering with exports.

Every widget a page creates through this module mirrors its value into the URL query parameters, so a link
reproduces the view. Values read back from a link are validated; anything malformed, out of range or unknown
is ignored and listed in a notice at the top of the page (never echoed as HTML).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import csv
import hashlib
import html
import io
import math
import re
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io
import streamlit as st

from app import i18n
from core import figure_text, listing
from core import state as declared
from core.spreadsheet import safe_cell
from viz.labels import (
    LAPTOP_FIGURE_PX,
    PHONE_FIGURE_PX,
    SIDEBAR_FIGURE_PX,
    TABLET_FIGURE_PX,
    beside_px,
    figure_title,
    for_page,
    label_html,
)
from viz.style import PAGE_TEMPLATE

try:  # plotly's own step of to_dict() that sends numpy arrays as base64 (plotly 6+; pyproject allows 5.20 on)
    from _plotly_utils.utils import convert_to_base64
except ImportError:  # a plotly without it: its own to_dict() is sent (_as_sent)
    convert_to_base64 = None

LANGS = i18n.languages()  # {code: name}: one catalog file per language in app/locales/
MAX_TEXT_CHARS = 20_000  # the most a text box accepts (max_chars) and a page processes
MAX_LINK_TEXT_CHARS = 1_500  # longer texts are not mirrored into the URL (links stay shareable)
GLOBAL_PARAMS = {"lang", "room", "me"}  # lang: app/main.py; a learner's seat: app/views/room/follow.py
MAX_NAMED_UNKNOWN = 5  # unknown link parameters named in the notice; the rest are counted ("and 295 more")


def lang() -> str:
    value = st.session_state.get("lang", i18n.REFERENCE)
    return value if value in LANGS else i18n.REFERENCE


def t(_section: str, _key: str, /, **fmt) -> str:
    """The string `_key` of catalog section `_section` ('attention', 'positions.rope') in the current language.

    Section and key are positional-only so that format fields may be called `text`, `key` or `section`."""
    return i18n.text(lang(), _section, _key, **fmt)


def texts(section: str) -> Callable[..., str]:
    """T(key, **fmt) for one catalog section in the current language: what pages use, and what they hand to viz
    builders that put words on a figure."""
    code = lang()
    return lambda _key, /, **fmt: i18n.text(code, section, _key, **fmt)


# --- page lifecycle -----------------------------------------------------------------------------------------


def page_setup(section: str) -> Callable[..., str]:
    """Call first on every page. Returns T(key, **fmt) for the page's own catalog section (its topic name)."""
    st.session_state["_ui_params"] = set(GLOBAL_PARAMS)
    st.session_state["_ui_bad"] = ["lang"] if st.session_state.pop("_ui_bad_lang", False) else []
    st.session_state["_ui_notice"] = st.empty()
    return texts(section)


def page_end() -> None:
    """Call last: drops URL parameters this run did not use and says which ones a link brought in vain.

    A parameter the app wrote itself earlier in the session (a widget now hidden, e.g. after switching a
    page's part) is dropped silently: the visitor did not ask for it, so it is not reported as ignored."""
    known = st.session_state.get("_ui_params", set())
    written = st.session_state.get("_ui_written", set())
    invalid = set(st.session_state.get("_ui_bad", []))
    dropped = [name for name in st.query_params if name not in known]
    if dropped:  # one message to the browser: deleting one at a time resends the whole query string each time
        kept = {k: st.query_params.get_all(k) for k in st.query_params if k in known}
        st.query_params.from_dict({k: v[0] if len(v) == 1 else v for k, v in kept.items()})
    unknown = sorted({name for name in dropped if name not in written} - invalid)
    if invalid or unknown:
        st.session_state["_ui_notice"].warning(t("common", "ignored_params", names=ignored_names(invalid, unknown)))


def ignored_names(invalid: set[str], unknown: list[str]) -> str:
    """The notice's list: every parameter of the page's own with a value it refused (a page has a few), and the
    first MAX_NAMED_UNKNOWN of the names it does not know (a link may carry hundreds), then how many more."""
    unknown_named, more = listing.named_and_counted(unknown, MAX_NAMED_UNKNOWN)
    named = dict.fromkeys(_short(n) for n in sorted(invalid | set(unknown_named)))
    listed = ", ".join(literal(n) for n in named)
    return listed + t("common", "ignored_more", n=more) if more else listed


def _short(name: str) -> str:
    return name if len(name) <= 40 else name[:40] + "…"


def literal(text: str) -> str:
    """`text` as a markdown code span: shown character for character, never a link, an image, HTML or a formula
    (a link's parameter names are chosen by whoever wrote the link). Line breaks and other control characters
    become '?' (a blank line would end the span's paragraph); the fence is longer than any run of backticks inside."""
    text = "".join(c if c.isprintable() else "?" for c in text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


# --- widgets bound to the URL --------------------------------------------------------------------------------


def _bind(
    key: str,
    parse: Callable[[str], Any],
    default: Any,
    valid: Callable[[Any], bool] = lambda v: True,
    shape: tuple = (),
):
    """Put the widget's start value in session state: from the link when valid (first run of a session only),
    else the default. A value that went invalid (e.g. options changed with the model) falls back too.

    `shape` is what else defines the widget (bounds, options). When it changes, Streamlit sees a new widget that
    starts at its first value, dropping the user's (the positions page's `pair` fell to 0 when d changed);
    writing the value back before the widget is created carries it over."""
    st.session_state["_ui_params"].add(key)
    reshaped = _reshaped(key, key, shape)
    if key in st.session_state:
        if not valid(st.session_state[key]):
            st.session_state[key] = default
        elif reshaped:
            st.session_state[key] = st.session_state[key]
        return
    raw = st.query_params.get(key)
    value = default
    if raw is not None:
        try:
            value = parse(raw)
        except (ValueError, TypeError, OverflowError):
            st.session_state["_ui_bad"].append(key)
    st.session_state[key] = value


def _reshaped(slot: str, key: str, shape: tuple) -> bool:
    """Whether the widget `key` (drawn in `slot`: a picker whose key changes with what it offers has one slot) has
    another shape than when last drawn; remembers this one."""
    slot_key = f"_ui_shape_{slot}"
    before = st.session_state.get(slot_key, (key, shape))
    st.session_state[slot_key] = (key, shape)
    return before != (key, shape)


def _picker_shape(options: Sequence) -> tuple:
    """What defines a picker whose labels are words: its options and the reader's language. The browser holds the
    chosen option's label, and after a switch of language a select box or multiselect went on showing the old
    language's label among the new options, a radio nothing; a picker whose shape changed gets its value written
    back, which Streamlit sends again with the new label."""
    return tuple(options), lang()


def pick(label: str, options: Sequence, *, key: str, format_func: Callable = str, radio: bool = False, **kwargs) -> Any:
    """A select box (radio=True: radio buttons) kept in this session only, not in the link (a room's lesson, an
    answer being given, an example): its chosen option stays chosen, in the reader's language, after a switch.
    Never inside a form: a form's widget tells the server its value only when sent, so a switch lost it."""
    options = list(options)
    if _reshaped(key, key, _picker_shape(options)) and key in st.session_state:
        st.session_state[key] = st.session_state[key]
    return (st.radio if radio else st.selectbox)(label, options, key=key, format_func=format_func, **kwargs)


def pick_many(
    label: str,
    options: Sequence,
    *,
    key: str,
    format_func: Callable = str,
    default: Sequence = (),
    slot: str | None = None,
    **kwargs,
) -> list:
    """A multiselect kept in this session only, as pick(); `slot`: where its shape is kept when its key changes with
    what it offers (one per picker, not one per key)."""
    options = list(options)
    reshaped = _reshaped(slot or key, key, _picker_shape(options))
    if key not in st.session_state:  # the default through session state: a widget given both warns on the page
        st.session_state[key] = [o for o in default if o in options]
    elif reshaped:
        st.session_state[key] = [o for o in st.session_state[key] if o in options]
    return st.multiselect(label, options, key=key, format_func=format_func, **kwargs)


def _mirror(key: str, value: Any) -> None:
    text = value if isinstance(value, str) else (str(int(value)) if isinstance(value, bool) else str(value))
    st.session_state.setdefault("_ui_written", set()).add(key)
    if st.query_params.get(key) != text:
        st.query_params[key] = text


def text_area(key: str, label: str, default: str, height: int = 100, help: str | None = None) -> str:
    """Free text of at most MAX_TEXT_CHARS (the box takes no more; a longer value from a link is cut with a
    notice). Shown by Streamlit as text, never as HTML. A default in the reader's language (/transformer-xl's
    example text) follows a switch of language while the box still holds the old language's default untouched."""
    _bind(key, str, default)
    said_in, said = st.session_state.get(f"_ui_default_{key}", (lang(), default))
    st.session_state[f"_ui_default_{key}"] = (lang(), default)
    if said_in != lang() and st.session_state[key] == said:
        st.session_state[key] = default
    value = st.text_area(label, key=key, height=height, help=help, max_chars=MAX_TEXT_CHARS)
    if len(value) > MAX_TEXT_CHARS:
        st.info(t("common", "text_cut", n=len(value), limit=MAX_TEXT_CHARS))
        value = value[:MAX_TEXT_CHARS]
    if len(value) <= MAX_LINK_TEXT_CHARS:
        _mirror(key, value)
    elif key in st.query_params:
        del st.query_params[key]
    return value


def select(
    key: str,
    label: str,
    options: Sequence[str],
    default: str | None = None,
    format_func: Callable[[str], str] = str,
    horizontal: bool = False,
    radio: bool = False,
    *,
    parse: Callable[[str], Any] | None = None,
) -> str:
    """Choice among option keys (the URL holds the key, never the translated label). `parse`: how a link's text
    reads (a declared field's, see field()); by default the text must be one of the options."""
    options = list(options)
    default = options[0] if default is None else default

    def parse_option(raw: str) -> str:
        if raw not in options:
            raise ValueError(raw)
        return raw

    parse = parse or parse_option

    _bind(key, parse, default, lambda v: v in options, shape=_picker_shape(options))
    widget = st.radio if radio else st.selectbox
    kwargs = {"horizontal": horizontal} if radio else {}
    value = widget(label, options, key=key, format_func=format_func, **kwargs)
    _mirror(key, value)
    return value


def slider(
    key: str,
    label: str,
    lo: float,
    hi: float,
    default: float,
    step: float | None = None,
    help: str | None = None,
    *,
    parse: Callable[[str], Any] | None = None,
):
    """Int slider when lo, hi and default are ints, float slider otherwise; link values outside [lo, hi] are
    ignored (`parse`: a declared field's reading of a link, see field())."""
    is_int = all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi, default))

    def parse_value(raw: str):
        v = int(raw) if is_int else float(raw)
        if not (lo <= v <= hi) or (not is_int and not math.isfinite(v)):
            raise ValueError(raw)
        if step and abs((v - lo) / step - round((v - lo) / step)) > 1e-9:  # off the slider's grid (odd d, ...)
            raise ValueError(raw)
        return v

    _bind(key, parse or parse_value, default, lambda v: lo <= v <= hi, shape=(lo, hi, step))
    value = st.slider(label, lo, hi, key=key, step=step, help=help)
    _mirror(key, value)
    return value


def number(
    key: str,
    label: str,
    lo: int,
    hi: int,
    default: int,
    help: str | None = None,
    *,
    parse: Callable[[str], Any] | None = None,
) -> int:
    """Integer input with bounds; link values outside [lo, hi] are ignored (`parse`: a declared field's reading of
    a link, see field())."""

    def parse_value(raw: str) -> int:
        v = int(raw)
        if not lo <= v <= hi:
            raise ValueError(raw)
        return v

    _bind(key, parse or parse_value, default, lambda v: lo <= v <= hi, shape=(lo, hi))
    value = st.number_input(label, min_value=lo, max_value=hi, step=1, key=key, help=help)
    _mirror(key, int(value))
    return int(value)


# A checkbox's or toggle's label wraps onto more lines where it does not fit. Streamlit's own choice cuts it to one
# line with an ellipsis in a column or a row: /linear-attention's 'Causal (each query sees only earlier keys)' read
# 'Causal (each qu…' in a third of an 800 px tablet's column, /long-maps' 'Log colour scale' 'Log…'.
LABELS_WRAP = True


def metrics(cards: Sequence[tuple[str, str | int, str | None]]) -> None:
    """Metric cards (label, value, help or None) in a row the browser wraps, each as wide as its label and value.
    st.columns squeezes its columns into any width and a card cuts its label and value to fit (on an 800 px tablet
    /moe's four read 'Dropped assig…', /kv-cache's '810.00 Ki…'), and a page cannot know the width."""
    row = st.container(horizontal=True, gap="medium")
    for label, value, help_text in cards:
        row.metric(label, value, help=help_text, width="content")


# px of a block in widgets' row: four on a line of a 1,366 px laptop's column, two of a phone's (358)
WIDGET_PX = 160


def widgets(n: int) -> list:
    """n blocks for widgets side by side, each WIDGET_PX wide, in a row the browser wraps (as beside does for
    figures): st.columns squeezed /long-maps' four display settings into a 468 px tablet column, its 'Cells per
    side' box 64 px wide showing '25' of 256."""
    return _blocks(n, WIDGET_PX)


def buttons():
    """A row for buttons, each as wide as its label, that the browser wraps onto more lines: st.columns cut
    /lessons' 'Previous step' to '前のステッ…' on a tablet."""
    return st.container(horizontal=True, gap="small")


def checkbox(key: str, label: str, default: bool = False, help: str | None = None) -> bool:
    def parse(raw: str) -> bool:
        if raw not in ("0", "1"):
            raise ValueError(raw)
        return raw == "1"

    _bind(key, parse, default, lambda v: isinstance(v, bool))
    value = st.checkbox(label, key=key, help=help, wrap=LABELS_WRAP)
    _mirror(key, bool(value))
    return value


def field(
    f: declared.Field,
    label: str,
    c: Any = None,
    *,
    widget: str | None = None,
    help: str | None = None,
    **kwargs,
):
    """The widget of a declared field (a topic's STATE in core, core/state.py): key, default, bounds and options
    come from the declaration, resolved in context `c` (an object whose attributes the declaration's functions read:
    the model's capabilities, a value read before), and a link's text is read by the field's own parse, the one the
    lessons' answers read a step's state with. widget: "number" for an Int shown as a number box (default: a slider),
    "radio" for a Choice shown as radio buttons (default: a select box). Other keywords go to the widget
    (format_func, horizontal, height; default for a Text the declaration leaves to the page's words)."""
    if isinstance(f, declared.Text):  # default=: the page's words, where the declaration leaves it to them (None)
        default = kwargs.pop("default", None)
        return text_area(f.key, label, f.default_in(c) if default is None else default, help=help, **kwargs)
    if isinstance(f, declared.Flag):
        return checkbox(f.key, label, f.default_in(c), help=help)
    default, parse = f.default_in(c), lambda raw: f.parse(raw, c)
    if isinstance(f, declared.Choice):
        return select(f.key, label, f.options_in(c), default, radio=widget == "radio", parse=parse, **kwargs)
    lo, hi = declared.resolve(f.lo, c), declared.resolve(f.hi, c)
    if widget == "number":
        return number(f.key, label, lo, hi, default, help=help, parse=parse)
    return slider(f.key, label, lo, hi, default, step=f.step, help=help, parse=parse)


# --- figures -------------------------------------------------------------------------------------------------


def figure_format() -> str:
    return st.session_state.get("fig_format", "png")


def show_figure(
    fig,
    name: str,
    data: np.ndarray | dict | None = None,
    row_labels=None,
    col_labels=None,
    key: str | None = None,
    on_select: Callable[[], None] | None = None,
    toolbar: bool = True,
    tables: bool = True,
    along: dict[str, str] | None = None,
    caption_data: np.ndarray | None = None,
):
    """Render a plotly figure. The chart's camera button downloads it as PNG or SVG (sidebar setting); when
    `data` is given, a CSV of the numbers behind it is offered too (built only when clicked). With `on_select`, a
    click on a point calls it before the rerun (the clicked points are in st.session_state[key].selection) and
    the selection event is returned. Every figure's title is set as the page's text above it (_title: the browser
    wraps it at any width), the figure sent without it and with what stays in it cut to fit a phone (_fitted); each
    gets its text alternative (text_alternative). toolbar=False: no buttons (a room's projector). tables=False: `data`
    names the caption's cells, but no table toggle or CSV (a lesson step's figure, whose page offers them). along: the
    axis ('x', 'y') each number column of a dict `data` is drawn along, so its table says them as that axis does (in %
    where the figure draws them in %: numbers_in_percent); a matrix's numbers are its map's, said as its colour bar says them.
    caption_data: the matrix the caption names cells of, where it is not all of `data` (rows the page says are no
    finding, NaN); the table and CSV keep `data`."""
    image = {"format": figure_format(), "filename": download_name(fig, name), "scale": 2}
    config = {"displaylogo": False, "toImageButtonOptions": image}
    if not toolbar:
        config = {"displayModeBar": False}
    select = {"on_select": on_select, "selection_mode": "points"} if on_select else {}
    title = _title(fig)
    if title:
        st.markdown(title, unsafe_allow_html=True)
    event = st.plotly_chart(_fitted(fig), width="stretch", config=config, key=key, **select)
    percent = numbers_in_percent(fig, data, along) if data is not None and tables else False
    text_alternative(
        fig,
        data,
        row_labels,
        col_labels,
        key=f"table-{key or name}",
        table=tables,
        percent=percent,
        said_of=caption_data,
    )
    if data is not None and tables:
        corner = csv_corner(fig) if row_labels is not None and not isinstance(data, dict) else ""
        st.download_button(
            t("common", "download_csv"),
            built_once(lambda: to_csv(data, row_labels, col_labels, corner=corner, percent=percent)),
            file_name=f"{name}.csv",
            mime="text/csv",
            key=f"csv-{key or name}",
            on_click="ignore",
        )
    return event


_clock = time.monotonic  # built_once's (a test moves it)


def built_once(build: Callable[[], str], fresh_s: float | None = None) -> Callable[[], str]:
    """A download's contents, built at its first request and kept for the next ones (for `fresh_s` seconds, where
    they follow something that changes, a room's answers: then built again at the first request after). Streamlit
    builds them anew for every request a client sends (a websocket message of a few bytes each, run in the server's
    worker threads, outside the page slots): 300 requests for /attention's head map at 300 tokens took a minute of the
    server's CPU, every other visitor's page 25 times slower meanwhile. Requests arriving together wait for the one
    build."""
    lock = threading.Lock()
    made: list[tuple[float, str]] = []

    def contents() -> str:
        with lock:
            if not made or (fresh_s is not None and _clock() - made[0][0] >= fresh_s):
                made[:] = [(_clock(), build())]
            return made[0][1]

    return contents


FILE_NAME_CHARS = 100  # a downloaded image's name: its figure's title, cut at a word within this many characters
# what file systems refuse in a name (Windows' reserved characters, control characters), and a name's ends they trim
NOT_IN_FILE_NAMES = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]+')


def download_name(fig, name: str) -> str:
    """The camera button's file name: the figure's title as plain text. The page sets the title above the figure as
    its text (_title), so the image downloaded carries none (plotly's button draws the figure as sent, and its options
    set a name, a size and a scale only): its name says what it shows. `name` where the figure has no title."""
    if hasattr(fig, READ):
        layout = getattr(fig, READ)[1]
    elif isinstance(fig, dict):
        layout = fig.get("layout", {})
    elif isinstance(fig, go.Figure):
        layout = _layout(fig)
    else:
        return name
    text = html.unescape(re.sub(r"<[^>]*>", " ", figure_title(layout)[0]))  # safe_label's entities, as read
    text = " ".join(NOT_IN_FILE_NAMES.sub(" ", text).split())
    if len(text) > FILE_NAME_CHARS:
        cut = text[: FILE_NAME_CHARS + 1]
        text = cut[: cut.rfind(" ")] if " " in cut else cut[:FILE_NAME_CHARS]
    return text.strip(" .") or name


READ = "_lab_read"  # on a read-only figure: (its traces, its layout) as text_alternative reads them
FITTED = "_lab_fitted"  # on a figure whose to_dict() (what st.plotly_chart sends) is fitted for the page
TITLE = "_lab_title"  # on a read-only figure: its title as the page's HTML (_title)
CAPTIONS = "_lab_captions"  # on a read-only figure: {(language, numbers, labels): its caption}
CAPTIONS_KEPT = 8  # per figure: its languages and the few numbers shown with it (a figure is shared per view)
# A figure's title as the page's text, as plotly set it (17 px, semi-bold, at the figure's left edge; the subtitle
# smaller), in the page's colour (a dark theme's too): a block of text, not a heading (a figure's title names no
# section of the page: its headings keep their order).
FIGURE_TITLE = (
    '<div class="lab-figure-title" style="font-size: 1.0625rem; font-weight: 600; line-height: 1.35">{}</div>'
)
SUBTITLE = '<div style="font-size: 0.8125rem; font-weight: 400; margin-top: 0.15rem">{}</div>'


def _title(fig) -> str:
    """A figure's title (and subtitle) as the page's HTML (viz.labels.label_html: the figure's text, escaped, its
    markup kept), empty where it has none. A shared figure's was made when it was kept."""
    if hasattr(fig, TITLE):
        return getattr(fig, TITLE)
    if isinstance(fig, dict):
        title, subtitle = figure_title(fig.get("layout", {}))
    elif isinstance(fig, go.Figure):
        title, subtitle = figure_title(_layout(fig))
    else:
        return ""
    if not title and not subtitle:
        return ""
    return FIGURE_TITLE.format(label_html(title) + (SUBTITLE.format(label_html(subtitle)) if subtitle else ""))


def figure_px() -> int:
    """The width (px) a figure's axis and panel titles are cut to fit (viz.labels.for_page): the narrowest a figure is
    drawn on the kind of screen the browser says it has (figure_px_for), or a figure's own width where it stands beside
    others (beside) and that is narrower. The server sees no screen: Streamlit tells a script the headers the browser
    sent when the page opened (its User-Agent), its time zone, locale, URL and colour scheme, never a window's width."""
    return min(figure_px_for(st.context.headers.get("User-Agent") or ""), _beside_px.get())


# What a browser's User-Agent says of its screen. A phone's says Mobile (Android's, Firefox's) or iPhone; an Android
# tablet's says Android without Mobile; an iPad's Safari says it is a Mac's Safari (iPadOS asks for desktop sites), so
# a Mac's Safari is taken for a tablet: the server cannot tell them apart, and a tablet's fit fits both (a Mac's figure
# gets narrower lines than it could). Anything else is a laptop's or a desktop's window.
_PHONE = re.compile(r"iPhone|iPod|Mobi|Windows Phone")
_TABLET = re.compile(r"iPad|Android|Tablet|Silk|Kindle")
_MAC_SAFARI = re.compile(r"Macintosh(?!.*(?:Chrome|Chromium|Firefox|Edg|OPR)/).*Version/[0-9.]+.*Safari/")


def device_kind(agent: str) -> str:
    """'phone', 'tablet' or 'laptop' by a browser's User-Agent; a browser that says nothing is taken for a phone's
    (a phone's fit fits any screen)."""
    if not agent.strip() or (_PHONE.search(agent) and "iPad" not in agent):
        return "phone"
    if _TABLET.search(agent) or _MAC_SAFARI.search(agent):
        return "tablet"
    return "laptop"


FIGURE_PX = {"phone": PHONE_FIGURE_PX, "tablet": TABLET_FIGURE_PX, "laptop": LAPTOP_FIGURE_PX}


def figure_px_for(agent: str) -> int:
    """figure_px for a browser's User-Agent (outside beside)."""
    return FIGURE_PX[device_kind(agent)]


# A figure's own width where it stands beside others (beside), unbounded elsewhere
_beside_px: contextvars.ContextVar[int] = contextvars.ContextVar("beside_px", default=10**6)


class _Beside:
    """One of beside's blocks: `with` it, as a column; a figure shown in it is fitted for its width at most."""

    def __init__(self, block, px: int):
        self.block, self.px, self._token = block, px, None

    def __enter__(self):
        self.block.__enter__()
        self._token = _beside_px.set(self.px)
        return self

    def __exit__(self, *exc):
        _beside_px.reset(self._token)
        return self.block.__exit__(*exc)


@contextlib.contextmanager
def in_sidebar():
    """Figures shown inside are fitted for the sidebar's width (viz.labels.SIDEBAR_FIGURE_PX) at most: a fragment
    in the sidebar reruns alone, so its own body says where it draws."""
    token = _beside_px.set(SIDEBAR_FIGURE_PX)
    try:
        yield
    finally:
        _beside_px.reset(token)


def beside(n: int, per_line: int | None = None) -> list[_Beside]:
    """n blocks side by side, for figures (and their text), each viz.labels.beside_px(per_line) wide (as wide as
    per_line of them on a line of a laptop's column; by default n), in a row the browser wraps: as many on a line as
    its column holds (at least one, as wide as the column where that is narrower). st.columns squeezes its columns into
    any width: /masks' three maps were drawn 145 px wide on an 800 px tablet, fitted for 213 (their text ran across
    each other), and a page cannot know the width. A figure shown in a block is fitted for its width at most."""
    px = beside_px(per_line or n)
    return [_Beside(block, px) for block in _blocks(n, px)]


def _blocks(n: int, px: int) -> list:
    """n blocks px wide side by side in a row the browser wraps (beside's and widgets')."""
    row = st.container(horizontal=True, gap="small")  # the gap BESIDE_GAP_PX
    return [row.container(width=px) for _ in range(n)]


def _fitted(fig):
    """The figure as the page draws it (viz.labels.for_page: without its title, which the page sets above it; what
    stays cut to fit this browser's figure: figure_px) in what st.plotly_chart sends, its dict: done there,
    unvalidated, instead of through plotly's validated update_layout (25 ms on /multi-head's figure); the figure
    itself, which its caption reads, keeps its title and titles whole. A shared figure's was done when it was kept."""
    if isinstance(fig, dict):
        # a copy: for_page sets its layout anew, the caption reads the one handed
        return _for_page(dict(fig), figure_px())
    if isinstance(fig, go.Figure) and not hasattr(fig, READ) and not hasattr(fig, FITTED):
        as_sent = fig.to_dict
        fig.to_dict = lambda: _for_page(_as_sent(fig, as_sent), figure_px())
        setattr(fig, FITTED, True)
    return fig


def _for_page(sent: dict, px: int) -> dict:
    """A figure's dict as the page sends it: viz.labels.for_page's, with viz.style.PAGE_TEMPLATE for the template
    plotly puts in every figure (Streamlit's theme sets the look in the browser; what our figures take from a
    template is what PAGE_TEMPLATE declares)."""
    fitted = for_page(sent, px)  # its layout a new dict: the figure's own is not changed
    fitted["layout"].pop("template", None)  # (set last: every way of sending a figure writes the same JSON)
    fitted["layout"]["template"] = PAGE_TEMPLATE
    return fitted


def _as_sent(fig: go.Figure, to_dict: Callable[[], dict]) -> dict:
    """fig.to_dict() as plotly makes it (its data and layout deep-copied, numpy arrays as base64), without plotly's
    template, which every figure carries whole and which the page does not send (_for_page). `to_dict`: plotly's own,
    for a figure with frames or a plotly that keeps its layout otherwise or has no convert_to_base64."""
    layout, data = getattr(fig, "_layout", None), getattr(fig, "_data", None)
    held_as_dicts = isinstance(layout, dict) and isinstance(data, list) and not getattr(fig, "_frame_objs", True)
    if convert_to_base64 is None or not held_as_dicts:
        return to_dict()
    sent = {"data": copy.deepcopy(data), "layout": copy.deepcopy({k: v for k, v in layout.items() if k != "template"})}
    convert_to_base64(sent)
    return sent


class _Drawn(dict):
    """A read-only figure's dict, as st.plotly_chart draws it, with the JSON that st.plotly_chart sends for it,
    encoded once (`spec`)."""

    __slots__ = ("spec",)


_plotly_to_json = plotly.io.to_json


def _to_json(fig, validate=True, pretty=False, remove_uids=True, engine=None):
    """plotly.io.to_json, except for a read-only figure's dict: its JSON as encoded when it was kept. Streamlit
    (1.67, elements/plotly_chart.py) encodes the dict of every figure it draws with plotly.io.to_json, each time,
    at a class's every page run: a tenth of a /masks run. Where a later Streamlit stops calling it, every figure is
    encoded as before (tests/app/test_shared.py fails)."""
    if type(fig) is _Drawn and not pretty and remove_uids and engine is None:
        return fig.spec
    return _plotly_to_json(fig, validate=validate, pretty=pretty, remove_uids=remove_uids, engine=engine)


plotly.io.to_json = _to_json


def read_only(fig):
    """Keep, on a figure that many sessions show (app/shared.py), what drawing it reads, made once instead of at
    each draw: its dict (st.plotly_chart sends a figure's to_dict(), a deep copy), fitted for each width a browser
    asks for (figure_px), the first time one does, and that dict's JSON (which st.plotly_chart encodes at each draw:
    `_to_json`); its title as the page's HTML (_title), and its traces and layout (what its caption reads). The figure
    must not change afterwards. Returns it; anything but a plotly figure as it is."""
    if isinstance(fig, go.Figure) and not hasattr(fig, READ):
        setattr(fig, TITLE, _title(fig))
        sent, drawn = fig.to_dict(), {}

        def fitted(px: int) -> _Drawn:
            if px not in drawn:  # (two sessions at once may both make it: the same)
                made = _Drawn(_for_page(dict(sent), px))  # for_page copies what it changes
                made.spec = _plotly_to_json(made, validate=False)  # as st.plotly_chart encodes it
                # most figures fit every width alike: one kept
                drawn[px] = next((d for d in list(drawn.values()) if d.spec == made.spec), made)
            return drawn[px]

        setattr(fig, READ, (_traces(fig), fig.layout.to_plotly_json()))  # a copy: kept while the figure lives
        setattr(fig, CAPTIONS, {})
        fig.to_dict = lambda: fitted(figure_px())
    return fig


def numbers_in_percent(fig, data, along: dict[str, str] | None = None) -> bool | set[str]:
    """Which numbers of a figure's table it draws in % (core.figure_text reads its formats): a dict's columns named in
    `along` whose axis is in %; a matrix's cells, all or none, as its map's colour bar is."""
    traces, layout = _read(fig)
    if isinstance(data, dict):
        return {name for name, axis in (along or {}).items() if figure_text.axis_in_percent(layout, axis)}
    return figure_text.maps_in_percent(traces, layout)


def _read(fig) -> tuple[list, dict]:
    """A figure's traces and layout as its caption reads them (a shared figure's, as kept when it was)."""
    if isinstance(fig, dict):
        return _traces(fig), fig.get("layout", {})
    if hasattr(fig, READ):
        return getattr(fig, READ)
    return _traces(fig), _layout(fig)


def text_alternative(
    fig,
    data: np.ndarray | dict | None,
    row_labels,
    col_labels,
    key: str,
    table: bool = True,
    percent=False,
    said_of: np.ndarray | None = None,
) -> None:
    """What a screen reader reads for a figure: one caption from the numbers it draws (its title and axes; a map's
    largest cells, a bar chart's largest and smallest bars, a line's start, end, highest and lowest points:
    core/figure_text.py), and, where the page hands them, those numbers as a table when asked for (a toggle, so a
    512 x 512 map is not sent to every browser). A matrix handed with its labels names the map's cells. percent: the
    table's numbers the figure draws in % (numbers_in_percent), shown in % as the figure shows them. said_of: the
    numbers the caption names in place of `data` (show_figure's caption_data)."""
    told = data if said_of is None else said_of
    if isinstance(fig, dict):
        layout = fig.get("layout", {})
        said = _caption(_traces(fig), layout, told, row_labels, col_labels)
    elif hasattr(fig, READ):  # a shared figure: its caption made once per language and numbers, then kept on it
        kept, (traces, layout) = getattr(fig, CAPTIONS), getattr(fig, READ)
        asked = (lang(), _numbers_key(told), _labels_key(row_labels), _labels_key(col_labels))
        said = kept.get(asked, kept)  # the dict itself: not kept yet (another session may clear it meanwhile)
        if said is kept:
            said = _caption(traces, layout, told, row_labels, col_labels)
            if len(kept) >= CAPTIONS_KEPT:
                kept.clear()
            kept[asked] = said
    else:
        layout = _layout(fig)
        said = _caption(_traces(fig), layout, told, row_labels, col_labels)
    if said:
        st.caption(said)
    if data is not None and table and st.toggle(t("common", "figure_table"), key=key, wrap=LABELS_WRAP):
        shown = st.column_config.NumberColumn(format="percent")  # in % as drawn, to the number's digits: 63.21%
        if isinstance(data, dict):
            columns = {column_name(name): list(column) for name, column in data.items()}
            in_pct = {column_name(name): shown for name in data if not isinstance(percent, bool) and name in percent}
            st.dataframe(columns, column_config=in_pct or None)
        else:
            arr = np.atleast_2d(np.asarray(data))
            names = [str(c) for c in col_labels] if col_labels is not None else None
            if percent and names is None:
                names = [str(j) for j in range(arr.shape[1])]
            # the index column is named (the rows' axis), so a screen reader's table has no empty header
            rows_named = _axis_title(layout, "yaxis") or t("common", "figure_rows")
            index = pd.Index([str(r) for r in row_labels], name=rows_named) if row_labels is not None else None
            in_pct = dict.fromkeys(names, shown) if percent else None
            st.dataframe(pd.DataFrame(arr, index=index, columns=names), column_config=in_pct)


def column_name(name) -> str:
    """A figure's table column in the reader's words: [figure_columns] names the pages' identifiers ('placebo_harm',
    'slope'); any other name (a method's, a backend's, a token) is shown as it is. The CSV keeps the identifiers."""
    name = str(name)
    return t("figure_columns", name) if i18n.has("figure_columns", name) else name


def _caption(traces: list, layout: dict, data, row_labels, col_labels) -> str | None:
    """The caption's words for a figure's traces and layout and the numbers handed with it; None: nothing to say."""
    matrix = isinstance(data, np.ndarray) and data.ndim == 2 and data.size > 0
    told = figure_text.describe(traces, layout, maps=not matrix, map_labels=(row_labels, col_labels))
    if matrix:
        cells = figure_text.strongest_cells(data, row_labels, col_labels)
        percent, decimals = figure_text.maps_in_percent(traces, layout), figure_text.maps_decimals(traces)
        said = figure_text.MapText(cells, [""] * len(cells), percent=percent, decimals=decimals)
        told = told._replace(statements=[said, *told.statements])
    return _figure_caption(layout, told) if told.statements else None


def _numbers_key(data) -> Hashable:
    """The numbers handed with a figure, as a caption's key: an array by its type, shape and a digest of its bytes;
    a dict of columns (its names and values); None."""
    if isinstance(data, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=16).digest()
        return data.dtype.str, data.shape, digest
    if isinstance(data, dict):
        return tuple((str(k), _labels_key(v)) for k, v in data.items())
    return None if data is None else _labels_key(data)


def _labels_key(labels) -> tuple | None:
    return None if labels is None else tuple(str(x) for x in np.asarray(labels, dtype=object).ravel())


def _traces(fig) -> list:
    """A figure's traces as mappings of the fields core.figure_text reads (a plotly figure's own dicts, read in place:
    going through its validated traces took 0.15 ms a figure; never to be changed)."""
    if isinstance(fig, dict):
        return list(fig.get("data", []))
    raw = getattr(fig, "_data", None)
    if not isinstance(raw, list):  # (a plotly that keeps its traces otherwise)
        return [{f: trace[f] for f in figure_text.TRACE_FIELDS if f in trace} for trace in fig.data]
    return [{f: trace[f] for f in figure_text.TRACE_FIELDS if f in trace} for trace in raw]


def _layout(fig) -> dict:
    """A plotly figure's layout as a dict, read in place (plotly's own: fig.layout.to_plotly_json() deep-copies it,
    plotly's whole template included, 0.2-0.4 ms a figure at each draw); never to be changed."""
    raw = getattr(fig, "_layout", None)
    return raw if isinstance(raw, dict) else fig.layout.to_plotly_json()


def _figure_caption(layout: dict, told: figure_text.FigureText) -> str:
    """The caption's words for core.figure_text's statements, in the reader's language."""
    rows, cols = (_layout_text(layout, axis) for axis in ("yaxis", "xaxis"))
    heading = [_plain(text) for text in figure_title(layout) if text]  # the title, then its subtitle: two sentences
    said_in = texts("common")  # the reader's language read once, not at each sentence

    def cell(c: figure_text.Cell, tile: str, s: figure_text.MapText) -> str:
        said = {"row": _token(c.row), "col": _token(c.col), "value": _value(c.value, s)}
        return said_in("figure_tile_cell", tile=_plain(tile), **said) if tile else said_in("figure_cell", **said)

    def line(s: figure_text.LineText) -> str:
        if s.points == 1:
            return said_in("figure_point", at=_said(s.first.at), value=_value(s.first.value, s))
        ends = {f"{end}{suffix}": v for end in ("first", "last", "highest", "lowest")
                for suffix, v in (("", _said(getattr(s, end).at)),
                                  ("_value", _value(getattr(s, end).value, s)))}  # fmt: skip
        return said_in("figure_line", n=s.points, **ends)

    def points(s: figure_text.PointsText) -> str:
        if s.points == 1:
            return said_in("figure_point", at=_said(s.lowest.at), value=_value(s.lowest.value, s))
        ends = {"lowest_value": _value(s.lowest.value, s), "highest_value": _value(s.highest.value, s)}
        if s.at is not None:  # a strip of dots on one row: its name once
            return said_in("figure_points_at", n=s.points, at=_said(s.at), **ends)
        return said_in("figure_points", n=s.points, lowest=_said(s.lowest.at), highest=_said(s.highest.at), **ends)

    parts = []
    for s in told.statements:
        if isinstance(s, figure_text.MapText):
            named = "; ".join(cell(c, tile, s) for c, tile in zip(s.cells, s.tiles, strict=True))
            down, across = (_layout_text(layout, axis) for axis in s.axes)  # a grid's map: its own panel's axes
            said = said_in("figure_map", rows=down, cols=across, cells=named) if down and across else None
            parts.append(said or said_in("figure_map_cells", cells=named))
            continue
        if isinstance(s, figure_text.BarText):
            said = said_in("figure_bars", n=s.bars, largest=_said(s.largest.at),
                           largest_value=_value(s.largest.value, s), smallest=_said(s.smallest.at),
                           smallest_value=_value(s.smallest.value, s))  # fmt: skip
        elif isinstance(s, figure_text.PointsText):
            said = points(s)
        else:
            said = line(s)
        # a figure of several panels names each series' panel: a 'row 0' in each panel is two different lines
        name = (
            said_in("figure_panel_series", panel=_plain(s.panel), name=_plain(s.series))
            if s.panel and s.series
            else _plain(s.panel or s.series)
        )
        parts.append(said_in("figure_series", name=name, text=said) if name else said)
    if told.more:
        parts.append(said_in("figure_more", n=told.more))
    if any(not isinstance(s, figure_text.MapText) for s in told.statements) and (rows or cols):
        axes = "figure_axes" if rows and cols else "figure_across" if cols else "figure_up"
        parts.insert(0, said_in(axes, x=cols, y=rows))
    return _sentences([*heading, *parts], said_in("figure_join"), said_in("figure_end"))


SENTENCE_ENDS = ("\\.", "\\!", "?", "。", "！", "？")  # as _plain leaves them ('.' and '!' escaped)


def _sentences(parts: list[str], join: str, end: str) -> str:
    """Parts as sentences in the reader's language ('. ' and '.'; '。'): a part that ends one itself (a subtitle
    written as a sentence) gets no second full stop, only what follows one (the space)."""
    said = ""
    for i, part in enumerate(parts):
        mark = join if i < len(parts) - 1 else end
        said += part + (mark.removeprefix(end) if part.endswith(SENTENCE_ENDS) else mark)
    return said


def _value(value: float, unit) -> str:
    """A figure's number as its caption says it: 3 significant digits, or in % where the figure draws it in % (a
    statement's percent), to its hover's decimals (its decimals: 63.2% as the reader pointing at it sees it)."""
    return f"{value:.{unit.decimals}%}" if unit.percent else f"{value:.3g}"


def _said(label: str) -> str:
    """A category or an x value in a caption: a number as it is, anything else (a token) as a literal."""
    try:
        float(label)
    except ValueError:
        return _token(label)
    return label


def _token(label: str) -> str:
    """A figure's label as a caption's literal, read as the figure shows it: safe_label's entities decoded (a screen
    reader says '<script>', not '&lt;script&gt;'); the code span keeps it inert."""
    return literal(html.unescape(str(label)))


def _plain(text: str) -> str:
    """A trace's name as caption text: tags dropped, markdown and formula characters escaped."""
    text = " ".join(html.unescape(re.sub(r"<[^>]*>", " ", text)).split())  # safe_label's entities, as read
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|$~<>])", r"\\\1", text)


def _layout_text(layout: dict, axis: str) -> str:
    """An axis's title as plain text for a caption: plotly's <br>/<b> tags dropped, markdown and formula characters
    escaped."""
    title = layout.get(axis, {}).get("title", {})
    text = title.get("text", "") if isinstance(title, dict) else str(title or "")
    matches = layout.get(axis, {}).get("matches")
    if not text and matches:  # a shared axis (stacked panels) is titled once, on the panel that shows its ticks
        return _layout_text(layout, axis[0] + "axis" + matches[1:])
    return _plain(text)


def _axis_title(layout: dict, axis: str) -> str:
    """An axis's title as it reads (tags dropped, entities decoded), for a table's header (text, not markdown); a
    shared axis's from the panel that shows it."""
    title = layout.get(axis, {}).get("title", {})
    text = title.get("text", "") if isinstance(title, dict) else str(title or "")
    matches = layout.get(axis, {}).get("matches")
    if not text and matches:
        return _axis_title(layout, axis[0] + "axis" + matches[1:])
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", text)).split())


def csv_corner(fig) -> str:
    """The top-left cell of a labelled matrix's CSV: what its rows and its columns are, as the figure's axes title
    them ('query \\ key'), so that a spreadsheet of numbered rows and columns says which is which; empty unless
    both axes have a title."""
    if isinstance(fig, dict):
        layout = fig.get("layout", {})
    elif hasattr(fig, READ):
        layout = getattr(fig, READ)[1]
    else:
        layout = _layout(fig)
    rows, cols = _axis_title(layout, "yaxis"), _axis_title(layout, "xaxis")
    return t("common", "csv_corner", rows=rows, cols=cols) if rows and cols else ""


def to_csv(data: np.ndarray | dict, row_labels=None, col_labels=None, corner: str = "", percent=False) -> str:
    """A 2-D array (optionally labelled; `corner` names its rows and columns above the row labels) or a dict of
    equal-length columns, as CSV text. Labels and text cells can hold a visitor's words (tokens of their text): each
    passes core.spreadsheet's one rule against formulas. percent: the numbers the figure draws in % (numbers_in_percent: a
    matrix's, True; a dict's columns, by name), written '63.2%' as the figure says them (a spreadsheet reads a share)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")

    # a cell a figure leaves out (masked, not yet there: NaN) is an empty cell, not the text 'nan' a spreadsheet
    # cannot count or average
    def cell(v) -> str:
        if isinstance(v, (float, np.floating)) and not isinstance(v, bool):
            return "" if v != v else str(v)
        return safe_cell(str(v))

    def share(v) -> str:  # a number drawn in %: 0.632 is '63.2%', to the digits it has
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and v == v:
            return f"{float(v) * 100:.10g}%"
        return cell(v)

    if isinstance(data, dict):
        names = list(data)
        chosen = () if isinstance(percent, bool) else percent
        said = [share if n in chosen else cell for n in names]
        w.writerow([cell(n) for n in names])
        for row in zip(*[list(data[n]) for n in names]):
            w.writerow([say(v) for say, v in zip(said, row, strict=True)])
        return out.getvalue()
    arr = np.atleast_2d(np.asarray(data))
    number = (lambda v: f"{v * 100:.6g}%") if percent is True else (lambda v: f"{v:.6g}")  # noqa: E731
    if col_labels is not None:
        w.writerow([cell(c) for c in ([corner] if row_labels is not None else []) + list(col_labels)])
    for i, row in enumerate(arr):
        prefix = [cell(row_labels[i])] if row_labels is not None else []
        w.writerow(prefix + [number(v) if isinstance(v, (float, np.floating)) and v == v else cell(v) for v in row])
    return out.getvalue()


# A table of at most this many rows is drawn whole; a longer one (a learner's long text, token by token) scrolls
# within Streamlit's ten rows. Drawn in ten rows, /models' twelve capabilities and /padded-batch's fourteen positions
# hid their last rows (the experts, the padding a sentence ends in) behind the table's own scroll bar.
WHOLE_TABLE_ROWS = 30


def table(data, wrap: bool = False, **kwargs) -> None:
    """st.dataframe, as tall as its rows where they are few (WHOLE_TABLE_ROWS). wrap: a few rows of text, drawn as a
    static table whose cells and headers wrap to the column's width (st.table): st.dataframe keeps each cell on one
    line, so a long reason was cut at the table's edge and ja/ko headers widened the columns past it (a sideways scroll
    bar)."""
    if wrap:
        st.table(data, **kwargs)
        return
    rows = max(map(len, data.values()), default=0) if isinstance(data, dict) else len(data)  # a frame, an Arrow table
    st.dataframe(data, height="content" if rows <= WHOLE_TABLE_ROWS else "auto", **kwargs)
