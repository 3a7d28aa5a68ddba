"""Every page in the navigation runs headless without an exception, also with hostile input and links."""

import json
import re
from pathlib import Path

import pytest

from app import catalog, i18n, ui
from core.lessons.answers import PAGE_STATES
from core.state import Text
from tests.apptest_helpers import assert_no_exception, run_view
from tests.phone_figures import placed_in_the_way_on_a_phone, titles_too_wide_for_a_phone

pytestmark = pytest.mark.slow  # every page of the catalog, SmolLM2's included: not in `dev.sh quick`

ROOT = Path(__file__).resolve().parents[2]
# A 20,000-character text reaches every text box twice elsewhere, in the same words cut to the same 20,000
# characters: typed in a real browser (tests/test_browser.py) and through each page's link
# (tests/pages/test_shareable_links.py, test_long_link_text_is_cut_and_kept_out_of_the_url, which also checks the
# cut's notice); each such run costs a page its longest model run (6.5 s of CPU on /kv-cache), so not a third time.
HOSTILE_TEXTS = {
    "empty": "",
    "emoji": "The 🐱 sat on the 🧶 because it was 😴. 👍🏽👨‍👩‍👧",
    "cjk": "猫はマットの上に座った。なぜなら疲れていたからだ。我爱自然语言处理。",
    "korean": "고양이가 매트 위에 앉았다. 왜냐하면 피곤했기 때문이다.",
    "script": "<script>alert(1)</script> {{7*7}} <img src=x onerror=alert(2)>",
}
PAGE_URLS = [p.url for p in catalog.PAGES]


def page_source(topic: str) -> str:
    """The source of a page: app/views/<topic>.py, or every module of the package app/views/<topic>/."""
    single = ROOT / "app" / "views" / f"{topic}.py"
    files = [single] if single.exists() else sorted((ROOT / "app" / "views" / topic).glob("*.py"))
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


# Pages with a text box (read from their source, so pages without one cost no run here; the test fails if a page
# listed here shows no text box). TEXT_LINKS opens the part of a page where its text box lives.
TEXT_LINKS = {"positions": {"part": "rope", "smol": "1"}, "long-maps": {"doc": "own"}}
TEXT_PAGE_URLS = [
    p.url
    for p in catalog.PAGES
    if "text_area(" in page_source(p.topic) or any(isinstance(f, Text) for f in PAGE_STATES.get(p.url, ()))
]  # a text box drawn by hand, or one the page's declared state binds (ui.field)


@pytest.fixture
def widest_words(monkeypatch):
    """A link's `lang` for a language "widest" whose every catalog string is the widest of en/ja/ko (by
    viz.labels.label_columns): a page opened in it carries, in each title, words at least as wide as in any of the three."""
    from app import shared
    from viz.labels import label_columns

    text = i18n.text

    def widest(lang, path, key, /, **fmt):
        if lang != "widest":
            return text(lang, path, key, **fmt)
        return max((text(code, path, key, **fmt) for code in i18n.languages()), key=label_columns)

    monkeypatch.setattr(i18n, "text", widest)
    monkeypatch.setattr(ui, "LANGS", {**ui.LANGS, "widest": "widest"})
    yield {"lang": "widest"}
    catalog._sections.cache_clear()  # the navigation and the figures kept for "widest"
    shared._figures.clear()


def assert_titles_fit_a_phone(at) -> int:
    """No figure is sent with a title of its own (the page sets it above the figure, where the browser wraps it),
    and no line of an x axis title or panel title is wider than a 390 px phone gives it (viz.labels.for_page cuts
    them into lines, or sets a narrow panel's title smaller). Returns how many figures."""
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    too_wide = {n: found for n, chart in enumerate(charts) if (found := titles_too_wide_for_a_phone(chart))}
    assert not too_wide, too_wide
    in_the_way = {n: found for n, chart in enumerate(charts) if (found := placed_in_the_way_on_a_phone(chart))}
    assert not in_the_way, in_the_way  # legends and colour bars too
    return len(charts)


# A page with a declared state is opened in each of its states, its default first, in every language's widest words,
# by tests/pages/test_page_states_shown.py (no exception, titles that fit a phone, captions, the reader's words)
PLAIN_RUN_URLS = [u for u in PAGE_URLS if u not in TEXT_PAGE_URLS and u not in PAGE_STATES]


@pytest.mark.parametrize("url", PLAIN_RUN_URLS)
def test_page_runs(url, widest_words):
    """A page without a declared state (home, lessons, room) opened in every language's widest words: it runs and
    its figures' titles fit a phone. A page with a text box runs as a plain link opens it in
    test_page_survives_hostile_text, first."""
    at = run_view(url, widest_words)
    assert_no_exception(at)
    assert_titles_fit_a_phone(at)


@pytest.mark.parametrize("url", TEXT_PAGE_URLS)
def test_page_survives_hostile_text(url):
    """Each hostile text typed into every text box of the page, one after another in one visitor's session (one
    page open for the five: what a text does is computed from that text alone); each box keeps the text as typed."""
    at = run_view(url, TEXT_LINKS.get(url))
    assert_no_exception(at)
    assert at.text_area, "the page's source has a text box but none was shown"
    for kind, text in HOSTILE_TEXTS.items():
        for area in at.text_area:
            area.set_value(text)
        at.run()
        assert not at.exception, (kind, [e.value for e in at.exception])
        assert [area.value for area in at.text_area] == [text] * len(at.text_area), kind
        shown = " ".join(str(m.value) for m in at.markdown)
        assert "<script>" not in shown or "&lt;script" in shown or "`" in shown, kind


def test_language_switch_changes_the_page():
    at = run_view("home", {"lang": "ja"})
    assert_no_exception(at)
    shown = " ".join(s.value for s in at.header) + " ".join(m.value for m in at.markdown)
    assert "ページ" in shown and "Pages" not in shown


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_a_link_to_a_page_shows_it_in_the_links_language(lang):
    """/masks?lang=ja as a browser opens it (the session's first run is that page): its title and the notice for the
    link's unknown keys, counted past the first few, are the catalog's in that language, and the link keeps it."""
    junk = [f"zz{i}" for i in range(ui.MAX_NAMED_UNKNOWN + 2)]
    at = run_view("masks", {"lang": lang, **dict.fromkeys(junk, "1")})
    assert_no_exception(at)
    assert at.title[0].value == i18n.text(lang, "masks", "title")
    names = ", ".join(ui.literal(n) for n in junk[: ui.MAX_NAMED_UNKNOWN]) + i18n.text(
        lang, "common", "ignored_more", n=2
    )
    assert i18n.text(lang, "common", "ignored_params", names=names) in [w.value for w in at.warning]
    assert at.query_params["lang"] == lang
    # the page script names Streamlit's "?" buttons (its English "Help for <label>") in the link's language
    script = next(h.proto.body for h in at.sidebar.get("html") if "__labHelpWords" in h.proto.body)
    words = {k: i18n.text(lang, "common", k, label="{label}") for k in ("help_button", "help_for")}
    assert f"window.__labHelpWords = {json.dumps(words, ensure_ascii=False)};" in script
    # Streamlit's sanitizer (DOMPurify) drops a script whose text holds "<" before a letter or "/"
    assert not re.search(r"<[/\w]", script.split("<script>")[1].split("</script>")[0])


@pytest.mark.parametrize("url", ["home", "masks"])
def test_unknown_language_in_a_link_falls_back_to_english_with_a_notice(url):
    at = run_view(url, {"lang": "<script>"})  # the language is read on a session's first run
    assert_no_exception(at)
    assert "lang" in " ".join(w.value for w in at.warning)
    assert at.session_state["lang"] == "en"
