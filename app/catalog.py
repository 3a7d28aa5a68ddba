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


def navigation() -> dict[str, list[st.Page]]:
    """What st.navigation takes: every page under its section's title in the reader's language. Each run gets
    copies: st.navigation marks the page it returns as the one this run may call, which must not be seen by
    another session's run at the same moment."""
    return {section: [copy.copy(p) for p in pages] for section, pages in _sections(ui.lang())}
