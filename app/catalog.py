"""The pages of the app, in navigation order. Each topic has one name in every layer: the page is
app/views/<topic>.py (or the package app/views/<topic>/), its URL /<url>, its words the [<topic>] section of
app/locales/*.toml, its title and what it teaches [nav.<topic>].

To add a page: write app/views/<topic>.py with a `page()` function, its words in every locale file, and one
entry here.
"""

from __future__ import annotations

import copy
import functools
import importlib
from dataclasses import dataclass

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.util import calc_hash

from app import ui

SECTIONS = ("start", "study", "basics", "models", "heads", "generation", "position", "moe", "scale")


@dataclass(frozen=True)
class Page:
    topic: str  # module name under app/views/, catalog section, core/viz/tests name
    section: str  # one of SECTIONS
    icon: str

    @property
    def url(self) -> str:
        return self.topic.replace("_", "-")


PAGES = [
    Page("home", "start", ":material/home:"),
    Page("lessons", "study", ":material/school:"),
    Page("sdpa_steps", "basics", ":material/calculate:"),
    Page("masks", "basics", ":material/filter_alt:"),
    Page("multi_head", "basics", ":material/view_column:"),
    Page("rnn_attention", "basics", ":material/replay:"),
    Page("encoder_decoder", "basics", ":material/translate:"),
    Page("attention", "models", ":material/grid_view:"),
    Page("padded_batch", "models", ":material/view_agenda:"),
    Page("antecedents", "models", ":material/link:"),
    Page("models", "models", ":material/folder_open:"),
    Page("head_detectors", "heads", ":material/radar:"),
    Page("ablation", "heads", ":material/content_cut:"),
    Page("logit_lens", "heads", ":material/layers:"),
    Page("why_head", "heads", ":material/troubleshoot:"),
    Page("kv_cache", "generation", ":material/history_edu:"),
    Page("transformer_xl", "generation", ":material/fast_forward:"),
    Page("positions", "position", ":material/pin_drop:"),
    Page("rope_scaling", "position", ":material/open_in_full:"),
    Page("moe", "moe", ":material/call_split:"),
    Page("linear_attention", "scale", ":material/trending_flat:"),
    Page("sdpa_gqa", "scale", ":material/memory:"),
    Page("flash_attention", "scale", ":material/grid_on:"),
    Page("long_maps", "scale", ":material/zoom_in:"),
    Page("room", "study", ":material/groups:"),
]
BY_URL = {p.url: p for p in PAGES}
# How a run asks for a page: a browser's address by its name (/masks: "masks"; the home page is "", Streamlit finds
# no page named "home"), a click in the navigation or a switch by the hash st.Page gives its url_path.
ASKED_BY_NAME = frozenset(BY_URL) - {"home"}
ASKED_BY_HASH = frozenset(calc_hash(url) for url in BY_URL)


def streamlit_page(page: Page) -> st.Page:
    """The st.Page of a topic: its `page` function (module imported once per process), title in the current
    language, URL. Built the same way for the navigation and for links to it (st.page_link)."""
    function = importlib.import_module(f"app.views.{page.topic}").page
    return st.Page(
        function,
        title=ui.t(f"nav.{page.topic}", "title"),
        icon=page.icon,
        url_path=page.url,
        default=page.topic == "home",
    )


@functools.cache
def _sections(lang: str) -> tuple[tuple[str, tuple[st.Page, ...]], ...]:
    """The navigation in `lang`, made once per process and language (pages imported, titles looked up, icons
    checked: a few milliseconds that every run of every visitor paid)."""
    nav: dict[str, list] = {}
    for page in PAGES:
        nav.setdefault(ui.t("sections", page.section), []).append(streamlit_page(page))
    return tuple((section, tuple(pages)) for section, pages in nav.items())


def lost_address() -> bool:
    """Whether this run asks for an address that names no page (a typo, an old link). Streamlit would run the home
    page under its own dialog, 'Page not found', in English: its frontend draws it, and no locale reaches it. The run
    asks for the home page instead (call before st.navigation), so the dialog is never sent, the address bar shows
    the home page's, and the caller says why in the reader's words."""
    ctx = get_script_run_ctx()
    return ctx is not None and ask_home_if_lost(ctx.pages_manager)


def ask_home_if_lost(pages) -> bool:
    """lost_address on a run's streamlit PagesManager: True when the address names no page (now the home page's);
    /home, the home page's own name, goes home too, without a word."""
    by_hash, by_name = pages.intended_page_script_hash, pages.intended_page_name
    if (by_hash in ASKED_BY_HASH) if by_hash else (not by_name or by_name in ASKED_BY_NAME):
        return False
    pages.set_script_intent("", "")
    return bool(by_hash) or by_name != "home"


def navigation() -> dict[str, list[st.Page]]:
    """What st.navigation takes: every page under its section's title in the reader's language. Each run gets
    copies: st.navigation marks the page it returns as the one this run may call, which must not be seen by
    another session's run at the same moment."""
    return {section: [copy.copy(p) for p in pages] for section, pages in _sections(ui.lang())}
