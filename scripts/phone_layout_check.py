"""Every page on a 390 x 844 phone in chromium, in English, Japanese and Korean: a full-page screenshot and, for each
figure drawn, what in it overlaps or is cut off, read from the browser's own boxes of its text (title, axis titles,
tick labels, legend, colour bar, panel titles and other annotations). Each page opens by its link in its default
state; a page with a text box is also run once with a long text typed into its first box.

    python scripts/phone_layout_check.py                           # -> artifacts/phone/ and results/phone_layout.json
    python scripts/phone_layout_check.py --langs ja --pages multi-head,moe --width 1366   # a laptop's browser

Overlaps found: two boxes of different parts (an axis title and a tick label, a legend and an axis title, two panel
titles) that share more than 2 px each way; two tick labels of one axis; any of them past the figure's edge. The
screenshots are for looking at: a box test misses what a reader sees (text too small, a legend over the data).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

from core.results import save_result
from scripts.a11y_axe_all import served_chromium
from scripts.app_server import COUNT_RUNS
from scripts.load_test import loadavg
from tests import axe_helpers
from tests.test_browser import (
    PAGE_RUN_MS,
    PAGES_IN_TEST_ORDER,
    page_path,
    submit_text,
    wait_for_run,
)

ROOT = Path(__file__).resolve().parents[1]
LONG_TEXT = {
    "en": "The old lighthouse keeper, who had watched the northern coast for forty years, finally told the young "
    "engineers that the storms they feared were never as dangerous as the quiet fog that followed them.",
    "ja": "北の海岸を四十年見守ってきた灯台守は、若い技術者たちに、彼らが恐れる嵐よりもその後に来る静かな霧の方がずっと"
    "危ないのだと、ようやく話した。",
    "ko": "북쪽 해안을 사십 년 동안 지켜 온 등대지기는 젊은 기술자들에게 그들이 두려워하는 폭풍보다 그 뒤에 오는 조용한 "
    "안개가 훨씬 더 위험하다고 마침내 말했다.",
}
# A phone's browser says so (the page fits a figure's axis and panel titles to a phone's width or a laptop's:
# app/ui.figure_px); headless Chromium's own agent says it is a desktop's
PHONE_AGENT = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile "
    "Safari/537.36"
)
# Boxes of each part of every plotly figure on the page, relative to the figure, then the pairs that overlap
OVERLAPS = r"""() => {
  const out = [];
  const charts = Array.from(document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot'));
  charts.forEach((root, index) => {
    const box = root.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) return;  // in a closed tab or expander
    const items = [];
    const add = (kind, group, el) => {
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) return;
      const turned = /rotate\((?!0[ ,)])/.test(el.getAttribute('transform') || '');
      items.push({kind, group, turned, text: (el.textContent || '').slice(0, 50),
                  x0: r.left - box.left, y0: r.top - box.top, x1: r.right - box.left, y1: r.bottom - box.top});
    };
    root.querySelectorAll('.infolayer g[class^="g-"][class$="title"] > text').forEach(e => {
      const c = e.parentNode.getAttribute('class');
      add(c === 'g-gtitle' ? 'title' : 'axis title', c, e);
    });
    root.querySelectorAll('.subplot').forEach(sp => {
      const id = sp.getAttribute('class').replace('subplot', '').trim();
      sp.querySelectorAll('.xaxislayer-above text').forEach(e => add('tick', id + ' x', e));
      sp.querySelectorAll('.yaxislayer-above text').forEach(e => add('tick', id + ' y', e));
    });
    root.querySelectorAll('.infolayer .legend').forEach(e => add('legend', 'legend', e));
    root.querySelectorAll('.infolayer g.colorbar').forEach((e, i) => add('colour bar', 'colorbar' + i, e));
    root.querySelectorAll('.infolayer .annotation').forEach((e, i) => {
      const t = e.querySelector('text') || e;
      add('annotation', 'annotation' + i, t);
    });
    const found = [];
    const w = box.width, h = box.height;
    for (const it of items) {
      if (it.x0 < -2 || it.y0 < -2 || it.x1 > w + 2 || it.y1 > h + 2)
        found.push({what: 'past the edge', a: it});
    }
    for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
      const a = items[i], b = items[j];
      // a turned label's box is far wider than its letters: two turned neighbours' boxes always meet
      if (a.kind === 'tick' && b.kind === 'tick' && (a.group !== b.group || a.turned || b.turned)) continue;
      if (a.kind === 'colour bar' && b.kind === 'colour bar') continue;
      const dx = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0), dy = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
      if (dx > 2 && dy > 2) found.push({what: 'overlap', a, b});
    }
    const round = it => ({...it, x0: Math.round(it.x0), y0: Math.round(it.y0), x1: Math.round(it.x1),
                          y1: Math.round(it.y1)});
    // px from the page's title above the figure (app/ui._title) and from the tool bar's foot to the plot's top
    const plots = Array.from(root.querySelectorAll('.nsewdrag')).map(e => e.getBoundingClientRect().top);
    const holder = root.closest('[data-testid="stElementContainer"]');
    const title = holder && holder.previousElementSibling
      && holder.previousElementSibling.querySelector('.lab-figure-title');
    const bar = root.querySelector('.modebar');
    const top = plots.length ? Math.min(...plots) : null;
    const gap = el => (el && top !== null) ? Math.round(top - el.getBoundingClientRect().bottom) : null;
    out.push({figure: index, width: Math.round(w), height: Math.round(h), title_to_plot: gap(title),
              toolbar_to_plot: gap(bar),
              found: found.map(f => ({what: f.what, a: round(f.a), b: f.b && round(f.b)}))});
  });
  return out;
}"""
WIDE = """() => { const m = document.querySelector('[data-testid="stMain"]');
  return Array.from(m.querySelectorAll('*')).filter(e => e.getBoundingClientRect().right > innerWidth + 1
    && getComputedStyle(e).overflowX === 'visible' && !e.closest('[data-testid="stDataFrame"], pre, table, .js-plotly-plot')
    && e.children.length === 0).slice(0, 5).map(e => e.tagName + ': ' + (e.textContent || '').slice(0, 60)); }"""


def settle(page, lang: str) -> None:
    wait_for_run(page)
    axe_helpers.wait_for_page_script(page, lang, PAGE_RUN_MS)
    page.wait_for_timeout(800)  # plotly draws after its element appears


def shoot(page, path: Path, width: int) -> None:
    """The whole page: Streamlit scrolls its main block, not the document, so the window is made as tall as it."""
    tall = page.evaluate(
        '() => Math.max(...Array.from(document.querySelectorAll(\'[data-testid="stMain"], '
        '[data-testid="stMainBlockContainer"]\')).map(e => e.scrollHeight), innerHeight)'
    )
    page.set_viewport_size({"width": width, "height": min(int(tall) + 40, 16000)})
    page.wait_for_timeout(600)
    page.screenshot(path=str(path), full_page=True)


def examine(page, row: dict, out: Path, width: int, height: int) -> dict:
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(400)
    figures = page.evaluate(OVERLAPS)
    shot = out / f"{row['page']}-{row['lang']}-{row['state']}-{width}.png"
    shoot(page, shot, width)
    page.set_viewport_size({"width": width, "height": height})
    row |= {"figures": len(figures), "screenshot": str(shot.relative_to(ROOT)),
            "found": [dict(figure=f["figure"], **x) for f in figures for x in f["found"]],
            "widths": sorted({f["width"] for f in figures}),
            "title_to_plot": [f["title_to_plot"] for f in figures if f["title_to_plot"] is not None],
            "toolbar_to_plot": [f["toolbar_to_plot"] for f in figures if f["toolbar_to_plot"] is not None],
            "wide_text": page.evaluate(WIDE)}  # fmt: skip
    print(row["page"], row["lang"], row["state"], row["figures"], "figures,", len(row["found"]), "found",
          row["wide_text"] or "", flush=True)  # fmt: skip
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", default="en,ja,ko")
    parser.add_argument("--pages", default="", help="comma-separated catalog urls (default: every page)")
    parser.add_argument("--width", type=int, default=390)
    parser.add_argument("--height", type=int, default=844)
    parser.add_argument("--no-long", action="store_true", help="skip the long-text state")
    parser.add_argument("--out", default="phone_layout")
    args = parser.parse_args()
    wanted = set(args.pages.split(",")) if args.pages else None
    entries = [e for e in PAGES_IN_TEST_ORDER if wanted is None or e.url in wanted]
    shots = ROOT / "artifacts" / "phone"
    shots.mkdir(parents=True, exist_ok=True)
    started, load_before = datetime.now(UTC).isoformat(timespec="seconds"), loadavg()
    rows: list[dict] = []
    with served_chromium() as (base, browser):
        for lang in args.langs.split(","):
            context = browser.new_context(
                viewport={"width": args.width, "height": args.height}, device_scale_factor=1, locale="en-US",
                **({"user_agent": PHONE_AGENT} if args.width < 768 else {}),
            )  # fmt: skip
            context.add_init_script(COUNT_RUNS)
            page = context.new_page()
            for entry in entries:
                page.goto(f"{base}{page_path(entry)}?{urlencode({'lang': lang})}", wait_until="domcontentloaded")
                page.wait_for_selector("h1", timeout=PAGE_RUN_MS)
                settle(page, lang)
                rows.append(examine(page, {"page": entry.url, "lang": lang, "state": "default"}, shots,
                                    args.width, args.height))  # fmt: skip
                area = page.locator('[data-testid="stMain"] textarea').first
                if not args.no_long and area.count() and area.is_visible():
                    submit_text(page, area, LONG_TEXT[lang])
                    settle(page, lang)
                    rows.append(examine(page, {"page": entry.url, "lang": lang, "state": "long"}, shots,
                                        args.width, args.height))  # fmt: skip
            context.close()
    result = {
        "command": "python " + " ".join(["scripts/phone_layout_check.py", *sys.argv[1:]]),
        "date": started,
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "visits": len(rows),
        "visits_with_findings": sum(bool(r["found"]) for r in rows),
        "per_visit": rows,
    }
    save_result(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "per_visit"}), flush=True)


if __name__ == "__main__":
    main()
