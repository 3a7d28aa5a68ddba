"""The memory and time estimate /models shows before a model runs (core/models/local.py run_estimate), against
what a run of 512 tokens really takes: the shipped models (MiniLM, SmolLM2) and a tiny random model of every family
of tests/tiny_models.py (their position tables widened to 1,024 so that 512 tokens fit).

    python benchmarks/run_estimate.py                    # -> results/run_estimate.json (about 4 minutes)
    python benchmarks/run_estimate.py --models llama gemma2 --tokens 256

What is measured is what a page does with a text: model.run(batch) (the Trace: q and k of every layer, the residual
stream, a decoder's logits) and one layer's weights of every head recomputed for display (layer_attention), on one
sequence of n ordinary token ids. Each model runs in a process of its own (one torch thread, as app/serving.py
sets for the server, with glibc told to map every block of 1 MiB or more on its own as the server is:
core/timing.py map_large_blocks says why), loaded, its loading check made (which times the pass the time estimate scales), warmed up by
one run of 16 tokens, then:
  peak    the process's peak extra resident memory during the run (core/timing.py peak_rss_delta: VmHWM after a
          reset, minus VmRSS before, glibc's free heap trimmed first), the Trace kept: the median of 3 runs
  seconds the fastest of 5 runs after one warm-up (the loading check also keeps the fastest of its timed runs:
          other work on the machine only ever adds time), on the loading check's clock (core/models/local.py
          run_clock: this thread's CPU time, as torch runs on it alone), which a busy machine does not inflate;
          the wall clock's fastest beside it (measured_wall_seconds, wall_time_ratio)
  live    the most bytes of tensors torch held at once in one more run (its profiler's memory events): the part
          of the peak the estimate counts tensor by tensor; the resident peak adds what glibc's heap keeps
against the estimate's run part (everything but the weights, which are resident before the run) and its time.
The targets: the memory estimate within 25 % of the measured peak, the time within 2x of the measured seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("minilm", "smollm2")
MEMORY_WITHIN = 0.25  # |estimate / measured - 1|
TIME_WITHIN = 2.0  # max(estimate / measured, measured / estimate)
REPS = 3
TIMED_REPS = 5


def load(name: str, folder: Path):
    """(model, capabilities) of a shipped model or a tiny family built in `folder`, its loading check made."""
    from core.models import local, registry

    if name in SHIPPED:
        model = registry.RECORDS[name].load()
        caps = registry.capabilities(name)
    else:
        from tests.tiny_models import build, longer_positions

        build(name, folder, **longer_positions(name, 1024))
        caps = local.describe_folder(folder)
        model = local.load_folder(folder)
    model.parity = local.parity(model)  # as the registry does on loading (own folders): the time estimate's pass
    return model, caps


def measure_one(name: str, n_tokens: int) -> dict:
    from core.models import local
    from core.timing import map_large_blocks, peak_rss_delta, torch_live_peak

    torch.set_num_threads(1)
    map_large_blocks()  # as app/serving.py sets the server's process
    with tempfile.TemporaryDirectory() as tmp:
        model, caps = load(name, Path(tmp))
    ids = model.ordinary_ids()
    n = min(n_tokens, model.max_positions)
    generator = torch.Generator().manual_seed(0)
    batch = model.batch_of_ids([ids[torch.randint(len(ids), (n,), generator=generator)].tolist()])
    warm = model.batch_of_ids([ids[:16].tolist() if len(ids) >= 16 else (ids.tolist() * 16)[:16]])

    def page_run(b):
        trace = model.run(b)
        trace.layer_attention(0)
        return trace

    page_run(warm)
    peaks = []
    for _ in range(REPS):
        trace, peak = peak_rss_delta(lambda: page_run(batch))
        del trace
        peaks.append(peak)
    page_run(batch)
    seconds = cpu_seconds = float("inf")
    clock = local.run_clock()  # the loading check's clock: this thread's CPU time (one torch thread)
    for _ in range(TIMED_REPS):  # the fastest, as the loading check times its runs: a busy machine only adds time
        start, start_cpu = time.perf_counter(), clock()
        page_run(batch)
        seconds = min(seconds, time.perf_counter() - start)
        cpu_seconds = min(cpu_seconds, clock() - start_cpu)
    live = torch_live_peak(lambda: page_run(batch))
    run = local.run_estimate(caps, n, model)
    memory = run.memory
    measured = statistics.median(peaks) if None not in peaks else None
    return {
        "model": name,
        "family": caps.model_type,
        "attention": model.attn_implementation,
        "tokens": n,
        "estimate_run_MiB": round(memory.run_bytes / 2**20, 2),
        "estimate_parts_MiB": {k: round(v, 2) for k, v in memory.mib().items()},
        "measured_peak_MiB": None if measured is None else round(measured / 2**20, 2),
        "measured_peaks_MiB": [None if p is None else round(p / 2**20, 2) for p in peaks],
        "torch_live_peak_MiB": round(live / 2**20, 2),
        "memory_ratio": None if not measured else round(memory.run_bytes / measured, 3),
        "estimate_seconds": None if run.seconds is None else round(run.seconds, 4),
        "measured_seconds": round(cpu_seconds, 4),
        "measured_wall_seconds": round(seconds, 4),
        "time_ratio": None if run.seconds is None else round(run.seconds / cpu_seconds, 3),
        "wall_time_ratio": None if run.seconds is None else round(run.seconds / seconds, 3),
    }


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> int:
    from benchmarks.cli import add_run_options
    from core.results import save_result
    from core.timing import machine_info
    from tests.tiny_models import FAMILIES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=[*SHIPPED, *sorted(FAMILIES)])
    ap.add_argument("--tokens", type=int, default=512)
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child process: one model, its row as JSON on stdout
    add_run_options(ap, ROOT / "results" / "run_estimate.json", device=False)
    args = ap.parse_args()
    if args.one:
        print("ROW " + json.dumps(measure_one(args.one, args.tokens)), flush=True)
        return 0
    started, load_before = machine_info("cpu"), uptime()
    rows = []
    for name in args.models:
        t0 = time.perf_counter()
        child = subprocess.run(
            [sys.executable, __file__, "--one", name, "--tokens", str(args.tokens)],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        found = [line[4:] for line in child.stdout.splitlines() if line.startswith("ROW ")]
        if child.returncode or not found:
            row = {"model": name, "error": (child.stderr.strip().splitlines() or ["no output"])[-1][:300]}
        else:
            row = json.loads(found[0]) | {"process_seconds": round(time.perf_counter() - t0, 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    measured = [r for r in rows if "error" not in r]
    memory_ok = [r for r in measured if r["memory_ratio"] is not None and abs(r["memory_ratio"] - 1) <= MEMORY_WITHIN]
    time_ok = [
        r for r in measured if r["time_ratio"] is not None and max(r["time_ratio"], 1 / r["time_ratio"]) <= TIME_WITHIN
    ]
    result = {
        "command": " ".join(["python benchmarks/run_estimate.py", *sys.argv[1:]]),
        "date": started["date"],
        "machine": started,
        "uptime_before": load_before,
        "uptime_after": uptime(),
        "tokens": args.tokens,
        "targets": {"memory_within": MEMORY_WITHIN, "time_within_factor": TIME_WITHIN},
        "summary": {
            "models": len(rows),
            "errors": len(rows) - len(measured),
            "memory_within_target": len(memory_ok),
            "time_within_target": len(time_ok),
            "memory_ratio_range": [
                min(r["memory_ratio"] for r in measured),
                max(r["memory_ratio"] for r in measured),
            ]
            if measured
            else None,
            "time_ratio_range": [min(r["time_ratio"] for r in measured), max(r["time_ratio"] for r in measured)]
            if measured
            else None,
        },
        "rows": rows,
    }
    print(json.dumps(result["summary"]))
    print("wrote", save_result(args.out, result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
