"""The app in a real browser (Debian's chromium) behind the class's nginx (`dev.sh serve`: scripts/serve_class.py,
deploy/nginx.conf): its security headers and limits break nothing a visitor does. A model page draws with no
exception box; a facilitator opens a room with the class's passcode (the control cookie is written by a script of the page) and the projector
view draws the join link's QR code (an image: the CSP's img-src); the browser reports no Content-Security-Policy
violation and no answer refused by a limit (429) or failed (5xx) on the way."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from scripts import serve_class as sc
from scripts.app_server import free_port
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, exception_texts, sync_api, wait_for_run

pytestmark = [pytest.mark.browser, pytest.mark.slow]
FOLLOW_MS = 60_000


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    if not Path(CHROMIUM).exists() or sync_api is None:
        pytest.skip(f"needs {CHROMIUM} and playwright")
    if not Path(sc.shutil.which("nginx") or "/usr/sbin/nginx").exists():
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    run = tmp_path_factory.mktemp("proxied")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ATTENTION_LAB_ROOMS", str(run / "rooms.sqlite3"))  # both servers share it
        env.delenv("DATABASE_URL", raising=False)
        lab = sc.Class([free_port(), free_port()], free_port(), run / "run", run / "logs")
        lab.start()
        try:
            yield f"http://127.0.0.1:{lab.listen}", lab.passcode  # the class's, made at its start
        finally:
            lab.stop()


class Watch:
    """What the browser said about a page: CSP violations in its console, answers refused by a limit (429) or
    failed (5xx). (Streamlit's page asks for its health and host-config under the page's path first; those 404s
    are its own, with or without the proxy.)"""

    def __init__(self, page):
        self.csp: list[str] = []
        self.refused: list[str] = []
        page.on("console", lambda m: "Content Security Policy" in m.text and self.csp.append(m.text[:300]))
        page.on(
            "response", lambda r: (r.status == 429 or r.status >= 500) and self.refused.append(f"{r.status} {r.url}")
        )


def test_a_page_and_a_room_work_behind_the_class_proxy(proxied):
    proxied, passcode = proxied
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            watch = Watch(page)
            response = page.goto(f"{proxied}/attention")
            assert response.headers["content-security-policy"].startswith("img-src 'self'")
            wait_for_run(page)
            assert not exception_texts(page)
            page.goto(f"{proxied}/room")
            wait_for_run(page)
            page.get_by_label("Passcode for opening rooms", exact=True).fill(passcode)  # a class's server asks for it
            page.get_by_role("button", name="Open a room").click()
            page.wait_for_url("**/room?*mode=control*", timeout=FOLLOW_MS)
            wait_for_run(page)
            code = parse_qs(urlsplit(page.url).query)["room"][0]
            page.wait_for_function(f"document.cookie.includes('lab_control_{code}=')", timeout=FOLLOW_MS)

            projector = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            watch_projector = Watch(projector)
            projector.goto(f"{proxied}/room?room={code}&mode=projector")
            wait_for_run(projector)
            qr = projector.locator("img").first
            qr.wait_for(timeout=FOLLOW_MS)
            projector.wait_for_function("() => [...document.images].some(i => i.complete && i.naturalWidth > 0)",
                                        timeout=FOLLOW_MS)  # fmt: skip
            for seen in (watch, watch_projector):
                assert seen.csp == [], seen.csp
                assert seen.refused == [], seen.refused
            assert not exception_texts(page) and not exception_texts(projector)
        finally:
            browser.close()
