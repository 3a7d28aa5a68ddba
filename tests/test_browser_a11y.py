"""Accessibility in a real browser: axe-core (tests/axe/, vendored) run in Debian's chromium on the app's pages,
and the document's language following the reader's choice.

A page passes when axe finds no serious or critical violation of WCAG 2.1 A/AA, Streamlit's own markup included
(what the app cannot mend there is moderate or minor, and listed in the README's known limits).

Shares the real-browser test's server and chromium (tests/test_browser.py); skipped like it when either is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import test_browser as shared
from tests.test_browser import COUNT_RUNS, PAGE_RUN_MS, wait_for_run

pytestmark = pytest.mark.browser
server, browser = shared.server, shared.browser  # the real-browser test's fixtures: one server, one chromium

AXE = Path(__file__).resolve().parent / "axe" / "axe.min.js"
VIEWPORT = {"width": 1366, "height": 768}  # the size the accessibility review used
SERIOUS = {"serious", "critical"}
# the pages the accessibility review checked, each in one of the three languages (captions and code look alike in
# all three; the language itself is checked on every one)
A11Y_PAGES = {"home": "ko", "attention": "en", "lessons": "ja", "room": "ko", "sdpa-steps": "en", "masks": "ja"}


def open_page(browser, url: str):
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="en-US")
    context.add_init_script(COUNT_RUNS)
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_selector("h1", timeout=PAGE_RUN_MS)
    wait_for_run(page)
    assert page.get_by_text("Page not found").count() == 0, url
    return context, page


def serious_violations(page) -> list[dict]:
    """axe's serious and critical violations of WCAG 2.1 A/AA on the page as drawn, with the elements they name."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async serious => {
          const r = await axe.run(document, {
            runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}, resultTypes: ['violations']});
          return r.violations.filter(v => serious.includes(v.impact)).map(v => ({id: v.id, impact: v.impact,
            nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                                      summary: (n.failureSummary || '').slice(0, 300)}))}));
        }""",
        sorted(SERIOUS),
    )


@pytest.mark.parametrize("url,lang", A11Y_PAGES.items(), ids=list(A11Y_PAGES))
def test_axe_finds_no_serious_violation(server, browser, url, lang):
    """What axe found before: caption contrast (the theme in .streamlit/config.toml), code tokens' contrast, code
    blocks out of the keyboard's reach and the sidebar navigation's lists (app/main.py's page script)."""
    path = "/" if url == "home" else f"/{url}"
    context, page = open_page(browser, f"{server}{path}?lang={lang}")
    try:
        assert page.evaluate("document.documentElement.lang") == lang
        violations = serious_violations(page)
        assert violations == [], json.dumps(violations, ensure_ascii=False, indent=1)
    finally:
        context.close()


def test_document_language_follows_the_choice(server, browser):
    """Switching the language in the sidebar changes the document's `lang`, without a reload."""
    context, page = open_page(browser, f"{server}/sdpa-steps")
    try:
        assert page.evaluate("document.documentElement.lang") == "en"
        for name, code in (("한국어", "ko"), ("日本語", "ja"), ("English", "en")):
            page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"] input').first.click()
            page.keyboard.press("ArrowDown")  # opens the list of languages
            page.get_by_role("option", name=name).click()
            page.wait_for_function(f"document.documentElement.lang === {json.dumps(code)}", timeout=PAGE_RUN_MS)
            wait_for_run(page)
            assert f"lang={code}" in page.evaluate("location.search")
    finally:
        context.close()


FOCUSED_TEXT = "() => (document.activeElement && (document.activeElement.innerText || '')).trim()"


def tab_to(page, text: str, limit: int = 150) -> None:
    """Press Tab (only Tab) until the focused element's text is `text`; fails when it is never reached."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED_TEXT).endswith(text):
            return
    raise AssertionError(f"{text!r} is not reachable by Tab within {limit} presses")


MAIN_TEXT = "() => document.querySelector('[data-testid=\"stMain\"]').innerText"
FOCUS_REPORT = """() => ({runs: window.__runsFinished,
  state: document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state'),
  focused: (document.activeElement ? document.activeElement.outerHTML : '').slice(0, 200)})"""


def press_and_wait(page, key: str) -> None:
    """Press a key on the focused element and wait for the rerun it starts: seen by the run counter, or by the
    page's text changing (a busy browser may draw a short run's 'running' and 'notRunning' in one frame, so the
    counter never sees it)."""
    before = page.evaluate("window.__runsFinished")
    text = page.evaluate(MAIN_TEXT)
    focused = page.evaluate(FOCUS_REPORT)
    page.keyboard.press(key)
    try:
        page.wait_for_function(
            f"() => window.__runsFinished > {before} || ({MAIN_TEXT})() !== {json.dumps(text)}",
            timeout=PAGE_RUN_MS,
            polling=50,
        )
    except Exception as error:
        raise AssertionError(f"no run after {key}: before {focused}, now {page.evaluate(FOCUS_REPORT)}") from error
    wait_for_run(page)


def test_a_lesson_step_by_keyboard_alone(server, browser):
    """/lessons with the keyboard only: Tab to 'Next step' and press Enter until a step asks for a hint, take the
    hint (Enter), send the form empty (Tab to 'Check my answer', Enter: 'Give an answer first.'), then choose an
    answer (Space on a radio, or typed) and send it: the page judges it. No mouse anywhere."""
    context, page = open_page(browser, f"{server}/lessons")
    try:
        for _ in range(8):
            if page.get_by_role("button", name="A nudge, please").count():
                break
            tab_to(page, "Next step")
            press_and_wait(page, "Enter")
        else:
            raise AssertionError("no step with a hint within 8 steps")
        page.locator("body").focus()
        tab_to(page, "A nudge, please")
        press_and_wait(page, "Enter")
        assert page.get_by_text("Nudge", exact=True).count() == 1  # the first hint is shown
        page.locator("body").focus()
        tab_to(page, "Check my answer")
        press_and_wait(page, "Enter")
        assert page.get_by_text("Give an answer first.").count() == 1  # the form was sent, empty
        # the answer: Tab into the form's first field, choose (Space on a radio) or type, then send it
        page.locator("body").focus()
        for _ in range(150):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.closest('[data-testid=\"stForm\"]') !== null"):
                break
        kind = page.evaluate("document.activeElement.type")
        if kind == "radio":
            page.keyboard.press("Space")
        else:
            page.keyboard.type("1")
        tab_to(page, "Check my answer", limit=10)
        press_and_wait(page, "Enter")
        assert page.get_by_text("Your answer", exact=True).count() == 1, kind  # judged: right or wrong, shown
    finally:
        context.close()
