"""What one page's runs cost in a fresh process, headless (AppTest, as the page tests open a link): the first run
(what a fresh server's first visitor of the page waits for, less the server's own start: with Python's garbage
collections during it, their number and seconds), then reruns; optionally
the seconds of each spent in named functions, and a profile of the first run (cProfile, the script's thread).

    python scripts/page_run_cost.py encoder-decoder --query part=stack \\
        --time core.models.examples.architecture_table app.models.show_examples --repeat 3
    python scripts/page_run_cost.py positions --profile 30        # the first run's 30 costliest calls, cumulative

Each try is a fresh interpreter (the process's caches and imports start empty). --time wraps a module's attribute,
so it counts the calls that reach the function through its module (`examples.architecture_table(...)`), not those
of a name imported from it. Run timed figures under the measure lock (`flock /tmp/attention-lab-measure.lock ...`);
the load is printed and recorded."""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _wrap(dotted: str, spent: dict[str, float]) -> None:
    module_name, name = dotted.rsplit(".", 1)
    module = importlib.import_module(module_name)
    fn = getattr(module, name)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[dotted] += time.perf_counter() - start

    setattr(module, name, timed)


def one_try(page: str, query: dict, names: list[str], reruns: int, profile: int) -> dict:
    """In this process (a fresh one): the page's first run and `reruns` reruns."""
    import cProfile
    import io
    import pstats

    from streamlit.runtime.scriptrunner import script_runner

    from tests.apptest_helpers import run_view

    spent = dict.fromkeys(names, 0.0)
    for dotted in names:
        _wrap(dotted, spent)
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:  # AppTest runs the script in its own thread: profile that thread's run
        run_thread = script_runner.ScriptRunner._run_script_thread

        def profiled(self, *args, **kwargs):
            profiler.enable()
            try:
                return run_thread(self, *args, **kwargs)
            finally:
                profiler.disable()

        script_runner.ScriptRunner._run_script_thread = profiled
    collections = {"n": 0, "full": 0, "s": 0.0}  # Python's collections during the first run, and their seconds
    began: list[float] = []

    def counted(phase: str, info: dict) -> None:
        if phase == "start":
            began.append(time.perf_counter())
            collections["n"] += 1
            collections["full"] += info["generation"] == 2
        elif began:
            collections["s"] += time.perf_counter() - began.pop()

    gc.callbacks.append(counted)
    start = time.perf_counter()
    at = run_view(page, query)
    first = time.perf_counter() - start
    gc.callbacks.remove(counted)
    if profiler is not None:
        script_runner.ScriptRunner._run_script_thread = run_thread
    first_spent = dict(spent)
    runs, rerun_spent = [], {n: [] for n in names}
    for _ in range(reruns):
        spent.update(dict.fromkeys(names, 0.0))
        start = time.perf_counter()
        at.run()
        runs.append(time.perf_counter() - start)
        for n in names:
            rerun_spent[n].append(spent[n])
    result = {
        "first_run_s": round(first, 3),
        "first_run_in_ms": {n: round(s * 1000, 2) for n, s in first_spent.items()},
        "first_run_collections": {**collections, "s": round(collections["s"], 3)},
        "rerun_median_ms": round(statistics.median(runs) * 1000, 1) if runs else None,
        "rerun_median_in_ms": {n: round(statistics.median(v) * 1000, 2) for n, v in rerun_spent.items() if v},
        "exceptions": [e.value for e in at.exception],
    }
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(profile)
        result["profile"] = out.getvalue()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("page", help="the page's URL path ('home' for the landing page)")
    parser.add_argument("--query", nargs="*", default=[], help="the link's parameters, key=value")
    parser.add_argument("--time", nargs="*", default=[], help="module.function names whose seconds to count")
    parser.add_argument("--reruns", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes (medians reported)")
    parser.add_argument("--profile", type=int, default=0, help="print the first run's N costliest calls (1 try)")
    parser.add_argument("--out", type=Path, help="add the run to this results file (a list of runs)")
    parser.add_argument("--label", default="")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    query = dict(q.split("=", 1) for q in args.query)
    if args.child:
        print(json.dumps(one_try(args.page, query, args.time, args.reruns, args.profile), ensure_ascii=False))
        return 0
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    tries = []
    for _ in range(1 if args.profile else args.repeat):
        done = subprocess.run(
            [sys.executable, __file__, *(argv if argv is not None else sys.argv[1:]), "--child"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            return 1
        tries.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(tries[-1].pop("profile", "") + json.dumps(tries[-1], ensure_ascii=False), flush=True)
    summary = {
        "page": "/" + args.page,
        "query": query,
        "load_before": load_before,
        "load_after": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
        "median_first_run_s": statistics.median(t["first_run_s"] for t in tries),
        "median_first_run_collection_s": statistics.median(t["first_run_collections"]["s"] for t in tries),
        "median_first_run_in_ms": {n: statistics.median(t["first_run_in_ms"][n] for t in tries) for n in args.time},
        "median_rerun_ms": statistics.median(t["rerun_median_ms"] for t in tries) if args.reruns else None,
        "median_rerun_in_ms": {n: statistics.median(t["rerun_median_in_ms"][n] for t in tries) for n in args.time}
        if args.reruns
        else {},
        "tries": tries,
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "tries"}, ensure_ascii=False))
    if args.out:
        from core.results import add_run

        command = "python scripts/page_run_cost.py " + " ".join(argv if argv is not None else sys.argv[1:])
        add_run(args.out, args.label, command, summary)
    return 1 if any(t["exceptions"] for t in tries) else 0


if __name__ == "__main__":
    sys.exit(main())
