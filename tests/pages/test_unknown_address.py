"""An address that names no page (a typo, an old link): the home page, with one sentence in the reader's words, and
never Streamlit's own 'Page not found' dialog, which its frontend draws in English whatever the reader's language."""

import pytest
from streamlit.commands import navigation as streamlit_navigation
from streamlit.runtime.pages_manager import PagesManager
from streamlit.util import calc_hash

from app import catalog, i18n
from tests.apptest_helpers import assert_no_exception, new_app


def _as_a_browser(monkeypatch, at, address: str) -> None:
    """Ask for /address as a browser's first load does: by the address's name, no hash (AppTest asks by hash only)."""
    set_intent = PagesManager.set_script_intent
    asked = "address:" + address

    def by_name(pages, page_script_hash, page_name):
        if page_script_hash == asked:
            page_script_hash, page_name = "", address
        set_intent(pages, page_script_hash, page_name)

    monkeypatch.setattr(PagesManager, "set_script_intent", by_name)
    at._page_hash = asked


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_an_unknown_address_goes_home_with_a_sentence_in_the_readers_words(monkeypatch, lang):
    dialogs = []
    monkeypatch.setattr(streamlit_navigation, "send_page_not_found", dialogs.append)  # the English dialog's message
    at = new_app()
    _as_a_browser(monkeypatch, at, "no-such-page")
    at.query_params["lang"] = lang
    at.run()
    assert_no_exception(at)
    assert dialogs == []
    assert at._finished_page_script_hash == calc_hash("home")
    assert i18n.text(lang, "common", "no_such_page") in [w.value for w in at.warning]


def _resolved(name: str) -> tuple[str | None, bool]:
    """The page Streamlit resolves a browser's address (/name) to once the app has read it (None: 'Page not found',
    its dialog), and whether the app says the address is lost. The pages as st.navigation registers them: by the
    hash of their url_path, found by name at their address (the home page's is "")."""
    pages = PagesManager("app/main.py")
    pages.set_script_intent("", name)
    said = catalog.ask_home_if_lost(pages)
    topics = {calc_hash(p.url): p.topic for p in catalog.PAGES}
    infos = {
        h: {"page_script_hash": h, "url_pathname": "" if t == "home" else t.replace("_", "-")}
        for h, t in topics.items()
    }
    found = pages.set_pages_and_resolve(infos, fallback_page_hash=calc_hash("home"))
    return (topics[found["page_script_hash"]] if found else None), said


@pytest.mark.parametrize(
    "address, page, said",
    [("no-such-page", "home", True), ("Masks", "home", True), ("home", "home", False), ("masks", "masks", False),
     ("", "home", False), ("encoder-decoder", "encoder_decoder", False)],
)  # fmt: skip
def test_a_browsers_address_is_read_by_its_name(address, page, said):
    """A browser asks by the address's name (the frontend sends no hash on a page's first load): a name Streamlit
    finds no page for runs the home page without its dialog, and the page says so, except for /home itself."""
    assert _resolved(address) == (page, said)
