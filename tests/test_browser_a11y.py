"""Accessibility in a real browser: the document's language following the reader's choice, and a lesson walked by
keyboard alone. axe-core runs on every page, in the three languages in turn, in tests/test_browser.py (each page is
opened there once; tests/axe_helpers.py says what passes). Joining a room and answering by keyboard alone is walked
in tests/test_browser_room.py, on its room server, with this module's tab_to.

Shares the real-browser test's server and chromium (tests/test_browser.py); skipped like it when either is missing.
"""

from __future__ import annotations

import json

import pytest

from tests import test_browser as shared
from tests.test_browser import COUNT_RUNS, PAGE_RUN_MS, wait_for_run

pytestmark = pytest.mark.browser
server, browser = shared.server, shared.browser  # the real-browser test's fixtures: one server, one chromium

VIEWPORT = {"width": 1366, "height": 768}  # the size the accessibility review used


def open_page(browser, url: str):
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="en-US")
    context.add_init_script(COUNT_RUNS)
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_selector("h1", timeout=PAGE_RUN_MS)
    wait_for_run(page)
    assert page.get_by_text("Page not found").count() == 0, url
    return context, page


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


# what a screen reader names the focused element by: a button's or link's text, a field's label (aria-label)
# Only a control's own text counts: a focusable container (Streamlit's <main tabindex=0>) whose whole text happens
# to end with the sought words must not stand in for the button at its end.
FOCUSED_TEXT = """() => { const e = document.activeElement;
  const control = 'button, a, input, textarea, select, [role=button], [role=radio], [role=checkbox], [role=switch], '
    + '[role=tab], [role=link], [role=option], [role=combobox], [role=slider]';
  return e && e.matches(control) ? (e.innerText || e.getAttribute('aria-label') || '').trim() : ''; }"""


def start_at_top(page) -> None:
    """Put the keyboard's starting point at the top of the document, as a page just opened has it: the next Tab
    goes to the first focusable element (a plain body.focus() does not move it, the body is not focusable)."""
    page.evaluate("() => { const b = document.body; b.tabIndex = -1; b.focus(); b.removeAttribute('tabindex'); }")


def tab_to(page, text: str, limit: int = 150) -> None:
    """Press Tab (only Tab) until the focused element's text or label ends with `text`; fails when it is never
    reached."""
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
