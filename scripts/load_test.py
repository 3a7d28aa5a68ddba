"""Load test: one `streamlit run` server, many real browser sessions (one Debian chromium, one context each).

Each session opens a page of app/catalog.py by its URL, then for the given time keeps moving between pages
through the sidebar and typing text where a page has a text box, pausing between actions like a reader would.
Measured:
  - errors: Streamlit exception boxes, "Page not found", JavaScript dialogs, actions that did not finish
    within --timeout (a failed load), browser page crashes;
  - time to render: from the action (opening a URL, clicking a page, submitting text) until the script run is
    over and no stale element is left, p50/p95/max, per kind of action and per page;
  - the server's resident memory (VmRSS of the server process and its children, from /proc) every second.
A warm-up pass first opens every page once (model pages load their weights then); it is reported apart.

    python scripts/load_test.py                              # 20 sessions for 120 s -> results/load_test.json
    python scripts/load_test.py --sessions 5 --seconds 30    # a quick one

Needs /usr/bin/chromium and playwright (no browser download). Figures depend on the machine: the JSON records
its core count and load average, which matter as much as the session count.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

from app import catalog
from scripts.app_server import COUNT_RUNS, RUN_FINISHED, free_port, start_server, stop_server

ROOT = Path(__file__).resolve().parents[1]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
TEXTS = [
    "The cat sat on the mat because it was tired.",
    "The trophy did not fit in the suitcase because it was too big.",
    "猫はマットの上に座った。疲れていたからだ。",
    "고양이가 매트 위에 앉았다. 피곤했기 때문이다.",
    "The 🐱 chased the 🐭 until it hid.\nDogs bark.",
    "<script>alert(1)</script> {{7*7}}",
    "Alice gave Bob the book because she had finished it.\nIt was raining.\nThe dog slept.",
]
ACTIVE_PAGE = """() => {
  const a = document.querySelector('[data-testid="stSidebarNav"] a[aria-current="page"]');
  return a ? new URL(a.href).pathname : null;
}"""


def page_path(url: str) -> str:
    return "/" if url == "home" else f"/{url}"


# --- server and its memory -----------------------------------------------------------------------------------


def process_tree(pid: int) -> list[int]:
    """pid and all its descendants, from /proc/<pid>/stat (field 4 is the parent's pid)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])  # the name in (...) may hold spaces
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def rss_mb(pid: int) -> float:
    total_kb = 0
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
                    break
        except OSError:
            pass
    return total_kb / 1024


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid: int) -> int:
    """utime + stime of one process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])


def machine_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all cores since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values[:8]) - idle, sum(values[:8])


class CpuMeter:
    """CPU seconds used by the server's process tree and by this script's own tree (the browser doing the load),
    summed per process between samples so that processes that come and go (chromium renderers) are counted."""

    def __init__(self, server_pid: int):
        self.server_pid = server_pid
        self.last: dict[int, int] = {}
        self.server_s = 0.0
        self.client_s = 0.0

    def sample(self) -> None:
        server = set(process_tree(self.server_pid))
        client = set(process_tree(os.getpid())) - server
        now = {pid: cpu_ticks(pid) for pid in server | client}
        for pid, ticks in now.items():
            delta = max(0, ticks - self.last.get(pid, 0)) / TICKS  # a new process: all its time is new
            if pid in server:
                self.server_s += delta
            else:
                self.client_s += delta
        self.last = now

    def snapshot(self) -> dict:
        self.sample()
        busy, total = machine_ticks()
        return {
            "server_s": self.server_s,
            "client_s": self.client_s,
            "busy_s": busy / TICKS,
            "all_s": total / TICKS,
            "t": time.monotonic(),
        }


async def sample_memory(
    pid: int, t0: float, series: list, stop: asyncio.Event, cpu: CpuMeter, every_s: float = 1.0
) -> None:
    while not stop.is_set():
        series.append((round(time.monotonic() - t0, 1), round(rss_mb(pid), 1)))
        cpu.sample()
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except TimeoutError:
            pass


def cpu_report(a: dict, b: dict) -> dict:
    wall = b["t"] - a["t"]
    cores = os.cpu_count() or 1
    server, client, busy = b["server_s"] - a["server_s"], b["client_s"] - a["client_s"], b["busy_s"] - a["busy_s"]
    return {
        "window_s": round(wall, 1),
        "cores": cores,
        "core_seconds_available": round(wall * cores, 1),
        "server_cpu_s": round(server, 1),
        "browser_and_driver_cpu_s": round(client, 1),
        "everything_else_cpu_s": round(max(0.0, busy - server - client), 1),
        "machine_busy_share": round(busy / (wall * cores), 3) if wall else None,
    }


# --- sessions ------------------------------------------------------------------------------------------------


class Stats:
    def __init__(self):
        self.timings: list[dict] = []  # {"kind", "page", "ms", "session", "t"}
        self.errors: list[dict] = []
        self.page_errors = 0  # uncaught JavaScript errors in the page (reported, not counted as errors)

    def error(self, session: int, page: str, what: str) -> None:
        self.errors.append({"session": session, "page": page, "error": what[:500]})


PAGE_STATE = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const h1 = document.querySelector('h1');
  return {runs: window.__runsFinished, state: app && app.getAttribute('data-test-script-state'),
          stale: document.querySelectorAll('[data-stale="true"]').length, path: location.pathname,
          h1: h1 && h1.innerText.slice(0, 60), search: location.search.length};
}"""


async def wait_for_run(page, runs_before: int, timeout_ms: int, changed: str = "false") -> None:
    """Wait until a run that started after the action has finished: seen by the run counter, or by `changed`
    (a JavaScript condition that the action's run has shown its effect, for when the browser was too busy to
    ever draw the 'running' state), and then no run going on and no stale element left."""
    try:
        await page.wait_for_function(
            f"window.__runsFinished > {runs_before} || ({changed})", timeout=timeout_ms, polling=100
        )
        await page.wait_for_function(RUN_FINISHED, timeout=timeout_ms, polling=100)
    except Exception as err:
        try:
            state = await page.evaluate(PAGE_STATE)
        except Exception:  # noqa: BLE001
            state = "?"
        raise RuntimeError(f"{type(err).__name__}; page state {state}") from err


async def check_page(page, stats: Stats, session: int, url: str) -> bool:
    problems = []
    n_exc = await page.locator('[data-testid="stException"]').count()
    if n_exc:
        text = await page.locator('[data-testid="stException"]').first.inner_text()
        problems.append(f"exception box: {text[:300]}")
    if await page.get_by_text("Page not found").count():
        problems.append("Page not found")
    if await page.evaluate(ACTIVE_PAGE) != page_path(url):
        problems.append(f"wrong page: {await page.evaluate(ACTIVE_PAGE)}")
    for p in problems:
        stats.error(session, url, p)
    return not problems


VERBOSE = False


async def timed(stats: Stats, session: int, kind: str, url: str, action, t0: float) -> bool:
    start = time.monotonic()
    try:
        await action()
    except Exception as err:  # noqa: BLE001 - a timeout or a crash is a failed action, recorded, then recovered
        stats.error(session, url, f"{kind}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
        if VERBOSE:
            print(
                f"[{start - t0:7.1f} s] session {session:>2} {kind:<8} {url:<18} FAILED {type(err).__name__}",
                flush=True,
            )
        return False
    ms = round((time.monotonic() - start) * 1000)
    stats.timings.append({"kind": kind, "page": url, "ms": ms, "session": session, "t": round(start - t0, 1)})
    if VERBOSE:
        print(f"[{start - t0:7.1f} s] session {session:>2} {kind:<8} {url:<18} {ms:>6} ms", flush=True)
    return True


async def open_url(page, base: str, url: str, timeout_ms: int) -> None:
    await page.goto(base + page_path(url), wait_until="domcontentloaded", timeout=timeout_ms)
    await wait_for_run(page, 0, timeout_ms)


async def navigate(page, url: str, timeout_ms: int) -> None:
    before = await page.evaluate("window.__runsFinished")
    h1 = await page.evaluate("() => (document.querySelector('h1') || {}).innerText || ''")
    await page.locator(f'[data-testid="stSidebarNav"] a[href$="{page_path(url)}"]').first.click(timeout=timeout_ms)
    await wait_for_run(
        page,
        before,
        timeout_ms,
        changed=f"((document.querySelector('h1') || {{}}).innerText || '') !== {json.dumps(h1)}",
    )
    await page.wait_for_function(f"() => ({ACTIVE_PAGE})() === {json.dumps(page_path(url))}", timeout=timeout_ms)


async def type_text(page, text: str, timeout_ms: int) -> None:
    area = page.locator('[data-testid="stMain"] [data-testid="stTextArea"] textarea').first
    if await area.input_value() == text:
        text += " Again."
    before = await page.evaluate("window.__runsFinished")
    search = await page.evaluate("location.search")
    await area.fill(text, timeout=timeout_ms)
    await area.press("Control+Enter", timeout=timeout_ms)
    # the run writes the new text into the URL (app/ui.py) as soon as it reads the text box
    await wait_for_run(page, before, timeout_ms, changed=f"location.search !== {json.dumps(search)}")


async def run_session(
    i: int, browser, base: str, urls: list[str], deadline: float, stats: Stats, t0: float, args
) -> None:
    rng = random.Random(args.seed * 1000 + i)
    await asyncio.sleep(i * args.ramp / max(1, args.sessions))  # visitors arrive over the ramp
    context = await browser.new_context(viewport={"width": 1280, "height": 860}, locale="en-US")
    await context.add_init_script(COUNT_RUNS)
    page = await context.new_page()
    page.on(
        "dialog", lambda d: (stats.error(i, "?", f"JavaScript dialog: {d.message}"), asyncio.ensure_future(d.dismiss()))
    )
    page.on("pageerror", lambda e: setattr(stats, "page_errors", stats.page_errors + 1))
    page.on("crash", lambda p: stats.error(i, "?", "page crashed"))
    url = urls[i % len(urls)]
    ok = await timed(stats, i, "open", url, lambda: open_url(page, base, url, args.timeout * 1000), t0)
    if ok:
        await check_page(page, stats, i, url)
    try:
        while time.monotonic() < deadline:
            await asyncio.sleep(rng.uniform(*args.think))
            if time.monotonic() >= deadline:
                break
            if not ok:  # recover from a failed action with a fresh load, as a reader would reload
                url = rng.choice(urls)
                ok = await timed(stats, i, "open", url, lambda: open_url(page, base, url, args.timeout * 1000), t0)
                if ok:
                    await check_page(page, stats, i, url)
                continue
            has_text = await page.locator('[data-testid="stMain"] [data-testid="stTextArea"] textarea').count()
            if has_text and rng.random() < args.type_share:
                ok = await timed(
                    stats, i, "type", url, lambda: type_text(page, rng.choice(TEXTS), args.timeout * 1000), t0
                )
            else:
                url = rng.choice([u for u in urls if u != url] or urls)
                ok = await timed(stats, i, "navigate", url, lambda: navigate(page, url, args.timeout * 1000), t0)
            if ok:
                ok = await check_page(page, stats, i, url)
    finally:
        await context.close()


def percentiles(ms: list[int]) -> dict:
    if not ms:
        return {"n": 0}
    ms = sorted(ms)
    q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else [ms[0]] * 99
    return {"n": len(ms), "p50_ms": round(q[49]), "p95_ms": round(q[94]), "max_ms": ms[-1]}


async def main_async(args) -> dict:
    from playwright.async_api import async_playwright

    urls = args.pages or [p.url for p in catalog.PAGES]
    port = args.port or free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = Path(args.server_log)
    load_before = os.getloadavg()
    t0 = time.monotonic()
    server_log = open(log_path, "w")
    try:
        server = start_server(port, server_log)
    except RuntimeError as err:
        raise SystemExit(f"{err}; see {log_path}") from err
    memory: list = []
    stop = asyncio.Event()
    cpu = CpuMeter(server.pid)
    sampler = asyncio.create_task(sample_memory(server.pid, t0, memory, stop, cpu))
    stats, warmup = Stats(), Stats()
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            # warm-up: every page once, in one session (weights load here, not in the measured part)
            context = await browser.new_context(viewport={"width": 1280, "height": 860})
            await context.add_init_script(COUNT_RUNS)
            page = await context.new_page()
            for url in urls:
                if await timed(warmup, -1, "warm-up", url, lambda: open_url(page, base, url, 300_000), t0):
                    await check_page(page, warmup, -1, url)
            await context.close()
            rss_after_warmup = rss_mb(server.pid)
            cpu_start = cpu.snapshot()
            start = time.monotonic()
            deadline = start + args.seconds
            await asyncio.gather(
                *(run_session(i, browser, base, urls, deadline, stats, t0, args) for i in range(args.sessions))
            )
            measured_s = time.monotonic() - start
            cpu_end = cpu.snapshot()
            await browser.close()
    finally:
        stop.set()
        await sampler
        stop_server(server)
        server_log.close()
    rss = [m for _, m in memory]
    by_kind = {k: percentiles([t["ms"] for t in stats.timings if t["kind"] == k]) for k in ("open", "navigate", "type")}
    by_page = {u: percentiles([t["ms"] for t in stats.timings if t["page"] == u]) for u in urls}
    return {
        "config": {
            "sessions": args.sessions,
            "seconds": args.seconds,
            "ramp_s": args.ramp,
            "think_s": args.think,
            "type_share": args.type_share,
            "timeout_s": args.timeout,
            "pages": urls,
            "seed": args.seed,
        },
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            "note": "the load average includes whatever else ran on the machine",
        },
        "measured_s": round(measured_s, 1),
        "actions": len(stats.timings),
        "actions_per_s": round(len(stats.timings) / measured_s, 2),
        "errors": len(stats.errors),
        "error_samples": stats.errors[:30],
        "javascript_page_errors": stats.page_errors,
        "time_to_render_all": percentiles([t["ms"] for t in stats.timings]),
        "time_to_render_by_kind": by_kind,
        "time_to_render_by_page": by_page,
        "cpu_during_measurement": cpu_report(cpu_start, cpu_end),
        "warmup": {"errors": warmup.errors, "ms_by_page": {t["page"]: t["ms"] for t in warmup.timings}},
        "server_rss_mb": {
            "after_start": rss[0] if rss else None,
            "after_warmup": round(rss_after_warmup, 1),
            "peak": max(rss) if rss else None,
            "end": rss[-1] if rss else None,
            "series_t_s_mb": memory[:: max(1, len(memory) // 400)],
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description="Many browser sessions against one Attention Lab server.")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=120, help="measured time after the warm-up")
    parser.add_argument("--ramp", type=float, default=10, help="seconds over which sessions arrive")
    parser.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=(1.0, 3.0),
        metavar=("MIN", "MAX"),
        help="pause between a session's actions, seconds (uniform)",
    )
    parser.add_argument(
        "--type-share", type=float, default=0.5, help="share of actions that type text, where a page has a text box"
    )
    parser.add_argument("--timeout", type=float, default=90, help="seconds before an action counts as failed")
    parser.add_argument("--pages", nargs="*", help="catalog urls to visit (default: every page)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "results" / "load_test.json"))
    parser.add_argument("--server-log", default="/tmp/attention-lab-load-test-server.log")
    parser.add_argument("--verbose", action="store_true", help="print every action as it ends")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing (apt-get install chromium)")
    result = asyncio.run(main_async(args))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    a, k = result["time_to_render_all"], result["time_to_render_by_kind"]
    print(
        f"{args.sessions} sessions, {result['measured_s']} s measured, {result['actions']} actions "
        f"({result['actions_per_s']}/s), errors: {result['errors']}"
    )
    print(f"time to render: p50 {a.get('p50_ms')} ms, p95 {a.get('p95_ms')} ms, max {a.get('max_ms')} ms")
    for kind, v in k.items():
        print(f"  {kind:<9} n={v['n']:<5} p50 {v.get('p50_ms')} ms  p95 {v.get('p95_ms')} ms")
    m = result["server_rss_mb"]
    print(
        f"server RSS: {m['after_start']} MB at start, {m['after_warmup']} MB after warm-up, peak {m['peak']} MB, "
        f"{m['end']} MB at the end"
    )
    print(f"CPU while measuring: {result['cpu_during_measurement']}")
    print(f"machine: {result['machine']}")
    print(f"wrote {args.out}")
    for e in result["error_samples"][:10]:
        print("  error:", e)
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
