"""Figures beside one another (app/ui.beside) in chromium at a laptop's windows (1,100, 1,280 and 1,366 px, the
sidebar open as Streamlit opens it over 768 px): the page's main column, the scroll bar the main block takes from it
where the browser draws one (a desktop Chrome on Windows or Linux does, 10 px as Streamlit styles it; a Mac's and
playwright's default headless one do not: --hide-scrollbars), and each row of blocks holding a figure: its width,
its blocks' widths, and on how many lines the browser set them. viz.labels.BESIDE_ROW_PX is chosen from these.
(sidebar_open reads the sidebar's aria-expanded, which Streamlit 1.67 does not set: sidebar_px and column_px say it
is open.)

    python scripts/beside_row_check.py                                       # -> results/beside_rows.json
    python scripts/beside_row_check.py --pages masks --widths 1280 --out beside_rows_masks
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime
from urllib.parse import urlencode

from playwright import sync_api

from core.results import save_result
from scripts.app_server import CHROMIUM, COUNT_RUNS, free_port, start_server, stop_server
from scripts.load_test import loadavg
from scripts.phone_layout_check import DESKTOP_AGENT, settle
from tests.test_browser import CHROMIUM_ARGS, PAGE_RUN_MS, PAGES_IN_TEST_ORDER, page_path

PAGES = "sdpa-steps,masks,moe,sdpa-gqa,flash-attention,encoder-decoder,linear-attention,transformer-xl"
# The column, the scroll bar and every row of blocks in the main block that holds a figure
ROWS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const block = document.querySelector('[data-testid="stMainBlockContainer"]'), s = getComputedStyle(block);
  const side = document.querySelector('[data-testid="stSidebar"]');
  const box = e => e.getBoundingClientRect();
  const rows = Array.from(main.querySelectorAll('[data-testid="stHorizontalBlock"]'))
    .filter(r => r.querySelector('.js-plotly-plot') && box(r).width > 0)
    .map(r => {
      const kids = Array.from(r.children).filter(k => box(k).width > 0);
      return {row_px: Math.round(box(r).width), block_px: kids.map(k => Math.round(box(k).width)),
              gap_px: parseFloat(getComputedStyle(r).columnGap) || 0,
              lines: new Set(kids.map(k => Math.round(box(k).top))).size,
              blank_right_px: Math.round(box(r).right - Math.max(...kids.map(k => box(k).right)))};
    });
  return {window_px: innerWidth, sidebar_px: side ? Math.round(box(side).width) : 0,
          sidebar_open: side ? side.getAttribute('aria-expanded') : null,
          scroll_bar_px: main.offsetWidth - main.clientWidth,
          column_px: Math.round(block.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)), rows};
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=PAGES, help="comma-separated catalog urls")
    parser.add_argument("--widths", default="1100,1280,1366")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--out", default="beside_rows")
    args = parser.parse_args()
    wanted = args.pages.split(",")
    entries = [e for e in PAGES_IN_TEST_ORDER if e.url in wanted]
    started, load_before = datetime.now(UTC).isoformat(timespec="seconds"), loadavg()
    rows = []
    with tempfile.NamedTemporaryFile("w+", suffix=".log") as log, sync_api.sync_playwright() as p:
        proc = start_server(free_port_ := free_port(), log, 120)
        base = f"http://127.0.0.1:{free_port_}"
        try:
            for scroll_bar in (False, True):
                # playwright hides scroll bars unless told not to; a desktop browser draws them
                browser = p.chromium.launch(
                    executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                    ignore_default_args=["--hide-scrollbars"] if scroll_bar else None,
                )  # fmt: skip
                try:
                    for width in map(int, args.widths.split(",")):
                        context = browser.new_context(
                            viewport={"width": width, "height": 800}, device_scale_factor=1, locale="en-US",
                            user_agent=DESKTOP_AGENT,
                        )  # fmt: skip
                        context.add_init_script(COUNT_RUNS)
                        page = context.new_page()
                        for entry in entries:
                            page.goto(f"{base}{page_path(entry)}?{urlencode({'lang': args.lang})}")
                            page.wait_for_selector("h1", timeout=PAGE_RUN_MS)
                            settle(page, args.lang)
                            seen = page.evaluate(ROWS)
                            row = {"page": entry.url, "scroll_bar_drawn": scroll_bar, **seen}
                            print(json.dumps({k: v for k, v in row.items() if k != "rows"}),
                                  [(r["row_px"], r["block_px"], r["lines"]) for r in seen["rows"]], flush=True)  # fmt: skip
                            rows.append(row)
                        context.close()
                finally:
                    browser.close()
        finally:
            stop_server(proc)
    result = {
        "command": "python " + " ".join(["scripts/beside_row_check.py", *sys.argv[1:]]),
        "date": started,
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "per_visit": rows,
    }
    save_result(args.out, result)


if __name__ == "__main__":
    main()
