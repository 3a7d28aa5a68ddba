"""What Streamlit's post-run garbage collection costs per rerun, and what each fix saves: one visitor, no load.

Four servers, one after the other, each started as `bash scripts/dev.sh run` starts it: the heap frozen after
start-up (app/serving.py) or not (ATTENTION_LAB_GC_FREEZE=0), crossed with Streamlit's `runner.postScriptGC` on or
off. On each, one session (scripts/load_test.py's websocket client) reruns the landing page and pastes new
sentences on /attention and picks heads; the median time from BackMsg to script_finished is reported per action,
with the server's CPU seconds per rerun.

    python benchmarks/rerun_gc.py            # -> results/rerun_gc.json
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path

from streamlit.proto.ClientState_pb2 import ClientState

from core.results import save_result
from core.timing import machine_info
from scripts.app_server import free_port, start_server, stop_server
from scripts.load_test import StreamlitSession, act, cpu_s, loadavg, process_tree, rss_mb

VARIANTS = {
    "streamlit default (full collection after every run)": ("0", "true"),
    "postScriptGC off": ("0", "false"),
    "heap frozen after start-up (app/serving.py)": ("1", "true"),
    "heap frozen and postScriptGC off": ("1", "false"),
}


async def measure(port: int, server_pid: int, reps: int) -> dict:
    s = StreamlitSession(port, 300)
    rng = random.Random(0)
    times: dict[str, list[float]] = {"home rerun": [], "attention type": [], "attention head": []}
    try:
        await s.open("attention")  # model load and first imports: not measured
        for n in range(3):
            await act(s, "attention", "type", rng, 0, n)
        await act(s, "attention", "view", rng, 0, 0)
        cpu0, runs = sum(cpu_s(p) for p in process_tree(server_pid)), 0
        for n in range(reps):
            times["attention type"].append((await act(s, "attention", "type", rng, 0, 100 + n)).ms)
            times["attention head"].append((await act(s, "attention", "head", rng, 0, 100 + n)).ms)
            runs += 2
        await s.navigate("")
        for _ in range(reps):
            times["home rerun"].append(
                (await s.rerun(ClientState(query_string=s.query, page_script_hash=s.page_hash))).ms
            )
            runs += 1
        cpu = sum(cpu_s(p) for p in process_tree(server_pid)) - cpu0
    finally:
        await s.close()
    out = {k: {"p50_ms": round(statistics.median(v), 1), "min_ms": round(min(v), 1)} for k, v in times.items()}
    out["server_cpu_ms_per_rerun"] = round(1000 * cpu / runs, 1)
    out["rss_mb"] = rss_mb(server_pid)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--out", default="rerun_gc")
    args = parser.parse_args(argv)
    result = {
        "command": " ".join(["python", "benchmarks/rerun_gc.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": machine_info("cpu"),
        "variants": {},
    }
    for name, (freeze, post_gc) in VARIANTS.items():
        os.environ["ATTENTION_LAB_GC_FREEZE"] = freeze
        port = free_port()
        load_before = loadavg()
        t0 = time.monotonic()
        with open(Path("/tmp") / "attention-lab-rerun-gc.log", "w") as log:
            server = start_server(port, log, extra_args=["--runner.postScriptGC", post_gc])
            try:
                row = asyncio.run(measure(port, server.pid, args.reps))
            finally:
                stop_server(server)
        row |= {"loadavg_before": load_before, "loadavg_after": loadavg(), "wall_s": round(time.monotonic() - t0)}
        result["variants"][name] = row
        print(
            f"{name:<55} home {row['home rerun']['p50_ms']:>6} ms  /attention type {row['attention type']['p50_ms']:>6}"
            f" ms  head {row['attention head']['p50_ms']:>6} ms  server CPU/rerun {row['server_cpu_ms_per_rerun']} ms"
            f"  load {load_before[0]:.1f}->{row['loadavg_after'][0]:.1f}",
            flush=True,
        )
    os.environ.pop("ATTENTION_LAB_GC_FREEZE", None)
    print(f"wrote {save_result(args.out, result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
