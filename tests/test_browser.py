"""Real-browser test: the app served by `streamlit run` and opened page by page in Debian's chromium (its headless
shell: scripts/app_server.CHROMIUM).

Every page listed in app/catalog.py is opened by its own URL (http://host/<url>?lang=<en, ja, ko in turn>&<state>)
in a new tab, a fresh Streamlit session, as a shared link or a bookmark would open it, at a state reached after input, with a
figure: the state of the first lesson step that opens the page, /lessons at an answered step (the landing page and
/room, which no lesson opens at a state, as they start; tests/axe_helpers.figure_states). Each page's default state,
and every page in all three languages, are checked by scripts/a11y_axe_all.py (results/a11y_axe_all.json). It must show that page (not Streamlit's "Page
not found" notice, not a different page), with the app's sidebar, no exception box and no JavaScript dialog, its
document language the link's, and axe-core must find no serious accessibility violation there (tests/axe_helpers.py:
every page in one of the three languages, each language on a third of them). Where a page has text areas,
a hostile text is typed into them (20,000 characters that begin with emoji, CJK and Korean, a <script> tag, an
image whose onerror calls alert and a template expression); it must stay text: no exception, no dialog, no
<script> element, no "49" computed from {{7*7}}. Each of its parts, an empty box, and each script's text on its
own, are also typed headless into every text box of every page (tests/pages/test_app_pages.py: no exception, the box
keeps the text).

Accessibility beyond axe: the document's language follows the reader's choice, and a lesson is walked by keyboard
alone (the last two tests, on the same server once every page has been opened by its URL). Joining a room and
answering by keyboard alone is walked in tests/test_browser_room.py, on its room server, with this module's tab_to.

One screenshot per page, as first loaded at 1280 px wide, goes to artifacts/screenshots/; with
ATTENTION_LAB_SCREENSHOTS=docs each page opens with its default inputs, in English, and the screenshot is also
written to docs/screenshots/<url>.png where the README shows that picture.

One server serves the whole module (model pages load their weights on their first visit only).
Needs /usr/bin/chromium-headless-shell (`bash scripts/dev.sh test` installs it when missing) and playwright from PyPI; no browser
is downloaded. Skipped, with the reason, when either is missing.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from urllib.parse import urlencode

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from app import catalog
from scripts.app_server import CHROMIUM, COUNT_RUNS, RUN_FINISHED, free_port, start_server, stop_server
from tests import axe_helpers

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
DOC_SCREENSHOTS = ROOT / "docs" / "screenshots"
README = (ROOT / "README.md").read_text(encoding="utf-8")  # which of them it shows
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 860}
SERVER_START_S = 90  # cold start on a busy 2-core machine
PAGE_RUN_MS = 150_000  # first visit of a model page loads its weights
TEMPLATE = "{{7*7}}"
# One text typed, as one rerun: each run of a model page is a model pass (/kv-cache: a generation), so the text holds
# at once what only the browser can tell apart: the box keeping 20,000 characters, text in three scripts going
# through the browser, the websocket and the URL, markup left inert (no dialog, no <script> element, no evaluated
# template). The scripts and the markup come first, where every page reads them (a page may keep only its first
# tokens). Each script's text on its own, the markup and an empty box run headless (tests/pages/test_app_pages.py),
# 20,000 characters also through each page's link (tests/pages/test_shareable_links.py).
MARKUP = f"<script>alert(1)</script> <img src=x onerror=alert(2)> The {TEMPLATE} cat sat."
SCRIPTS = (
    "The 🐱 sat on the 🧶 because it was 😴. 👍🏽👨‍👩‍👧 猫はマットの上に座った。なぜなら疲れていたからだ。"
    "我爱自然语言处理。 고양이가 매트 위에 앉았다. 왜냐하면 피곤했기 때문이다."
)
# 20,000 characters as the browser counts them (UTF-16 code units, as the box's max_chars does): an emoji is two, so
# the text has fewer Python characters; a longer one set by a script is refused by the box, with no rerun.
HOSTILE_TEXT = f"{SCRIPTS} {MARKUP} " + "The cat sat on the mat because it was tired. " * 445
HOSTILE_TEXT = HOSTILE_TEXT[: 20_000 - (len(HOSTILE_TEXT[:20_000].encode("utf-16-le")) // 2 - 20_000)]
assert len(HOSTILE_TEXT.encode("utf-16-le")) // 2 == 20_000 and SCRIPTS in HOSTILE_TEXT and MARKUP in HOSTILE_TEXT

INJECTED_SCRIPT = """() => Array.from(document.querySelectorAll('script'))
  .some(s => (s.textContent || '').includes('alert(1)'))"""
NAV_LINKS = """() => Array.from(document.querySelectorAll('[data-testid="stSidebarNav"] a'))
  .map(a => [new URL(a.href).pathname, a.getAttribute('aria-current')])"""
# Text the page itself wrote (markdown, captions, alerts, code, tables), where an evaluated template would show
PAGE_TEXT = """() => Array.from(document.querySelectorAll(
  '[data-testid="stMain"] :is([data-testid="stMarkdownContainer"], [data-testid="stCaptionContainer"], '
  + '[data-testid="stCode"], [data-testid="stTable"], [data-testid="stAlert"], [data-testid="stText"])'))
  .map(e => e.innerText).join('\\n')"""
STANDALONE_49 = re.compile(r"(?<![\d.,])49(?![\d.,])")

if not Path(CHROMIUM).exists():
    pytest.skip(
        f"{CHROMIUM} is missing (install Debian's: apt-get install chromium-headless-shell fonts-noto-cjk; "
        "`bash scripts/dev.sh test` does it when run as root)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")


@pytest.fixture(scope="module")
def server():
    """A fresh `streamlit run` process: the first page opened is the process's first script run, which is the
    case a direct link to a page must survive."""
    port = free_port()
    log = tempfile.NamedTemporaryFile("w+", prefix="attention-lab-streamlit-", suffix=".log", delete=False)
    try:
        try:
            proc = start_server(port, log, SERVER_START_S)
        except RuntimeError as err:
            log.seek(0)
            pytest.fail(f"{err}:\n{log.read()[-3000:]}")
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            stop_server(proc)
    finally:
        log.close()
        os.unlink(log.name)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def pages_context(browser):
    """The browser context the pages open in, one tab each: as a visitor's browser does, it keeps Streamlit's
    scripts (served immutable) from one page to the next, where a context per page fetched and compiled them again
    (the module alone on a quiet machine, 2026-11-29: 215 CPU-s of the whole machine and 160 s, then 198 and 145)."""
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="en-US")
    context.add_init_script(COUNT_RUNS)
    yield context
    context.close()


def test_the_run_counter_reads_streamlits_messages(browser):
    """COUNT_RUNS (scripts/app_server.py) counts a run when a ForwardMsg script_finished reaches the page, reading
    the websocket's bytes itself: its reading agrees with protobuf's on messages of every shape the server sends
    (a misread length would count other messages or miss the one that ends a run, and every wait on a run with
    it)."""
    messages = []
    for status in ForwardMsg.ScriptFinishedStatus.values():
        m = ForwardMsg(hash="h" * 40, script_finished=status)
        m.metadata.delta_path.extend(range(200))  # a length past one byte's varint
        messages.append(m)
    messages += [
        ForwardMsg(hash="x", session_status_changed={"script_is_running": False}),
        ForwardMsg(hash="y", delta={"new_element": {"markdown": {"body": "é" * 5000}}}),
        ForwardMsg(new_session={"name": "r" * 200}),
        ForwardMsg(heartbeat_ack=True),
        ForwardMsg(ref_hash="abc", metadata={"delta_path": [1]}),
    ]
    context = browser.new_context()
    try:
        page = context.new_page()
        page.evaluate(COUNT_RUNS)
        read = page.evaluate(
            "frames => frames.map(f => window.__scriptFinishedStatus(new Uint8Array(f).buffer))",
            [list(m.SerializeToString()) for m in messages],
        )
    finally:
        context.close()
    assert read == [m.script_finished if m.WhichOneof("type") == "script_finished" else None for m in messages]


def wait_for_run_seen(page) -> None:
    """Wait until a run already seen under way (its page's heading drawn, the run counter moved, the URL or the
    page's text changed by it) is over and no stale element is left."""
    page.wait_for_function(RUN_FINISHED, timeout=PAGE_RUN_MS, polling=100)


def wait_for_run(page) -> None:
    """After a click, a page opened or reloaded: the browser marks the app running only once the server's first
    message of the run arrives, so the run may not have begun yet; a pause lets it begin, then it must end."""
    wait_for_run_seen(page)
    page.wait_for_timeout(300)
    wait_for_run_seen(page)


def submit_text(page, area, text: str) -> None:
    """Type into a text area and commit it (Ctrl+Enter), then wait for the rerun it starts to finish (the page's
    count of runs the server finished, scripts/app_server.COUNT_RUNS)."""
    before = page.evaluate("window.__runsFinished")
    area.fill(text)
    area.press("Control+Enter")
    page.wait_for_function(f"window.__runsFinished > {before}", timeout=PAGE_RUN_MS, polling=50)
    wait_for_run_seen(page)


def exception_texts(page) -> list[str]:
    boxes = page.locator('[data-testid="stException"]')
    return [boxes.nth(i).inner_text()[:800] for i in range(boxes.count())]


def page_path(entry) -> str:
    return "/" if entry.url == "home" else f"/{entry.url}"


def assert_healthy(page, dialogs: list[str], where: str) -> None:
    assert not exception_texts(page), (where, exception_texts(page))
    assert not dialogs, (where, dialogs)
    assert not page.evaluate(INJECTED_SCRIPT), where


# The landing page last: on a fresh server, the first page opened must be one reached by its own URL (opening
# "/" first would hide a server that resolves page URLs only after its first run of the main page).
PAGES_IN_TEST_ORDER = sorted(catalog.PAGES, key=lambda p: p.url == "home")
DOCS = os.environ.get("ATTENTION_LAB_SCREENSHOTS") == "docs"
# Each page in one language, the three in turn (the README's pictures: English)
LANG_OF = {p.url: "en" if DOCS else ("en", "ja", "ko")[i % 3] for i, p in enumerate(PAGES_IN_TEST_ORDER)}
# ... at a state after input with a figure, reached by the link itself, so it costs no second load (the README's
# pictures: the default state)
STATE_OF = {} if DOCS else axe_helpers.figure_states()


def link_query(entry) -> str:
    """The query string a page is opened with: its language and its state."""
    return urlencode({"lang": LANG_OF[entry.url], **STATE_OF.get(entry.url, {})})


@pytest.mark.parametrize("entry", PAGES_IN_TEST_ORDER, ids=[p.url for p in PAGES_IN_TEST_ORDER])
def test_page_opened_by_its_url(server, pages_context, entry):
    page = pages_context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        lang = LANG_OF[entry.url]
        page.goto(f"{server}{page_path(entry)}?{link_query(entry)}", wait_until="domcontentloaded", timeout=60_000)
        page.wait_for_selector("h1", timeout=PAGE_RUN_MS)  # drawn by the page's first run
        wait_for_run_seen(page)

        # the page asked for, through the app's own navigation (not a fallback to the main page); the sidebar
        # is given a few seconds to settle, the "Page not found" notice would stay
        expected = sorted(page_path(p) for p in catalog.PAGES)
        expected_js = json.dumps(json.dumps(expected, separators=(",", ":")))  # as JSON.stringify writes it
        try:
            page.wait_for_function(
                f"""() => {{ const nav = ({NAV_LINKS})();
                  return JSON.stringify(nav.map(n => n[0]).sort()) === {expected_js}
                      && nav.filter(n => n[1] === 'page').map(n => n[0]).join() === {json.dumps(page_path(entry))}
                      && document.querySelector('[data-testid="stSidebar"] [data-testid="stSelectbox"]') !== null;
                }}""",
                timeout=10_000,
                polling=200,
            )
        except sync_api.TimeoutError:
            pass  # the assertions below say what is wrong
        assert page.get_by_text("Page not found").count() == 0, "Streamlit could not resolve the page's URL"
        nav = page.evaluate(NAV_LINKS)
        assert sorted(p for p, _ in nav) == expected, nav
        assert [p for p, current in nav if current == "page"] == [page_path(entry)], nav
        assert page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').count() >= 1  # language
        assert_healthy(page, dialogs, "first load")

        shot = page.screenshot()  # the first screen, as a visitor sees it
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        (SCREENSHOTS / f"{entry.url}.png").write_bytes(shot)
        if DOCS and f"{DOC_SCREENSHOTS.relative_to(ROOT)}/{entry.url}.png" in README:
            # The README's pictures: a taller window, so the first figures show under the controls. Only those it
            # shows: a page's picture nobody links would stay behind, in an old look, when the app changes.
            size = page.viewport_size
            page.set_viewport_size({"width": size["width"], "height": 1500})
            page.wait_for_timeout(1500)  # plotly redraws at the new size; no script rerun
            DOC_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            (DOC_SCREENSHOTS / f"{entry.url}.png").write_bytes(page.screenshot())
            page.set_viewport_size(size)

        axe_helpers.wait_for_page_script(page, lang, PAGE_RUN_MS)  # the language set, the navigation mended
        found = axe_helpers.violations(page)
        assert found == [], axe_helpers.report(found)

        areas = page.locator('[data-testid="stMain"] [data-testid="stTextArea"] textarea')
        if areas.count() == 0:
            return
        baseline_49 = len(STANDALONE_49.findall(page.evaluate(PAGE_TEXT)))
        submit_text(page, areas.first, HOSTILE_TEXT)
        assert_healthy(page, dialogs, "hostile text")
        assert areas.first.input_value() == HOSTILE_TEXT  # kept literally, as the text it is
        shown = page.evaluate(PAGE_TEXT)
        assert len(STANDALONE_49.findall(shown)) <= baseline_49, "{{7*7}} was evaluated somewhere"
        for i in range(1, areas.count()):  # any further text area gets the markup
            submit_text(page, areas.nth(i), MARKUP)
            assert_healthy(page, dialogs, f"text area {i}")
    finally:
        page.close()


# --- accessibility beyond axe: on the same server and chromium, after every page was opened by its URL ----------

A11Y_VIEWPORT = {"width": 1366, "height": 768}  # the size the accessibility review used


def open_page(browser, url: str):
    context = browser.new_context(viewport=A11Y_VIEWPORT, device_scale_factor=1, locale="en-US")
    context.add_init_script(COUNT_RUNS)
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_selector("h1", timeout=PAGE_RUN_MS)  # drawn by the page's first run
    wait_for_run_seen(page)
    assert page.get_by_text("Page not found").count() == 0, url
    return context, page


# the navigation's page names drawn narrower than their text (Streamlit's "…"), with their widths in pixels: any
# element of a link (the name sits in a span, a markdown container and a paragraph, each able to cut it)
CUT_NAV_NAMES = """() => [...document.querySelectorAll('[data-testid="stSidebarNavLink"] *')]
  .filter(e => e.innerText.trim() && e.scrollWidth > e.clientWidth + 1)
  .map(e => [e.innerText.trim(), e.scrollWidth, e.clientWidth])"""


# A "?" button as Streamlit draws one beside a widget (its English name), put on the page by the test: the page
# script names it in the reader's words, and again after a language switch that does not redraw it.
HELP_BUTTON = """() => { const d = document.createElement('div'); d.dataset.testid = 'stTooltipIcon';
  d.innerHTML = '<button type="button" id="lab-help-probe" aria-label="Help for d_k"></button>';
  document.body.appendChild(d); }"""
HELP_NAME = "() => document.getElementById('lab-help-probe').getAttribute('aria-label')"


def test_document_language_follows_the_choice(server, browser):
    """Switching the language in the sidebar changes the document's `lang`, without a reload; in each language
    every page's name in the navigation is whole (none cut with "…"), and a widget's "?" button is named in it."""
    from app import i18n

    context, page = open_page(browser, f"{server}/sdpa-steps")
    try:
        assert page.evaluate("document.documentElement.lang") == "en"
        # the style comes with the page script: a run seen finished may not have drawn it yet on a busy machine
        axe_helpers.wait_for_page_script(page, "en", PAGE_RUN_MS)
        assert page.evaluate(CUT_NAV_NAMES) == []
        page.evaluate(HELP_BUTTON)
        for name, code in (("한국어", "ko"), ("日本語", "ja"), ("English", "en")):
            page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"] input').first.click()
            page.keyboard.press("ArrowDown")  # opens the list of languages
            page.get_by_role("option", name=name).click()
            page.wait_for_function(f"document.documentElement.lang === {json.dumps(code)}", timeout=PAGE_RUN_MS)
            wait_for_run_seen(page)  # the language is set by the run the choice started
            assert f"lang={code}" in page.evaluate("location.search")
            assert page.evaluate(CUT_NAV_NAMES) == [], code
            help_for = i18n.text(code, "common", "help_for", label="d_k")
            page.wait_for_function(f"() => ({HELP_NAME})() === {json.dumps(help_for)}", timeout=PAGE_RUN_MS)
            named = page.evaluate(
                """() => [...document.querySelectorAll('[data-testid="stTooltipIcon"] button')]
                .map(b => b.getAttribute('aria-label'))"""
            )
            assert not [n for n in named if n.startswith("Help") and code != "en"], named  # Streamlit's own too
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


FOCUS_REPORT = """() => ({runs: window.__runsFinished,
  state: document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state'),
  focused: (document.activeElement ? document.activeElement.outerHTML : '').slice(0, 200)})"""


def press_and_wait(page, key: str) -> None:
    """Press a key on the focused element and wait for the rerun it starts to finish: the page's count of runs the
    server finished (scripts/app_server.COUNT_RUNS). Not the page's text: a choice on a radio reruns the page and
    changes no text, and a busy browser may draw a short run's 'running' and 'notRunning' as one frame, in which
    the root element's script state never changes."""
    before = page.evaluate("window.__runsFinished")
    focused = page.evaluate(FOCUS_REPORT)
    page.keyboard.press(key)
    try:
        page.wait_for_function(f"() => window.__runsFinished > {before}", timeout=PAGE_RUN_MS, polling=50)
    except Exception as error:
        raise AssertionError(f"no run after {key}: before {focused}, now {page.evaluate(FOCUS_REPORT)}") from error
    wait_for_run_seen(page)


IN_PICKER = """() => { const e = document.activeElement;
  return !!e && e.type === 'radio' && !!e.closest('[role=radiogroup]')
    && e.closest('[role=radiogroup]').getAttribute('aria-label') === 'Pick one'; }"""

# the answer's code block under its caption; null until both are drawn (a run draws its elements one by one)
YOUR_ANSWER = """() => { const caption = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
  .find(c => c.innerText.trim() === 'Your answer');
  const code = caption && caption.closest('[data-testid="stColumn"]')?.querySelector('[data-testid="stCode"]');
  return code ? code.innerText.trim() : null; }"""


def test_a_lesson_step_by_keyboard_alone(server, browser):
    """/lessons with the keyboard only, as a learner walks a step that asks to pick: Tab to 'Next step' and press
    Enter until a step offers a choice's picker (radio buttons, outside the answer's form), take the hint (Enter),
    send the form empty (Tab to 'Check my answer', Enter: 'Give an answer first.'), then Tab into the picker (it
    comes before the button), choose with the arrow keys, Tab on to 'Check my answer' and send with Space: the page
    judges the option chosen. No mouse anywhere."""
    context, page = open_page(browser, f"{server}/lessons")
    picker = page.get_by_role("radiogroup", name="Pick one")
    try:
        for _ in range(8):
            if picker.count():
                break
            tab_to(page, "Next step")
            press_and_wait(page, "Enter")
        else:
            raise AssertionError("no step with a choice within 8 steps")
        assert picker.get_by_role("radio").count() >= 2
        page.locator("body").focus()
        tab_to(page, "A nudge, please")
        press_and_wait(page, "Enter")
        assert page.get_by_text("Nudge", exact=True).count() == 1  # the first hint is shown
        page.locator("body").focus()
        tab_to(page, "Check my answer")
        press_and_wait(page, "Enter")
        assert page.get_by_text("Give an answer first.").count() == 1  # the form was sent, empty
        # the answer: Tab into the picker, choose with the arrow keys (each choice reruns the page), then send it
        page.locator("body").focus()
        for _ in range(150):
            page.keyboard.press("Tab")
            if page.evaluate(IN_PICKER):
                break
        else:
            raise AssertionError("the choice's picker is not reachable by Tab")
        press_and_wait(page, "ArrowDown")  # none chosen yet: the focused option's neighbour is chosen
        press_and_wait(page, "ArrowDown")
        assert page.evaluate(IN_PICKER), "the picker lost the focus after a choice"
        chosen = picker.locator("input[type=radio]:checked")
        assert chosen.count() == 1
        label = chosen.evaluate("r => r.closest('label').innerText.trim()")
        tab_to(page, "Check my answer", limit=3)  # the next stop after the picker
        press_and_wait(page, "Space")
        shown = page.wait_for_function(YOUR_ANSWER, timeout=PAGE_RUN_MS, polling=100).json_value()
        assert page.get_by_text("Your answer", exact=True).count() == 1  # judged: right or wrong, shown
        assert shown == label  # the option chosen by keys is the answer judged
    finally:
        context.close()
