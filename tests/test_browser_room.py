"""A study room in a real browser (Debian's chromium): a facilitator and two learners, one in Japanese, each in
their own browser context (their own session). The Japanese learner joins by the link and answers with the mouse;
the English one uses the keyboard only (Tab to the room code, type it, Tab to her name, type it, Tab to Join,
Enter; Tab to the open question's field, type, Tab to Answer, Enter). They follow a step, answer, the facilitator sees
the histogram and reveals. The facilitator's control token never shows in the address bar and a reload keeps the
control (the browser's cookie); a learner's reload is the same learner (the link carries the seat); the projector
view shows the room with no control; giving the control up on a shared computer expires the cookie. Screenshots go
to artifacts/screenshots/room-*.png (with ATTENTION_LAB_SCREENSHOTS=docs also docs/screenshots/, the README's "Run a
study group" pictures). The server's rooms live in a temporary SQLite file that this test reads too."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from app.views.room.follow import FALLBACK_ENV
from core.room import PASSCODE_ENV
from scripts.app_server import COUNT_RUNS, free_port, start_server, stop_server
from tests.test_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    SERVER_START_S,
    exception_texts,
    start_at_top,
    sync_api,
    tab_to,
    wait_for_run,
)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SHOTS = [ROOT / "artifacts" / "screenshots"]
if os.environ.get("ATTENTION_LAB_SCREENSHOTS") == "docs":
    SHOTS.append(ROOT / "docs" / "screenshots")
FOLLOW_MS = 30_000
RESTART_FALLBACK_S = 5.0  # the restart test's room panel timer (a real server's: 15 s)
# The first server's: longer than any wait here, so a step or a question must arrive by the server's push.
PUSH_ONLY_FALLBACK_S = 600.0
LEARNERS = {"en": ("Ana", "Display name (only the facilitator sees it)", "Join", "A number, e.g. 0.42", "Answer"),
            "ja": ("ハナ", "表示名（進行役にだけ見えます）", "参加する", "数（例：0.42）", "答える")}  # fmt: skip
KEPT = {"en": "Your answer: 0.5", "ja": "あなたの答え：0.5"}  # what a learner sees once her answer is kept
PASSCODE = "KX7QP-M2RTW-9HNBZ-4CDFG"  # the operator's, for opening rooms: as on a hosted class server


@pytest.fixture(scope="module")
def room_server():
    """(base URL, the server's store, restart): restart() stops the server and starts it again on the same port
    (restart(fallback_s=S): with the room panels' fallback timer at S seconds from then on)."""
    folder = tempfile.TemporaryDirectory(prefix="room-browser-")
    before = {k: os.environ.get(k) for k in ("ATTENTION_LAB_ROOMS", "DATABASE_URL", FALLBACK_ENV, PASSCODE_ENV)}
    os.environ["ATTENTION_LAB_ROOMS"] = str(Path(folder.name) / "rooms.sqlite3")
    os.environ[PASSCODE_ENV] = PASSCODE
    os.environ.pop("DATABASE_URL", None)
    os.environ[FALLBACK_ENV] = str(PUSH_ONLY_FALLBACK_S)
    port = free_port()
    with open(Path(folder.name) / "server.log", "w+") as log:
        procs = []

        def start() -> None:
            try:
                procs.append(start_server(port, log, SERVER_START_S))
            except RuntimeError as err:
                log.seek(0)
                pytest.fail(f"{err}:\n{log.read()[-3000:]}")

        def restart(fallback_s: float | None = None) -> None:
            stop_server(procs[-1])
            if fallback_s is not None:
                os.environ[FALLBACK_ENV] = str(fallback_s)
            start()

        start()
        try:
            from core.room.service import rooms_on
            from core.room.sql import SQLiteStore

            store = rooms_on(SQLiteStore(os.environ["ATTENTION_LAB_ROOMS"]))
            yield f"http://127.0.0.1:{port}", store, restart
            store.close()
        finally:
            stop_server(procs[-1])
            for k, v in before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            folder.cleanup()


def shot(page, name: str) -> None:
    for folder in SHOTS:
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"room-{name}.png"), full_page=False)


def open_room(page, base: str) -> tuple[str, str]:
    """Open a room as a facilitator does: (code, control token). The token never reaches the address bar; the
    page's script keeps it in the browser's cookie, after the control this browser acts with ('CONTROL.TOKEN')."""
    page.goto(f"{base}/room")
    wait_for_run(page)
    page.get_by_label("Passcode for opening rooms", exact=True).fill(PASSCODE)  # typed, never in the link
    page.get_by_role("button", name="Open a room").click()
    page.wait_for_url("**/room?*mode=control*", timeout=FOLLOW_MS)
    wait_for_run(page)
    query = parse_qs(urlsplit(page.url).query)
    assert "key" not in query
    code = query["room"][0]
    page.wait_for_function(f"document.cookie.includes('lab_control_{code}=')", timeout=FOLLOW_MS)
    cookie = next(c["value"] for c in page.context.cookies() if c["name"] == f"lab_control_{code}")
    return code, cookie.rpartition(".")[2]


def test_facilitator_and_two_learners(room_server):
    base, store, _ = room_server
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            fac = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            code, control = open_room(fac, base)
            assert store.is_control(code, control) and control not in fac.url
            browsers = next(c["value"] for c in fac.context.cookies() if c["name"] == f"lab_control_{code}")
            browsers = browsers.rpartition(".")[0]
            assert store.is_control(code, browsers) and browsers != control
            fac.reload()  # a new session: the browser's cookie keeps the control
            wait_for_run(fac)
            fac.get_by_role("button", name="Next step").wait_for(timeout=FOLLOW_MS)
            shot(fac, "facilitator")

            learners = {}
            for lang, (name, name_label, join, _, _) in LEARNERS.items():
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                if lang == "en":  # the keyboard only, from a bare /room: the code typed, not in the link
                    page.goto(f"{base}/room")
                    wait_for_run(page)
                    for label, typed in (("Room code", code), (name_label, name)):
                        tab_to(page, label)
                        page.keyboard.type(typed)
                    tab_to(page, join, limit=5)
                    page.keyboard.press("Enter")
                else:
                    page.goto(f"{base}/room?room={code}&lang={lang}")
                    wait_for_run(page)
                    page.get_by_label(name_label).fill(name)
                    page.get_by_role("button", name=join).click()
                page.wait_for_url("**/sdpa-steps?*", timeout=FOLLOW_MS)  # following: the room's first step
                wait_for_run(page)
                learners[lang] = page
            assert sorted(n for n, _, _ in store.learners(code, control)) == ["Ana", "ハナ"]

            fac.get_by_role("button", name="Next step").click()
            wait_for_run(fac)
            for lang, page in learners.items():  # the server reruns their panels (their timer: once a minute)
                marker = "step 2 of 5" if lang == "en" else "ステップ 2／5"
                page.get_by_text(marker).wait_for(timeout=FOLLOW_MS)
                wait_for_run(page)  # the step's page drawn at the step's link, not emptied by the switch
                assert "dk=2" in page.url and page.locator("[data-testid='stMainBlockContainer'] h1").count() >= 1
            fac.get_by_role("button", name="Open the question").click()
            wait_for_run(fac)
            for lang, page in learners.items():
                _, _, _, number, answer = LEARNERS[lang]
                box = page.get_by_label(number)
                box.wait_for(timeout=FOLLOW_MS)
                if lang == "en":  # Tab from the top of the page to the question's field, type, Tab to Answer, Enter
                    start_at_top(page)
                    tab_to(page, number)
                    page.keyboard.type("0.5")
                    tab_to(page, answer, limit=5)
                    page.keyboard.press("Enter")
                else:
                    box.fill("0.5")
                    page.get_by_role("button", name=answer, exact=True).click()
                page.get_by_text(KEPT[lang]).wait_for(timeout=FOLLOW_MS)
                wait_for_run(page)
            question = store.room(code).question
            assert len(store.responses(code, question)) == 2
            fac.get_by_text("2 answers").first.wait_for(timeout=FOLLOW_MS)  # the histogram's title
            shot(fac, "histogram")
            en = learners["en"]  # a reload: a new session on the step page's link, which carries the seat
            assert "me=" in en.url and f"room={code}" in en.url
            en.reload()
            wait_for_run(en)
            en.get_by_text(KEPT["en"]).wait_for(timeout=FOLLOW_MS)  # her answer, not a new form
            assert en.get_by_label(LEARNERS["en"][3]).count() == 0
            assert len(store.learners(code, control)) == 2 and len(store.responses(code, question)) == 2

            projector = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            projector.goto(f"{base}/room?room={code}&mode=projector")
            wait_for_run(projector)
            projector.get_by_text("Step 2 of 5").wait_for(timeout=FOLLOW_MS)
            assert projector.get_by_role("button", name="Next step").count() == 0
            assert control not in projector.content() and "Ana" not in projector.content()
            fac.get_by_role("button", name="Reveal the answer").click()
            wait_for_run(fac)
            learners["ja"].get_by_text("正解：").first.wait_for(timeout=FOLLOW_MS)
            en.get_by_text("Right answer:").first.wait_for(timeout=FOLLOW_MS)
            projector.get_by_text("Right answer:").first.wait_for(timeout=FOLLOW_MS)
            shot(learners["ja"], "learner-ja")
            shot(en, "learner-en")
            shot(projector, "projector")
            for page in (fac, projector, *learners.values()):
                assert not exception_texts(page)

            # the facilitator leaves a shared computer: the control leaves the tab and the browser's cookie, not the room
            fac.get_by_role("button", name="Give up control on this computer").first.click()
            fac.get_by_role("button", name="Give up control on this computer").last.click()
            fac.wait_for_function(f"!document.cookie.includes('lab_control_{code}=')", timeout=FOLLOW_MS)
            fac.get_by_text("This computer no longer controls the room").wait_for(timeout=FOLLOW_MS)
            fac.reload()
            wait_for_run(fac)
            fac.get_by_text("This browser does not hold the control of this room").wait_for(timeout=FOLLOW_MS)
            assert fac.get_by_role("button", name="Next step").count() == 0 and store.is_control(code, control)
            assert not store.is_control(code, browsers)  # given up in the store: no other tab acts with it
        finally:
            browser.close()


def counting(browser):
    """A page in its own browser context that counts its finished script runs (window.__runsFinished)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(COUNT_RUNS)
    return context.new_page()


def test_a_server_restart_mid_question_keeps_the_facilitator_and_the_learner(room_server):
    """The server stops and starts again while a question is open (a restart, a failover, a phone whose session
    expired: each a new session on the page's link). The learner's page comes back as the same learner with her
    answer, the facilitator's page with its control (the cookie), and the reveal reaches her.
    A reconnected page is drawn again when its room panel's fallback timer fires (app/views/room/follow.py: 15 s
    on a real server); this test's server runs it at RESTART_FALLBACK_S, so the wait takes seconds. Whether a
    change reaches a page by the server's push, timer or not, is the test above's question (its server's timer
    is PUSH_ONLY_FALLBACK_S)."""
    base, store, restart = room_server
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            fac, ana = (counting(browser) for _ in range(2))
            code, _ = open_room(fac, base)
            name, name_label, join, number, answer = LEARNERS["en"]
            ana.goto(f"{base}/room?room={code}")
            wait_for_run(ana)
            ana.get_by_label(name_label).fill(name)
            ana.get_by_role("button", name=join).click()
            ana.wait_for_url("**/sdpa-steps?*", timeout=FOLLOW_MS)
            fac.get_by_role("button", name="Next step").click()
            wait_for_run(fac)
            fac.get_by_role("button", name="Open the question").click()
            wait_for_run(fac)
            box = ana.get_by_label(number)
            box.wait_for(timeout=FOLLOW_MS)
            box.fill("0.5")
            ana.get_by_role("button", name=answer, exact=True).click()
            ana.get_by_text(KEPT["en"]).wait_for(timeout=FOLLOW_MS)

            restart(fallback_s=RESTART_FALLBACK_S)  # both pages lose their connection and their session
            for page in (ana, fac):  # a run on the new server: the page reconnected and drew itself again
                runs = page.evaluate("window.__runsFinished")
                page.wait_for_function(f"window.__runsFinished > {runs}", timeout=4 * FOLLOW_MS, polling=200)
                wait_for_run(page)
            ana.get_by_text(KEPT["en"]).wait_for(timeout=FOLLOW_MS)
            fac.get_by_role("button", name="Reveal the answer").wait_for(timeout=FOLLOW_MS)
            assert store.steps_of_learners(code) == [1]  # one learner on the board, on the room's step
            assert ana.get_by_label(number).count() == 0  # no second answer form
            fac.get_by_role("button", name="Reveal the answer").click()
            ana.get_by_text("Right answer:").first.wait_for(timeout=FOLLOW_MS)
            question = store.room(code).question
            assert len(store.responses(code, question)) == 1
            for page in (fac, ana):
                assert not exception_texts(page)
        finally:
            browser.close()
