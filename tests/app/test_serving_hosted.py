"""What an anonymous visitor of a hosted server can and cannot make the app do, headless (AppTest): a crafted link
cannot make the app's own notice show a link or fetch an image, an unexpected exception is one sentence (the
traceback in the server's log), a full server says so, and a text box takes at most the processing limit."""

from __future__ import annotations

import logging
import re

import pytest
from markdown_it import MarkdownIt
from streamlit import config

from app import catalog, i18n, serving, ui
from tests.apptest_helpers import assert_no_exception, run_view, shown_text

HOSTILE_NAMES = (
    "[a prize](https://example.com/win)",
    "![pixel](https://example.com/pixel.png)",
    "<img src=https://example.com/tag.png>",
    "<https://example.com/angle>",
    "https://example.com/bare",
    "www.example.com",
    "x`](https://example.com/tick)",
    "a\n\n[after a blank line](https://example.com/para)",
)


def _outside_code(markdown: str) -> str:
    """What CommonMark renders of `markdown` outside code spans, as HTML."""
    html = MarkdownIt("commonmark").render(markdown)
    return re.sub(r"<code>.*?</code>", "", html, flags=re.S)


def test_a_link_parameter_name_is_shown_as_typed_never_as_a_link_or_an_image():
    at = run_view("attention", params={name: "1" for name in HOSTILE_NAMES})
    assert_no_exception(at)
    notices = [w.value for w in at.warning if "Ignored link parameters" in w.value]
    assert notices, [w.value for w in at.warning]
    html = _outside_code(notices[0])
    assert "<a " not in html and "<img" not in html, html
    assert "example.com" not in html, html  # not even a bare URL that GitHub-style markdown would turn into a link
    assert "prize" in notices[0] and "pixel" in notices[0]  # the names are still there for the reader


def test_literal_keeps_every_character_inside_one_code_span():
    for name in HOSTILE_NAMES:
        html = MarkdownIt("commonmark").render(ui.literal(name))
        assert html.count("<code>") == 1 and "<a " not in html and "<img" not in html, (name, html)


@pytest.fixture()
def visitor_details():
    """Streamlit's error details as .streamlit/config.toml sets them for visitors (the tests run with "full")."""
    before = config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", "none")
    yield
    config.set_option("client.showErrorDetails", before)


def _broken_page(*_args, **_kwargs):
    raise RuntimeError("secret detail at /srv/attention-lab/private.py")


@pytest.fixture()
def break_page(monkeypatch):
    """Replace a topic's page function with one that raises. The navigation holds each page's function from the
    first run in this process on (catalog._sections), so it is made again with the broken one, and again after."""

    def broken(module):
        monkeypatch.setattr(module, "page", _broken_page)
        catalog._sections.cache_clear()

    yield broken
    catalog._sections.cache_clear()


def test_an_unexpected_exception_is_one_sentence_and_the_traceback_goes_to_the_log(break_page, visitor_details, caplog):
    from app.views import masks

    break_page(masks)
    with caplog.at_level(logging.ERROR, logger="attention_lab"):
        at = run_view("masks")
    assert not at.exception, [e.value for e in at.exception]  # no traceback box, not even Streamlit's redacted one
    assert [e.value for e in at.error] == [i18n.text("en", "common", "unexpected")]
    assert "secret detail" not in shown_text(at) and "RuntimeError" not in shown_text(at)
    logged = [r for r in caplog.records if r.exc_info and "secret detail" in str(r.exc_info[1])]
    assert logged, "the traceback did not reach the server's log"


def test_a_developer_run_shows_the_traceback_under_the_sentence(break_page):
    from app.views import masks

    break_page(masks)
    at = run_view("masks")  # the tests run with client.showErrorDetails = "full", as scripts/dev.sh run does
    assert at.error and at.exception and "secret detail" in at.exception[0].value


def test_every_page_catches_in_one_place_in_every_language(break_page, visitor_details):
    from app.views import home

    break_page(home)
    for lang in ui.LANGS:
        at = run_view("home", params={"lang": lang})
        assert not at.exception and [e.value for e in at.error] == [i18n.text(lang, "common", "unexpected")]


def test_a_full_server_says_so_and_draws_no_page(monkeypatch):
    monkeypatch.setattr(serving, "_admitted", {"someone-else"})
    monkeypatch.setattr(serving, "_live_sessions", lambda: {"someone-else"})
    monkeypatch.setenv(serving.SESSIONS_ENV, "1")
    at = run_view("home")
    assert_no_exception(at)
    assert [w.value for w in at.warning] == [i18n.text("en", "common", "server_full")]
    assert not at.title and not at.markdown
    monkeypatch.setenv(serving.SESSIONS_ENV, "2")  # a place frees up: the next visitor gets the page
    at = run_view("home")
    assert_no_exception(at)
    assert at.title and not at.warning


def test_a_text_box_takes_at_most_the_processing_limit():
    at = run_view("attention", params={"text": "a dog ran. " * 10})
    assert_no_exception(at)
    assert at.text_area and all(box.max_chars == ui.MAX_TEXT_CHARS for box in at.text_area)
