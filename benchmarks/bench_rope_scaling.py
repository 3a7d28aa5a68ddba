"""Speed and payload of the scaled-RoPE formula plots (target: plots up to 131,072 positions render in < 1 s,
and what goes to the browser is downsampled).

    python benchmarks/bench_rope_scaling.py            # prints a table, writes results/bench_rope_scaling.json

For each factor, cold (no Streamlit cache): core arrays for all six methods (transformers' RoPE functions,
q.k for every distance 0..131,072, log-binned) + plotly figures + fig.to_json(), i.e. exactly what
app/views/rope_scaling/formulas.py computes (core.rope_scaling.formulas) and Streamlit serialises
(viz.rope_scaling). Imports core and viz only; the figure words are read from the English catalog file. Reports the median of --reps runs and the JSON size.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
import time
import tomllib
from pathlib import Path

import torch

from core.results import save_result
from core.rope_scaling import formulas
from viz import rope_scaling as figures

ROOT = Path(__file__).resolve().parents[1]

MAX_DISTANCE = 131072
TARGET_S = 1.0


def english_text() -> dict[str, str]:
    """The figure words in English ([rope_scaling.figure] of app/locales/en.toml)."""
    with open(ROOT / "app" / "locales" / "en.toml", "rb") as f:
        return {k: v for k, v in tomllib.load(f)["rope_scaling"]["figure"].items() if isinstance(v, str)}


def one_view(factor: float, t) -> tuple[float, int]:
    t0 = time.perf_counter()
    freq = formulas.frequency_view(factor, MAX_DISTANCE)
    decay = formulas.decay_view(factor, MAX_DISTANCE)
    payload = figures.wavelength_figure(freq, t).to_json() + figures.ratio_figure(freq, t).to_json()
    payload += figures.decay_figure(decay, t).to_json()
    return time.perf_counter() - t0, len(payload)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--factors", nargs="+", type=float, default=[2.0, 4.0, 8.0, 32.0])
    args = ap.parse_args()
    load_before = os.getloadavg()[0]  # other work on the machine inflates the times, never the bytes
    text = english_text()
    t = lambda key, **fmt: text[key].format(**fmt)  # noqa: E731
    one_view(4.0, t)  # warm-up: imports, first transformers calls
    t0 = time.perf_counter()
    res = formulas.resolution_view(4.0)  # computed once per process, as on the page
    res_json = figures.resolution_figure(res, t, "fastest_pair").to_json()
    res_s = time.perf_counter() - t0
    rows = []
    print(f"{'factor':>7} {'p50 s':>8} {'max s':>8} {'KB':>7}")
    for f in args.factors:
        times, size = [], 0
        for _ in range(args.reps):
            s, size = one_view(f, t)
            times.append(s)
        rows.append(
            {
                "factor": f,
                "p50_s": round(statistics.median(times), 3),
                "max_s": round(max(times), 3),
                "json_kb": round(size / 1024, 1),
            }
        )
        print(f"{f:>7g} {rows[-1]['p50_s']:>8.3f} {rows[-1]['max_s']:>8.3f} {rows[-1]['json_kb']:>7.1f}")
    print(f"resolution figure (25 factors x 6 methods): {res_s:.3f} s, {len(res_json) / 1024:.1f} KB")
    worst = max(r["p50_s"] for r in rows)
    print(
        f"target: formula plots to 131,072 positions in < {TARGET_S:g} s -> worst p50 {worst:.3f} s "
        f"({'met' if worst < TARGET_S else 'NOT met'})"
    )
    out = {
        "command": "python benchmarks/bench_rope_scaling.py " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "device": f"cpu: {platform.machine()}, {torch.get_num_threads()} threads",
        "torch": torch.__version__,
        "loadavg_1min_before": round(load_before, 2),
        "loadavg_1min_after": round(os.getloadavg()[0], 2),
        "max_distance": MAX_DISTANCE,
        "views": rows,
        "resolution_s": round(res_s, 3),
        "target_s": TARGET_S,
    }
    save_result("bench_rope_scaling", out)


if __name__ == "__main__":
    main()
