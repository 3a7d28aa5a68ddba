"""axe-core on every page in English, Japanese and Korean, each in its default state and in a state reached after
input with a figure (tests/axe_helpers.figure_states: the first lesson step that opens the page at a state; /lessons
at an answered step), plus a facilitator's open room: what the real-browser test checks in one language and one
state per page (tests/test_browser.py), for the whole matrix. One server, one chromium, one browser context per
language (its pages opened one after another in one tab, each by its own link, as a shared link opens it), axe on
the whole document each time.

    python scripts/a11y_axe_all.py                      # -> results/a11y_axe_all.json
    python scripts/a11y_axe_all.py --langs ko --pages masks,room

Exits 1 when any serious or critical violation (or heading-order, empty-table-header) is found; the file lists them
with the elements they name. The seconds per visit (load and axe apart) and the machine's load go in the file: the
load average before and after, since other work may share the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import urlencode

from app import i18n
from core.results import save_result
from core.room import PASSCODE_ENV, new_passcode
from core.timing import machine_info
from scripts.app_server import COUNT_RUNS, free_port, start_server, stop_server
from scripts.load_test import loadavg
from tests import axe_helpers
from tests.test_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PAGE_RUN_MS,
    PAGES_IN_TEST_ORDER,
    VIEWPORT,
    page_path,
    sync_api,
    wait_for_run,
)

LANGS = ("en", "ja", "ko")
# What the server served_chromium starts asks for to open a room, as a class's server does (so the open-a-room form
# is checked with its password box); made here, whatever the caller's own environment holds.
ROOM_PASSCODE = new_passcode()


def visit(page, url: str, lang: str) -> float:
    t0 = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_selector("h1", timeout=PAGE_RUN_MS)
    wait_for_run(page)
    axe_helpers.wait_for_page_script(page, lang, PAGE_RUN_MS)
    return time.perf_counter() - t0


def checked(page, row: dict, load_s: float) -> dict:
    t0 = time.perf_counter()
    found = axe_helpers.violations(page)
    row |= {"load_s": round(load_s, 2), "axe_s": round(time.perf_counter() - t0, 2),
            "violations": [{"id": v["id"], "impact": v["impact"], "nodes": v["nodes"][:3], "count": len(v["nodes"])}
                           for v in found]}  # fmt: skip
    print({k: v if k != "violations" else [(x["id"], x["count"]) for x in v] for k, v in row.items()}, flush=True)
    return row


def open_a_room(page, lang: str) -> None:
    """Open a room on /room as a facilitator does on a class's server: the passcode typed, then *Open a room*."""
    page.get_by_label(i18n.text(lang, "room", "passcode"), exact=True).fill(ROOM_PASSCODE)
    page.get_by_role("button", name=i18n.text(lang, "room", "open"), exact=True).click()


@contextlib.contextmanager
def served_chromium() -> Iterator[tuple[str, object]]:
    """One `streamlit run` of the app and one headless chromium for a script's visits: (base URL, browser). The
    server asks for ROOM_PASSCODE to open a room (open_a_room types it)."""
    with tempfile.NamedTemporaryFile("w+", suffix=".log") as log, sync_api.sync_playwright() as p:
        port = free_port()
        before = os.environ.get(PASSCODE_ENV)
        os.environ[PASSCODE_ENV] = ROOM_PASSCODE  # the server's environment, never its command line
        try:
            proc = start_server(port, log, 120)
        finally:
            os.environ.pop(PASSCODE_ENV) if before is None else os.environ.__setitem__(PASSCODE_ENV, before)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield f"http://127.0.0.1:{port}", browser
        finally:
            browser.close()
            stop_server(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", default=",".join(LANGS))
    parser.add_argument("--pages", default="", help="comma-separated catalog urls (default: every page)")
    parser.add_argument("--out", default="a11y_axe_all")
    args = parser.parse_args()
    langs = args.langs.split(",")
    wanted = set(args.pages.split(",")) if args.pages else None
    entries = [e for e in PAGES_IN_TEST_ORDER if wanted is None or e.url in wanted]
    states = axe_helpers.figure_states()
    started, load_before = datetime.now(UTC).isoformat(timespec="seconds"), loadavg()
    rows: list[dict] = []
    with served_chromium() as (base, browser):
        for lang in langs:
            context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="en-US")
            context.add_init_script(COUNT_RUNS)
            page = context.new_page()
            for entry in entries:
                default = f"{base}{page_path(entry)}?{urlencode({'lang': lang})}"
                row = {"page": entry.url, "lang": lang, "state": "default"}
                rows.append(checked(page, row, visit(page, default, lang)))
                if entry.url in states:
                    url = f"{base}{page_path(entry)}?{urlencode({'lang': lang, **states[entry.url]})}"
                    row = {"page": entry.url, "lang": lang, "state": "figure", "params": states[entry.url]}
                    rows.append(checked(page, row, visit(page, url, lang)))
                elif entry.url == "room":  # a room opened: the facilitator's controls, code and board
                    t0 = time.perf_counter()
                    open_a_room(page, lang)
                    page.wait_for_function("location.search.includes('mode=control')", timeout=PAGE_RUN_MS)
                    wait_for_run(page)
                    axe_helpers.wait_for_page_script(page, lang, PAGE_RUN_MS)
                    row = {"page": entry.url, "lang": lang, "state": "room opened"}
                    rows.append(checked(page, row, time.perf_counter() - t0))
            context.close()
    failing = [r for r in rows if r["violations"]]
    result = {
        "command": "python " + " ".join(["scripts/a11y_axe_all.py", *sys.argv[1:]]),
        "date": started,
        "machine": machine_info() | {"loadavg_before": load_before, "loadavg_after": loadavg()},
        "axe": "4.14.1, tests/axe_helpers.py's rules (WCAG 2.1 A/AA serious and critical; heading-order, "
        "empty-table-header)",
        "visits": len(rows),
        "pages": len(entries),
        "languages": langs,
        "visits_with_violations": len(failing),
        "load_s_total": round(sum(r["load_s"] for r in rows), 1),
        "axe_s_total": round(sum(r["axe_s"] for r in rows), 1),
        "failing": failing,
        "per_visit": rows,
    }
    print(f"{len(rows)} visits, {len(failing)} with violations; axe {result['axe_s_total']} s", flush=True)
    save_result(args.out, result)
    sys.exit(1 if failing else 0)


if __name__ == "__main__":
    main()
