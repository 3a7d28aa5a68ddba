"""What the other visitors of one server process pay while a slow model load holds Python's automatic garbage
collection off (app/collector.py paused(), around app/models.load).

One `streamlit run` server per try, its model cache empty (ATTENTION_LAB_CACHE: a fresh folder), so SmolLM2's
first load converts its weights from the GGUF file (15-40 s), the slowest load the app has. MiniLM is loaded
first (/attention opened once); then --sessions visitors act on /attention every 1-3 s (new sentences each time,
as scripts/load_pages.py's visitors do), and after --before seconds one more visitor opens /logit-lens, which
loads SmolLM2; the others go on until --after seconds past the end of that load. Recorded per try: the load's
seconds, the others' actions before / during / after the load (p50, p95), the server's resident memory (its
process tree, every 0.25 s) at the load's start, its peak during the load and at its end, and the server's CPU.

Variants, alternated (--order): "paused" serves the tree as it is; "load_not_paused" serves it with
app.models.load's pause taken out (the server started through a wrapper that gives app/models.py a collector
whose paused() does nothing; app/main.py's pause while importing stays), so the two differ in that alone.

    python scripts/collector_during_load.py --out results/collector_during_load.json
    python scripts/collector_during_load.py --order paused --sessions 3 --before 3 --after 2 --out /tmp/c.json

Run it under the exclusive measure lock (flock /tmp/attention-lab-measure.lock ...); the load average is recorded.
Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from scripts import load_test as lt
from scripts.app_server import free_port, start_server, stop_server
from scripts.load_pages import page_action

VARIANTS = ("paused", "load_not_paused")
# What stands for `streamlit` in the server's command (scripts/app_server.start_server): streamlit's own command line,
# after (load_not_paused) replacing the collector app/models.py calls by one whose paused() does nothing.
WRAPPER = """
import sys
if sys.argv[1] == "load_not_paused":
    import contextlib, types
    import app.models
    app.models.collector = types.SimpleNamespace(paused=contextlib.nullcontext)
from streamlit.web import cli
sys.argv = ["streamlit", *sys.argv[2:]]
cli.main()
"""


def cpu(pid: int) -> float:
    return sum(lt.cpu_s(p) for p in lt.process_tree(pid))


def window(acts: list[tuple[float, float]], start: float, end: float) -> dict:
    return lt.percentiles([ms for t, ms in acts if start <= t < end])


async def one_try(variant: str, port: int, pid: int, args) -> dict:
    rss: list[tuple[float, float]] = []
    acts: list[tuple[float, float]] = []  # (started, ms) of the other visitors' actions
    errors: list[str] = []
    stop = asyncio.Event()
    t0 = time.monotonic()

    async def sample() -> None:
        while not stop.is_set():
            rss.append((time.monotonic() - t0, await asyncio.to_thread(lt.rss_mb, pid)))
            try:
                await asyncio.wait_for(stop.wait(), 0.25)
            except TimeoutError:
                pass

    first = lt.StreamlitSession(port, 120)
    await first.open("attention")  # MiniLM loaded, the page's code imported and frozen
    await first.close()
    sampler = asyncio.create_task(sample())
    visitors = [lt.StreamlitSession(port, 120) for _ in range(args.sessions)]
    await asyncio.gather(*(s.open("attention") for s in visitors))
    load: dict = {}

    async def work(i: int, s: lt.StreamlitSession) -> None:
        rng, n = random.Random(args.seed * 1000 + i), 0
        while not stop.is_set():
            await asyncio.sleep(rng.uniform(1.0, 3.0))
            if stop.is_set():
                return
            n, started = n + 1, time.monotonic() - t0
            try:
                result = await page_action(s, rng, i, n)
                acts.append((started, result.ms))
            except (lt.ProtocolError, TimeoutError) as err:
                errors.append(repr(err)[:200])
                return

    async def loader() -> None:
        await asyncio.sleep(args.before)
        s = lt.StreamlitSession(port, 300)
        load["cpu_before"] = cpu(pid)
        load["start"] = time.monotonic() - t0
        result = await s.open("logit-lens")
        load["end"] = time.monotonic() - t0
        load["cpu_during"] = cpu(pid) - load.pop("cpu_before")
        load["exceptions"] = result.exceptions
        await s.close()
        await asyncio.sleep(args.after)
        stop.set()

    cpu0 = cpu(pid)
    await asyncio.gather(loader(), *(work(i, s) for i, s in enumerate(visitors)))
    await sampler
    await asyncio.gather(*(s.close() for s in visitors))
    start, end = load["start"], load["end"]
    during = [m for t, m in rss if start <= t <= end]
    at_start = next((m for t, m in reversed(rss) if t <= start), None)  # the last sample before the load
    return {
        "variant": variant,
        "load_s": round(end - start, 2),
        "server_cpu_during_load_s": round(load["cpu_during"], 2),
        "server_cpu_s": round(cpu(pid) - cpu0, 2),
        "others_before_load": window(acts, start - args.before, start),
        "others_during_load": window(acts, start, end),
        "others_after_load": window(acts, end, end + args.after),
        "rss_mb": {
            "load_start": at_start,
            "peak_during_load": max(during, default=None),
            "load_end": next((m for t, m in rss if t >= end), None),  # the first sample after it
            "last": rss[-1][1] if rss else None,
        },
        "errors": len(errors),
        "error_samples": errors[:3],
        "load_exceptions": load["exceptions"],
        "loadavg_after": lt.loadavg(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--order", default="paused,load_not_paused,paused,load_not_paused")
    parser.add_argument("--sessions", type=int, default=10, help="visitors acting on /attention meanwhile")
    parser.add_argument("--before", type=float, default=10, help="seconds of their actions before the load")
    parser.add_argument("--after", type=float, default=8, help="seconds of their actions after it")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    order = [v.strip() for v in args.order.split(",") if v.strip()]
    if unknown := set(order) - set(VARIANTS):
        parser.error(f"unknown variants {sorted(unknown)}; known: {', '.join(VARIANTS)}")
    tries = []
    for variant in order:
        with tempfile.TemporaryDirectory(prefix="attention-lab-load-gc-") as tmp:
            os.environ["ATTENTION_LAB_CACHE"] = str(Path(tmp) / "cache")  # SmolLM2 converted anew
            os.environ["ATTENTION_LAB_ROOMS"] = str(Path(tmp) / "rooms.sqlite3")  # a fresh room store, as CI's
            port, loadavg = free_port(), lt.loadavg()
            with open(Path(tmp) / "server.log", "w+") as log:
                proc = start_server(port, log, launcher=("-c", WRAPPER, variant))
                try:
                    result = asyncio.run(one_try(variant, port, proc.pid, args))
                finally:
                    stop_server(proc)
        result["loadavg_before"] = loadavg
        tries.append(result)
        d, b, a = (result[f"others_{k}_load"] for k in ("during", "before", "after"))
        print(f"{variant:>16}: load {result['load_s']} s; others p50/p95 before {b.get('p50_ms')}/{b.get('p95_ms')} "
              f"during {d.get('p50_ms')}/{d.get('p95_ms')} after {a.get('p50_ms')}/{a.get('p95_ms')} ms (n {d['n']}); "
              f"rss {result['rss_mb']}; errors {result['errors']}; load {loadavg}", flush=True)  # fmt: skip
    out = {
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git": lt.git_version(),
        "machine": {"cores": os.cpu_count()},
        "config": {k: getattr(args, k) for k in ("sessions", "before", "after", "seed")},
        "tries": tries,
    }
    if args.out:
        args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
