"""The load test, page by page (issue 26): what a study group does to one page, next to Streamlit's own floor.

For each page (and first for a one-line app, benchmarks/one_line_app.py, served the same way in the same run):
  join   N sessions open the page at once (the facilitator says "open /masks"): when the last one sees it;
  work   the same N sessions then act every 1-3 s for --seconds: each action changes the page's first text area
         (new sentences every time, as many as the area shows lines: nothing is answered from a cache, and a page
         that takes a sentence a line gets a batch), else its first slider, else reruns it;
  CPU    the servers' CPU time per action, for the work stage and for both stages together (first loads
         included), next to the one-line app's.
With --processes 1,2 it does all of this on one server and then on two (one per core) behind nginx
(scripts/serve_class.py: the same cookie-hashed proxy in both cases), so the two are compared like with like.

    python scripts/load_pages.py                                   # every page, 30 sessions, 20 s, 1 and 2 processes
    python scripts/load_pages.py --pages masks,moe --sessions 5 --seconds 5 --processes 1 --out /tmp/p.json
    python scripts/load_pages.py --table results/load_pages.json  # the README's table of a run
    python scripts/load_pages.py --merge results/load_pages_x.json  # a later run's pages into --out's run

The machine is shared: /proc/loadavg is recorded before and after every page; figures from a busy machine say so.
Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import datetime as dt
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import websockets
from streamlit.proto.WidgetStates_pb2 import WidgetState

from scripts import load_test as lt
from scripts.app_server import free_port
from scripts.serve_class import Class

ROOT = Path(__file__).resolve().parents[1]
ONE_LINE = "benchmarks/one_line_app.py"
FLOOR = "one-line app"
DEFAULT_PAGES = "catalog"  # every page of app/catalog.py, in its order ("" is the landing page)


def catalog_pages() -> list[str]:
    from app import catalog

    return ["" if p.topic == "home" else p.url for p in catalog.PAGES]


def name_of(script: str, url: str) -> str:
    return FLOOR if script == ONE_LINE else f"/{url}"


async def page_action(s: lt.StreamlitSession, rng: random.Random, session: int, n: int) -> lt.RunResult:
    """What a visitor of any page does: new sentences in its first text area (as many as it shows lines), else a
    new value of its first slider, else a rerun."""
    protos = list(s.widgets.items())
    for wid, proto in protos:
        if type(proto).__name__ == "TextArea":
            text = lt.typed_text(s.texts.get(wid, ""), lambda line: lt.fresh_sentence(rng, session, n, line))
            return await s.set_widget(WidgetState(id=wid, string_value=text))
    for wid, proto in protos:
        if type(proto).__name__ == "Slider" and proto.data_type in (0, 1) and len(proto.default) == 1:
            if proto.options:
                value = float(rng.randrange(len(proto.options)))
            else:
                steps = int(round((proto.max - proto.min) / proto.step)) if proto.step else 0
                value = proto.min + proto.step * rng.randint(0, max(steps, 0))
            return await s.set_widget(WidgetState(id=wid, double_array_value={"data": [value]}))
    client_state = lt.ClientState(query_string=s.query, page_script_hash=s.page_hash)
    return await s.rerun(client_state)


async def one_page(port: int, url: str, sessions: int, seconds: float, think: tuple, timeout: float, seed: int,
                   server_pids: list[int]) -> dict:  # fmt: skip
    """Join burst then work, on the page at `url` of the server(s) behind `port`."""

    def cpu() -> float:
        return sum(lt.cpu_s(p) for pid in server_pids for p in lt.process_tree(pid))

    load_before = lt.loadavg()
    t0 = time.monotonic()
    rec = lt.Recorder(t0)
    visitors = [lt.StreamlitSession(port, timeout) for _ in range(sessions)]
    cpu0 = cpu()

    async def join(i: int, s: lt.StreamlitSession) -> bool:
        started = time.monotonic()
        try:
            rec.record(i, url, "open", await s.open(url), started)
            return True
        except (lt.ProtocolError, TimeoutError, OSError, websockets.ConnectionClosed) as err:
            rec.error(i, url, "open", err)
            return False

    joined = await asyncio.gather(*(join(i, s) for i, s in enumerate(visitors)))
    join_wall = time.monotonic() - t0
    cpu_join = cpu() - cpu0
    opens = [t["ms"] for t in rec.timings]

    work_t0 = time.monotonic()
    deadline = work_t0 + seconds
    cpu1 = cpu()

    async def work(i: int, s: lt.StreamlitSession) -> None:
        rng = random.Random(seed * 1000 + i)
        n = 0
        while True:
            await asyncio.sleep(rng.uniform(*think))
            if time.monotonic() >= deadline:
                return
            n += 1
            started = time.monotonic()
            try:
                rec.record(i, url, "act", await page_action(s, rng, i, n), started)
            except (lt.ProtocolError, TimeoutError, websockets.ConnectionClosed) as err:
                rec.error(i, url, "act", err)
                return

    await asyncio.gather(*(work(i, s) for i, s in enumerate(visitors) if joined[i]))
    work_wall = time.monotonic() - work_t0
    cpu_work = cpu() - cpu1
    await asyncio.gather(*(s.close() for s in visitors))
    acts = [t["ms"] for t in rec.timings if t["kind"] == "act"]
    out = {
        "join": {
            "last_sees_it_s": round(max(opens) / 1000, 2) if opens else None,
            **lt.percentiles(opens),
            "wall_s": round(join_wall, 1),
            "server_cpu_s": round(cpu_join, 2),
        },  # fmt: skip
        "work": {
            **lt.percentiles(acts),
            "wall_s": round(work_wall, 1),
            "server_cpu_s": round(cpu_work, 2),
            "server_cores_used": round(cpu_work / work_wall, 2) if work_wall else None,
        },  # fmt: skip
        "server_cpu_ms_per_action": round(1000 * cpu_work / len(acts)) if acts else None,
        "server_cpu_ms_per_action_with_first_loads": round(1000 * (cpu_join + cpu_work) / len(rec.timings))
        if rec.timings
        else None,
        "errors": len(rec.errors),
        "error_samples": rec.errors[:3],
        "exception_boxes": len(rec.exception_boxes),
        "exception_samples": rec.exception_boxes[:3],
        "page_not_found": rec.page_not_found,
        "loadavg_before": load_before,
        "loadavg_after": lt.loadavg(),
    }
    return out


def line(name: str, r: dict) -> str:
    j, w = r["join"], r["work"]
    return (
        f"{name:>22}  join: last {j['last_sees_it_s']} s  work: p50/p95 {w.get('p50_ms', '-')}/{w.get('p95_ms', '-')} ms"
        f" (n={w['n']})  CPU/action {r['server_cpu_ms_per_action']} ms ({r['server_cpu_ms_per_action_with_first_loads']}"
        f" with first loads)  errors {r['errors']}  boxes {r['exception_boxes']}  load {r['loadavg_before'][0]:.1f}"
    )


async def warm(port: int, url: str, timeout: float) -> None:
    """One visitor opens the page and acts once: imports and model loads happen here, not in the measurement."""
    s = lt.StreamlitSession(port, max(timeout, 300))
    try:
        await s.open(url)
        await page_action(s, random.Random(0), -1, 0)
    finally:
        await s.close()


def measure(processes: int, script: str, urls: list[str], args, run_root: Path) -> dict:
    ports: list[int] = []
    while len(ports) < processes + 1:  # the servers' and nginx's
        if (port := free_port()) not in ports:
            ports.append(port)
    listen = ports.pop()
    lab = Class(ports, listen, run_root / f"{processes}-{Path(script).stem}", run_root / "logs", script=script)
    lab.start()
    out = {}
    try:
        for url in urls:
            for port in lab.ports:  # every server, directly: nginx would warm only the one it picks
                asyncio.run(warm(port, url, args.timeout))
            name = name_of(script, url)
            out[name] = asyncio.run(
                one_page(
                    lab.listen,
                    url,
                    args.sessions,
                    args.seconds,
                    tuple(args.think),
                    args.timeout,
                    args.seed,
                    lab.server_pids(),
                )  # fmt: skip
            )
            print(line(name, out[name]), flush=True)
    finally:
        lab.stop()
    return out


def table(result: dict) -> str:
    """The README's per-page table of a results file: for each page (the one-line app first), the join burst's
    last page, the work stage's p50/p95 and the servers' CPU per action (and its multiple of the one-line app's in
    the same run), one process against two."""
    runs = result["by_processes"]
    counts = sorted(runs, key=int)

    def cell(name: str, f) -> str:
        return " / ".join(f(runs[c][name], runs[c][FLOOR]) if name in runs[c] else "–" for c in counts)

    def times_floor(r: dict, floor: dict) -> str:
        # a row merged from a later run is divided by that run's one-line app: the machine's floor moves between runs
        base = r.get("measured_in", {}).get("one_line_app_ms") or floor["server_cpu_ms_per_action"]
        cpu = r["server_cpu_ms_per_action"]
        return "–" if cpu is None or not base else f"{cpu / base:.1f}"

    def seconds(ms) -> str:
        return "–" if ms is None else f"{ms / 1000:.2f}"

    head = " / ".join(f"{c} proc." for c in counts)
    lines = [
        f"| Page | join of {result['config']['sessions']}: last sees it, s ({head}) | acting every 1-3 s: p50, p95 s "
        f"({head}) | server CPU per action, ms ({head}) | × one-line app |",
        "|---|---|---|---|---|",
    ]
    names = [FLOOR] + [n for n in runs[counts[0]] if n != FLOOR]
    for name in names:
        later = next((runs[c][name]["measured_in"] for c in counts if "measured_in" in runs[c].get(name, {})), None)
        lines.append(
            f"| {name}{'' if later is None else ' (' + later['date'][:10] + ')'} "
            f"| {cell(name, lambda r, f: str(r['join']['last_sees_it_s']))} "
            f"| {cell(name, lambda r, f: seconds(r['work'].get('p50_ms')) + ', ' + seconds(r['work'].get('p95_ms')))} "
            f"| {cell(name, lambda r, f: str(r['server_cpu_ms_per_action']))} "
            f"| {cell(name, times_floor)} |"
        )
    return "\n".join(lines)


def merge(into: dict, source: dict, source_file: str) -> dict:
    """`into` with the pages of `source` (a later run of a few of its pages, with its process counts) in place of
    its own, each saying where it was measured (file, command, date, commit, that run's one-line app); the one-line
    app's row stays `into`'s. The table marks such a row with its date."""
    missing = sorted(set(source["by_processes"]) - set(into["by_processes"]))
    if missing:
        raise ValueError(f"{source_file} has process counts {missing} that the run it goes into has not")
    out = copy.deepcopy(into)
    for count, runs in source["by_processes"].items():
        where = {"file": source_file, "command": source["command"], "date": source["date"], "git": source.get("git"),
                 "one_line_app_ms": runs.get(FLOOR, {}).get("server_cpu_ms_per_action")}  # fmt: skip
        for name, run in runs.items():
            if name != FLOOR:
                out["by_processes"][count][name] = {**run, "measured_in": where}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", default=DEFAULT_PAGES, help="comma-separated url paths, or 'catalog' (all)")
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=20, help="of work per page")
    parser.add_argument("--think", type=float, nargs=2, default=[1.0, 3.0], metavar=("MIN", "MAX"))
    parser.add_argument("--processes", default="1,2", help="server processes to compare, e.g. 1,2")
    parser.add_argument("--timeout", type=float, default=60, help="per action")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "results" / "load_pages.json"))
    parser.add_argument("--table", metavar="RESULTS_JSON", help="print the README table of a results file, run nothing")
    parser.add_argument("--merge", metavar="RESULTS_JSON", help="put a later run's pages into --out; run nothing")
    args = parser.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.table).read_text())))
        return 0
    if args.merge:
        from core.results import save_result

        merged = merge(json.loads(Path(args.out).read_text()), json.loads(Path(args.merge).read_text()), args.merge)
        save_result(Path(args.out), merged)
        print(table(merged))
        return 0
    pages = catalog_pages() if args.pages == "catalog" else [p.strip().strip("/") for p in args.pages.split(",")]
    from core.results import save_result
    from core.timing import machine_info

    result: dict = {
        "command": " ".join(["python", "scripts/load_pages.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git": lt.git_version(),
        "machine": machine_info("cpu"),
        "config": {k: getattr(args, k) for k in ("sessions", "seconds", "think", "processes", "timeout")},
        "loadavg_before": lt.loadavg(),
        "by_processes": {},
    }
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="attention-lab-load-pages-") as tmp, lt.client_heap_frozen():
        for processes in (int(p) for p in args.processes.split(",")):
            print(f"--- {processes} process(es)", flush=True)
            runs = measure(processes, ONE_LINE, [""], args, Path(tmp))
            runs |= measure(processes, "app/main.py", pages, args, Path(tmp))
            result["by_processes"][str(processes)] = runs
    result["loadavg_after"] = lt.loadavg()
    result["wall_s"] = round(time.monotonic() - t0)
    path = save_result(Path(args.out), result)
    print(f"wrote {path} in {result['wall_s']} s")
    bad = sum(r["errors"] + r["exception_boxes"] + r["page_not_found"]
              for runs in result["by_processes"].values() for r in runs.values())  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
