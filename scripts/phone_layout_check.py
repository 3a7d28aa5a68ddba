"""Every page on a 390 x 844 phone in chromium (or as another device: --devices), in English, Japanese and Korean: a
full-page screenshot and, for each figure drawn, what in it overlaps or is cut off, read from the browser's own boxes
of its text (title, axis titles, tick labels, legend, colour bar, panel titles and other annotations). Each page opens
by its link in its default state; a page with a text box is also run once with a long text typed into its first box.
With --states figure (or default,figure) each page is also opened at a state with a figure, by its link (the first
lesson step that opens the page at a state: tests/axe_helpers.figure_states, the state a learner's link carries,
declared per topic in core): /ablation's default card and /long-maps before its Compute button draw no figure, so the
default state alone never examines theirs. Where that state waits for the page's one primary button (/long-maps
computes only when asked), the check presses it. /room is visited once more as a room just opened: its facilitator's
page, then its projector view.

    python scripts/phone_layout_check.py                           # -> artifacts/phone/ and results/phone_layout.json
    python scripts/phone_layout_check.py --langs ja --pages multi-head,moe --width 1366   # a laptop's browser
    python scripts/phone_layout_check.py --devices ipad-portrait,android-tablet,phone-landscape,desktop-1100 \
        --no-long --out tablet_layout                               # each of DEVICES: its window and User-Agent
    python scripts/phone_layout_check.py --pages ablation,long-maps --states figure --no-long   # their figures
    python scripts/phone_layout_check.py --pages moe,encoder-decoder --link encoder-decoder?part=alignment \
        --no-long --out phone_cell_text                             # and /encoder-decoder at its alignment map
    python scripts/phone_layout_check.py --devices phone,desktop-1100,laptop-1280,laptop --no-long --no-shots \
        --pages sdpa-steps,masks,moe,sdpa-gqa,encoder-decoder,linear-attention,transformer-xl --out beside_layout

A device visits with its window's size and the User-Agent its browser sends (the page fits a figure's titles to what
that says: app/ui.figure_px), each visit recording the width the page fitted its figures for (fitted_px). Found besides
overlaps: a figure wider than its column, and a map drawn to scale that leaves its figure blank beside or above it
(taking under SCALED_AT_LEAST of its room: the figure's height was fitted for a narrower or a wider screen), and a
heatmap's cell labels set in type under CELL_TEXT_AT_LEAST px or wider than their cell (each map's type, cells and
widest label: cell_text).

Overlaps found: two boxes of different parts (an axis title and a tick label, a legend and an axis title, two panel
titles) that share more than 2 px each way; two tick labels of one axis; any of them past the figure's edge. The
screenshots are for looking at: a box test misses what a reader sees (text too small, a legend over the data).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.ui import figure_px_for
from core.results import save_result
from scripts.a11y_axe_all import open_a_room, served_chromium
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
# What a device's browser sends and the window it has: an iPad's Safari says it is a Mac's (iPadOS asks for desktop
# sites), an Android tablet's browser says Android but not Mobile, a phone on its side keeps its phone's agent
MAC_SAFARI_AGENT = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 "
    "Safari/605.1.15"
)
ANDROID_TABLET_AGENT = (
    "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)
IPHONE_AGENT = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 "
    "Mobile/15E148 Safari/604.1"
)
DESKTOP_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)
DEVICES = {
    "phone": (390, 844, PHONE_AGENT),
    "laptop": (1366, 768, DESKTOP_AGENT),
    "laptop-1280": (1280, 800, DESKTOP_AGENT),  # the browser test's window: figures beside one another fit its column
    "ipad-portrait": (820, 1180, MAC_SAFARI_AGENT),
    "android-tablet": (800, 1280, ANDROID_TABLET_AGENT),
    "phone-landscape": (844, 390, IPHONE_AGENT),
    "desktop-1100": (1100, 800, DESKTOP_AGENT),
}
# of the width (height) its figure gives it: a map drawn to scale that takes less of it the other way is found (the
# rest of the figure stands blank beside or above it: its height was fitted for a narrower or a wider screen)
SCALED_AT_LEAST = 0.8
# px: a heatmap's cell labels set in smaller type are found. Plotly sets a map's labels in one type, the largest its
# longest line fits in its narrowest cell (0.65 em a character) up to the figure's font, so a label grown by a
# decimal or a line shrinks every label of its map; 9 px is about the smallest a phone held at arm's length reads
CELL_TEXT_AT_LEAST = 9
# Boxes of each part of every plotly figure on the page, relative to the figure, then the pairs that overlap
OVERLAPS = r"""({SCALED_AT_LEAST, CELL_TEXT_AT_LEAST}) => {
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
    // a figure wider than its column (the block Streamlit gives it) runs past it; a plot (every panel together) much
    // narrower than its figure leaves the rest blank
    const holder0 = root.closest('[data-testid="stElementContainer"]') || root.parentNode;
    const column = holder0.getBoundingClientRect();
    if (box.right > column.right + 2 || box.right > innerWidth + 2)
      found.push({what: 'wider than its column', a: {kind: 'figure', group: '', text: '', x0: 0, y0: 0,
                  x1: box.width, y1: box.height}});
    const panels = Array.from(root.querySelectorAll('.nsewdrag')).map(e => e.getBoundingClientRect());
    const plotWidth = panels.length
      ? Math.max(...panels.map(r => r.right)) - Math.min(...panels.map(r => r.left)) : null;
    // a map drawn to scale (an axis constrained to its domain) fills what its figure gives it one way only: the
    // share of the other way it takes (plotly's own lengths, from its full layout)
    const full = root._fullLayout || {}, size = full._size || {};
    let scaled = null;
    for (const [name, ax] of Object.entries(full)) {
      if (!/^[xy]axis\d*$/.test(name) || !ax || ax.constrain !== 'domain' || !ax._inputDomain) continue;
      const whole = (ax._inputDomain[1] - ax._inputDomain[0]) * (name[0] === 'x' ? size.w : size.h);
      if (whole > 0) scaled = Math.min(scaled === null ? 1 : scaled, ax._length / whole);
    }
    if (scaled !== null && scaled < SCALED_AT_LEAST)
      found.push({what: 'map drawn to scale leaves its figure blank', a: {kind: 'plot', group: '',
                  text: Math.round(scaled * 100) + '% of its room', x0: 0, y0: 0, x1: 0, y1: 0}});
    // a heatmap's cell labels (plotly's g.heatmap-label, one per labelled cell): the type they are set in as the
    // reader sees it (the font size times the figure's scale on the screen), the cells they stand in (the trace's
    // bricks through its axes, as plotly draws them) and the widest label's box; a mark wider than its cell runs
    // into the next one
    const cells = [];
    root.querySelectorAll('g.hm').forEach(trace => {
      const shown = Array.from(trace.querySelectorAll('g.heatmap-label > text'))
        .map(e => ({e, r: e.getBoundingClientRect()})).filter(({r}) => r.width >= 1 && r.height >= 1);
      const cd = trace.__data__ && trace.__data__[0];
      if (!shown.length || !cd || !cd.trace) return;
      const axis = (letter, ref) => full[letter + 'axis' + String(ref || letter).slice(1)];
      const xa = axis('x', cd.trace.xaxis), ya = axis('y', cd.trace.yaxis);
      const step = (edges, ax) => {
        const at = Array.from(edges || [], v => ax.c2p(v)).filter(Number.isFinite), gaps = [];
        for (let i = 1; i < at.length; i++) gaps.push(Math.abs(at[i] - at[i - 1]));
        return {count: gaps.length, px: gaps.length ? Math.min(...gaps) : 0};
      };
      const across = step(cd.x, xa), down = step(cd.y, ya);
      const px = Math.min(...shown.map(({e}) => parseFloat(getComputedStyle(e).fontSize) * e.getScreenCTM().a));
      const widest = shown.reduce((a, b) => (b.r.width > a.r.width ? b : a));
      const lines = Math.max(...shown.map(({e}) => Math.max(1, e.querySelectorAll('tspan.line').length)));
      const cell = {px: Math.round(px * 10) / 10, lines, cells: [across.count, down.count],
                    cell_px: [Math.round(across.px * 10) / 10, Math.round(down.px * 10) / 10],
                    widest_px: Math.round(widest.r.width), widest_text: (widest.e.textContent || '').slice(0, 40)};
      cells.push(cell);
      const at = {kind: 'cell text', group: 'heatmap', text: cell.widest_text, x0: widest.r.left - box.left,
                  y0: widest.r.top - box.top, x1: widest.r.right - box.left, y1: widest.r.bottom - box.top};
      if (px < CELL_TEXT_AT_LEAST - 0.05) found.push({what: `cell text under ${CELL_TEXT_AT_LEAST} px`, a: at});
      if (across.px && widest.r.width > across.px + 1) found.push({what: 'cell text wider than its cell', a: at});
    });
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
    out.push({figure: index, width: Math.round(w), height: Math.round(h),
              plot_width: plotWidth === null ? null : Math.round(plotWidth),
              scaled_share: scaled === null ? null : Math.round(scaled * 100) / 100, title_to_plot: gap(title),
              toolbar_to_plot: gap(bar), cell_text: cells,
              title: ((title || root.querySelector('.g-gtitle text') || {}).textContent || '').slice(0, 60),
              found: found.map(f => ({what: f.what, a: round(f.a), b: f.b && round(f.b)}))});
  });
  return out;
}"""
# px the page's main column leaves its content (its width less its padding)
COLUMN = """() => { const m = document.querySelector('[data-testid="stMainBlockContainer"]'), s = getComputedStyle(m);
  return Math.round(m.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)); }"""
# Text a reader sees past the window's right edge (to read it they would scroll the page sideways), and text cut off
# inside the page (a box that hides what overflows it cuts a line that does not fit: a label or a metric's name in a
# narrow st.columns column reads 'Dropped assig…' or stops mid-word, and nothing scrolls to the rest). Each leaf of the
# main block counts for what is left of its box inside every box around it (up to the main block, whose own scroll
# is the page's) that clips it: a scroll box (overflow auto or scroll: a formula's or a code block's own, a table's)
# is on purpose, the reader scrolls it, so what it holds counts only as far as the box reaches (a leaf whose own
# box hides its text's overflow cuts it too: a narrow select box's value); a box that hides
# what overflows and is 1 px or less either way is a copy for screen readers (KaTeX's MathML, a slider's or a
# toggle's own INPUT, drawn by its label instead), never seen; so are elements with display none, visibility hidden
# or opacity 0 on them or a box around them. A drawing with no text cut by a hiding box (KaTeX's 400 em square
# root, cut to its length on purpose) is not cut text. Figures are examined by OVERLAPS; a data frame draws on a
# canvas it scrolls itself.
SEEN = """() => { const m = document.querySelector('[data-testid="stMain"]'), out = {wide: [], cut: []};
  const name = e => e.tagName + ': ' + (e.textContent || '').slice(0, 60);
  for (const e of m.querySelectorAll('*')) {
    if (e.children.length || e.closest('[data-testid="stDataFrame"], .js-plotly-plot')) continue;
    const r = e.getBoundingClientRect(), text = (e.textContent || '').trim() !== '';
    const own = getComputedStyle(e);  // a leaf that hides its own overflow: a select box's value, a metric's
    let x0 = r.left, x1 = r.right, y0 = r.top, y1 = r.bottom, seen = true,
      cut = text && own.overflowX !== 'visible' && !/auto|scroll/.test(own.overflowX) && e.scrollWidth > e.clientWidth + 1;
    for (let a = e; a && a !== m && seen; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.display === 'none' || s.visibility === 'hidden' || s.opacity === '0') seen = false;
      else if (a !== e && (s.overflowX !== 'visible' || s.overflowY !== 'visible')) {
        const b = a.getBoundingClientRect(), hides = !/auto|scroll/.test(s.overflowX + s.overflowY);
        if (hides && (b.width <= 1 || b.height <= 1)) seen = false;
        else if (hides && text && (x1 > b.right + 1 || x0 < b.left - 1)) cut = true;
        x0 = Math.max(x0, b.left); x1 = Math.min(x1, b.right); y0 = Math.max(y0, b.top); y1 = Math.min(y1, b.bottom);
      }
      if (x1 - x0 <= 1 || y1 - y0 <= 1) seen = false;
    }
    if (!seen) continue;
    if (x1 > innerWidth + 1) out.wide.push(name(e));
    if (cut) out.cut.push(name(e));
  }
  return {wide: out.wide.slice(0, 5), cut: out.cut.slice(0, 5)}; }"""


# every chart Streamlit placed in the main block has plotly's drawing in it
DRAWN = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stPlotlyChart"]'))
  .every(c => c.querySelector('.js-plotly-plot .main-svg'))"""


def settle(page, lang: str) -> None:
    wait_for_run(page)
    axe_helpers.wait_for_page_script(page, lang, PAGE_RUN_MS)
    try:  # plotly draws after its element appears: every chart's own drawing, then a moment for its text
        page.wait_for_function(DRAWN, timeout=15_000, polling=200)
    except PlaywrightTimeout:
        pass  # examined as it is: a chart not drawn by then is left out (its count is in the row)
    page.wait_for_timeout(800)


# the main block's one primary button (a page's "Compute"), where it draws no figure yet
PRIMARY = '[data-testid="stMain"] [data-testid="stBaseButton-primary"]'
FIGURES = '[data-testid="stMain"] .js-plotly-plot'


def press_to_draw(page, lang: str) -> bool:
    """Press the page's one primary button where the page drew no figure yet (a state that waits to be asked to
    compute); whether it did."""
    button = page.locator(PRIMARY)
    if page.locator(FIGURES).count() or button.count() != 1 or not button.is_enabled():
        return False
    button.click()
    page.wait_for_selector(FIGURES, timeout=PAGE_RUN_MS)
    settle(page, lang)
    return True


def shoot(page, path: Path, width: int) -> None:
    """The whole page: Streamlit scrolls its main block, not the document, so the window is made as tall as it."""
    tall = page.evaluate(
        '() => Math.max(...Array.from(document.querySelectorAll(\'[data-testid="stMain"], '
        '[data-testid="stMainBlockContainer"]\')).map(e => e.scrollHeight), innerHeight)'
    )
    page.set_viewport_size({"width": width, "height": min(int(tall) + 40, 16000)})
    page.wait_for_timeout(600)
    page.screenshot(path=str(path), full_page=True)


def examine(page, row: dict, out: Path | None, width: int, height: int) -> dict:
    """What the page's figures show (and a full-page screenshot under `out`, unless None: each redraws every figure
    twice, a window made as tall as the page and back)."""
    if out:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(400)
    figures = page.evaluate(OVERLAPS, {"SCALED_AT_LEAST": SCALED_AT_LEAST, "CELL_TEXT_AT_LEAST": CELL_TEXT_AT_LEAST})
    shot = out / f"{row['page']}-{row['lang']}-{row['state']}-{row['device']}.png" if out else None
    if shot:
        shoot(page, shot, width)
        page.set_viewport_size({"width": width, "height": height})
    row |= {"figures": len(figures), "screenshot": str(shot.relative_to(ROOT)) if shot else None,
            "found": [dict(figure=f["figure"], **x) for f in figures for x in f["found"]],
            "widths": sorted({f["width"] for f in figures}),
            "plot_widths": [f["plot_width"] for f in figures],
            "scaled_shares": [f["scaled_share"] for f in figures if f["scaled_share"] is not None],
            "column_px": page.evaluate(COLUMN),
            "title_to_plot": [f["title_to_plot"] for f in figures if f["title_to_plot"] is not None],
            "toolbar_to_plot": [f["toolbar_to_plot"] for f in figures if f["toolbar_to_plot"] is not None],
            "cell_text": [dict(figure=f["figure"], title=f["title"], **c) for f in figures for c in f["cell_text"]],
            **{f"{k}_text": v for k, v in page.evaluate(SEEN).items()}}  # fmt: skip
    print(row["device"], row["page"], row["lang"], row["state"], row["figures"], "figures,", len(row["found"]), "found",
          row["wide_text"] or "", row["cut_text"] or "", flush=True)  # fmt: skip
    return row


def _own_agent(browser) -> str:
    page = browser.new_page()
    try:
        return page.evaluate("navigator.userAgent")
    finally:
        page.close()


def visits(args) -> list[tuple[str, int, int, str | None]]:
    """(device, width, height, User-Agent) of each run: --devices' from DEVICES, or --width x --height with a phone's
    agent under 768 px and headless chromium's own (a desktop's) otherwise."""
    if args.devices:
        return [(name, *DEVICES[name]) for name in args.devices.split(",")]
    return [(f"{args.width}x{args.height}", args.width, args.height, PHONE_AGENT if args.width < 768 else None)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", default="en,ja,ko")
    parser.add_argument("--pages", default="", help="comma-separated catalog urls (default: every page)")
    parser.add_argument("--width", type=int, default=390)
    parser.add_argument("--height", type=int, default=844)
    parser.add_argument("--devices", default="", help=f"comma-separated, of {', '.join(DEVICES)} (then no --width)")
    parser.add_argument("--states", default="default", help="comma-separated, of default, figure (a lesson's link)")
    parser.add_argument(
        "--link", action="append", default=[], metavar="PAGE?QUERY",
        help="also open PAGE at this link's state (state 'link'), e.g. encoder-decoder?part=alignment; repeatable",
    )  # fmt: skip
    parser.add_argument("--no-long", action="store_true", help="skip the long-text state")
    parser.add_argument("--no-shots", action="store_true", help="no screenshots (about a third of a visit's time)")
    parser.add_argument("--out", default="phone_layout")
    args = parser.parse_args()
    wanted = set(args.pages.split(",")) if args.pages else None
    entries = [e for e in PAGES_IN_TEST_ORDER if wanted is None or e.url in wanted]
    shots = None if args.no_shots else ROOT / "artifacts" / "phone"
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    states = args.states.split(",")
    figure_states = axe_helpers.figure_states() if "figure" in states else {}
    links = [(page, dict(parse_qsl(query))) for page, _, query in (link.partition("?") for link in args.link)]
    started, load_before = datetime.now(UTC).isoformat(timespec="seconds"), loadavg()
    rows: list[dict] = []
    with served_chromium() as (base, browser):
        for device, width, height, agent in visits(args):
            fitted_px = figure_px_for(agent or _own_agent(browser))
            for lang in args.langs.split(","):
                context = browser.new_context(
                    viewport={"width": width, "height": height}, device_scale_factor=1, locale="en-US",
                    **({"user_agent": agent} if agent else {}),
                )  # fmt: skip
                context.add_init_script(COUNT_RUNS)
                page = context.new_page()
                for entry in entries:
                    visit = {"device": device, "fitted_px": fitted_px, "page": entry.url, "lang": lang}
                    at_links = [("link", params) for url, params in links if url == entry.url]
                    for state, own in [(s, figure_states.get(entry.url, {})) for s in states] + at_links:
                        if state == "figure" and entry.url not in figure_states:
                            continue
                        params = {"lang": lang, **(own if state != "default" else {})}
                        page.goto(f"{base}{page_path(entry)}?{urlencode(params)}", wait_until="domcontentloaded")
                        page.wait_for_selector("h1", timeout=PAGE_RUN_MS)
                        settle(page, lang)
                        pressed = state == "figure" and press_to_draw(page, lang)
                        shown = visit | {"state": state} | ({"params": own} if state == "link" else {})
                        shown |= {"pressed": True} if pressed else {}
                        rows.append(examine(page, shown, shots, width, height))
                        area = page.locator('[data-testid="stMain"] textarea').first
                        if state == "default" and not args.no_long and area.count() and area.is_visible():
                            submit_text(page, area, LONG_TEXT[lang])
                            settle(page, lang)
                            rows.append(examine(page, visit | {"state": "long"}, shots, width, height))
                    if entry.url == "room":  # a room opened (the facilitator's page), then its projector view
                        open_a_room(page, lang)  # the passcode its server asks for, typed
                        page.wait_for_function("location.search.includes('mode=control')", timeout=PAGE_RUN_MS)
                        settle(page, lang)
                        rows.append(examine(page, visit | {"state": "facilitator"}, shots, width, height))
                        code = page.evaluate("new URLSearchParams(location.search).get('room')")
                        query = urlencode({"room": code, "mode": "projector", "lang": lang})
                        page.goto(f"{base}/room?{query}", wait_until="domcontentloaded")
                        page.wait_for_selector("h1", timeout=PAGE_RUN_MS)
                        settle(page, lang)
                        rows.append(examine(page, visit | {"state": "projector"}, shots, width, height))
                context.close()
    result = {
        "command": "python " + " ".join(["scripts/phone_layout_check.py", *sys.argv[1:]]),
        "date": started,
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "devices": {d: dict(width=w, height=h, user_agent=a) for d, w, h, a in visits(args)},
        "visits": len(rows),
        "visits_with_findings": sum(bool(r["found"]) for r in rows),
        "findings_by_device": {
            d: dict(Counter(f["what"] for r in rows if r["device"] == d for f in r["found"])) for d, *_ in visits(args)
        },
        # page text (not a figure's): visits with text past the window's right edge, and with text cut off (SEEN)
        "text_by_device": {
            d: {
                f"visits_with_{k}_text": sum(bool(r[f"{k}_text"]) for r in rows if r["device"] == d)
                for k in ("wide", "cut")
            }
            for d, *_ in visits(args)
        },
        "per_visit": rows,
    }
    save_result(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "per_visit"}), flush=True)


if __name__ == "__main__":
    main()
