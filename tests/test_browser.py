"""Real-browser test: the app served by `streamlit run` and opened page by page in Debian's chromium.

Every page listed in app/catalog.py is opened by its own URL (http://host/<url>?lang=<en, ja, ko in turn>&<state>)
in a fresh browser session, as a shared link or a bookmark would open it, at a state reached after input, with a
figure: the state of the first lesson step that opens the page, /lessons at an answered step (the landing page and
/room, which no lesson opens at a state, as they start; tests/axe_helpers.figure_states). Each page's default state,
and every page in all three languages, are checked by scripts/a11y_axe_all.py (results/a11y_axe_all.json). It must show that page (not Streamlit's "Page
not found" notice, not a different page), with the app's sidebar, no exception box and no JavaScript dialog, its
document language the link's, and axe-core must find no serious accessibility violation there (tests/axe_helpers.py:
every page in one of the three languages, each language on a third of them). Where a page has text areas,
hostile texts are typed into them (empty, 20,000 characters, emoji, CJK, Korean, a <script> tag, a template
expression); each must stay text: no exception, no dialog, no <script> element, no "49" computed from {{7*7}}.

One screenshot per page, as first loaded at 1280 px wide, goes to artifacts/screenshots/; with
ATTENTION_LAB_SCREENSHOTS=docs each page opens with its default inputs, in English, and the screenshot is also
written to docs/screenshots/<url>.png where the README shows that picture.

One server serves the whole module (model pages load their weights on their first visit only).
Needs /usr/bin/chromium (`bash scripts/dev.sh test` installs it when missing) and playwright from PyPI; no browser
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

from app import catalog
from scripts.app_server import COUNT_RUNS, RUN_FINISHED, free_port, start_server, stop_server
from tests import axe_helpers

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
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
HOSTILE_TEXTS = {  # typed in this order; consecutive values differ, so each one triggers a rerun
    "empty": "",
    "huge": ("The cat sat on the mat because it was tired. " * 445)[:20_000],
    "emoji": "The 🐱 sat on the 🧶 because it was 😴. 👍🏽👨‍👩‍👧",
    "cjk": "猫はマットの上に座った。なぜなら疲れていたからだ。我爱自然语言处理。",
    "korean": "고양이가 매트 위에 앉았다. 왜냐하면 피곤했기 때문이다.",
    "script": "<script>alert(1)</script> <img src=x onerror=alert(2)>",
    "template": f"The {TEMPLATE} cat sat.",
}
assert len(HOSTILE_TEXTS["huge"]) == 20_000

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
        f"{CHROMIUM} is missing (install Debian's chromium: apt-get install chromium; "
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


def wait_for_run(page) -> None:
    """Wait until the script run is over and no stale element is left; charts draw just after the run ends."""
    page.wait_for_function(RUN_FINISHED, timeout=PAGE_RUN_MS, polling=100)
    page.wait_for_timeout(300)
    page.wait_for_function(RUN_FINISHED, timeout=PAGE_RUN_MS, polling=100)


def submit_text(page, area, text: str) -> None:
    """Type into a text area and commit it (Ctrl+Enter), then wait for the rerun it starts to finish: seen by
    the run counter, or by the URL, which the run rewrites as soon as it reads the new text (a busy browser may
    never draw the short 'running' state)."""
    before = page.evaluate("window.__runsFinished")
    search = page.evaluate("location.search")
    area.fill(text)
    area.press("Control+Enter")
    page.wait_for_function(
        f"window.__runsFinished > {before} || location.search !== {json.dumps(search)}", timeout=PAGE_RUN_MS, polling=50
    )
    wait_for_run(page)


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
def test_page_opened_by_its_url(server, browser, entry):
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="en-US")
    context.add_init_script(COUNT_RUNS)
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        lang = LANG_OF[entry.url]
        page.goto(f"{server}{page_path(entry)}?{link_query(entry)}", wait_until="domcontentloaded", timeout=60_000)
        page.wait_for_selector("h1", timeout=PAGE_RUN_MS)
        wait_for_run(page)

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
        for kind, text in HOSTILE_TEXTS.items():
            submit_text(page, areas.first, text)
            assert_healthy(page, dialogs, kind)
            assert areas.first.input_value() == text, kind  # kept literally, as the text it is
            if kind == "template":
                shown = page.evaluate(PAGE_TEXT)
                assert len(STANDALONE_49.findall(shown)) <= baseline_49, "{{7*7}} was evaluated somewhere"
        for i in range(1, areas.count()):  # any further text area gets the script
            submit_text(page, areas.nth(i), HOSTILE_TEXTS["script"])
            assert_healthy(page, dialogs, f"text area {i}")
    finally:
        context.close()
