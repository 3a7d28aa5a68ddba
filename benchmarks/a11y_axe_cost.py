"""What axe-core adds to the real-browser test: every page opened as tests/test_browser.py opens it (its own URL, in
the language and at the state that test gives it: en/ja/ko in turn, a state with a figure), on one server and one chromium, and axe run there as that test
runs it (tests/axe_helpers.py). The page loads are the browser test's anyway; the axe seconds are what it adds.
Also reported: the violations axe found (the test expects none).

    python benchmarks/a11y_axe_cost.py            # -> results/a11y_axe_cost.json
"""

from __future__ import annotations

import argparse
import tempfile
import time

from core.results import save_result
from core.timing import machine_info
from scripts.app_server import COUNT_RUNS, free_port, start_server, stop_server
from scripts.load_test import loadavg
from tests import axe_helpers
from tests.test_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LANG_OF,
    PAGE_RUN_MS,
    PAGES_IN_TEST_ORDER,
    VIEWPORT,
    link_query,
    page_path,
    sync_api,
    wait_for_run,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="a11y_axe_cost")
    args = parser.parse_args()
    load_before = loadavg()
    rows = []
    with tempfile.NamedTemporaryFile("w+", suffix=".log") as log, sync_api.sync_playwright() as p:
        port = free_port()
        proc = start_server(port, log, 120)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            for entry in PAGES_IN_TEST_ORDER:
                lang = LANG_OF[entry.url]
                context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="en-US")
                context.add_init_script(COUNT_RUNS)
                page = context.new_page()
                t0 = time.perf_counter()
                url = f"http://127.0.0.1:{port}{page_path(entry)}?{link_query(entry)}"
                page.goto(url, wait_until="domcontentloaded")
                page.wait_for_selector("h1", timeout=PAGE_RUN_MS)
                wait_for_run(page)
                axe_helpers.wait_for_page_script(page, lang, PAGE_RUN_MS)
                t1 = time.perf_counter()
                found = axe_helpers.violations(page)
                t2 = time.perf_counter()
                rows.append({"page": entry.url, "lang": lang, "load_s": round(t1 - t0, 2), "axe_s": round(t2 - t1, 2),
                             "violations": [(v["id"], v["impact"], len(v["nodes"])) for v in found]})  # fmt: skip
                print(rows[-1], flush=True)
                context.close()
        finally:
            browser.close()
            stop_server(proc)
    axe_total = sum(r["axe_s"] for r in rows)
    result = {
        "command": "python benchmarks/a11y_axe_cost.py",
        "machine": machine_info() | {"loadavg_before": load_before, "loadavg_after": loadavg()},
        "pages": len(rows),
        "axe_s_total": round(axe_total, 1),
        "axe_s_max": max(r["axe_s"] for r in rows),
        "load_s_total": round(sum(r["load_s"] for r in rows), 1),
        "pages_with_violations": [r for r in rows if r["violations"]],
        "per_page": rows,
    }
    print(f"axe on {len(rows)} pages: {axe_total:.1f} s in all", flush=True)
    save_result(args.out, result)


if __name__ == "__main__":
    main()
