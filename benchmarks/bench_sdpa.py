"""PyTorch's SDPA backends (flash, memory-efficient, cuDNN, math) next to a naive matmul-softmax-matmul: per shape,
median ms, TFLOP/s (4·B·H·n²·d, halved when causal), peak extra memory, and the largest difference from the naive
output. Backends that cannot run on the device are listed with PyTorch's reason.

    python benchmarks/bench_sdpa.py                       # CPU: table + results/bench_sdpa.json ("cpu" entry)
    python benchmarks/bench_sdpa.py --device cuda         # CUDA: fills the "cuda" entry, keeps the "cpu" one
    python benchmarks/bench_sdpa.py --threads 1 --reps 3  # what produced the committed CPU figures
    python benchmarks/bench_sdpa.py --device cuda --shapes material --out results/bench_sdpa_material.json
                                                          # the study material's B = 4, H = 32, N = 4096, D = 128

Peak memory: on CUDA the allocator's peak above what was allocated before the call; on CPU the process's peak
resident memory above the level before the call (see core/timing.py), after handing freed heap memory back to
the kernel so a kernel cannot hide in memory an earlier one freed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch

from benchmarks.cli import add_run_options, apply_run_options
from core.flash_attention_measured import MATERIAL_SHAPE
from core.results import load_result, results_path, save_result
from core.sdpa_gqa import backends as sb
from core.timing import human_bytes, machine_info

ROOT = Path(__file__).resolve().parents[1]

RESULTS = results_path(sb.RESULT_NAME)
NO_GPU = "not measured: no GPU on this machine"


def default_shapes(device: str) -> list[sb.AttentionShape]:
    if device == "cpu":
        # float32 (CPU kernels have no fast half precision here); sizes that keep one run under ~2 minutes on 2 cores
        return [sb.AttentionShape(1, 8, n, 64) for n in (512, 1024, 2048, 4096)] + [
            sb.AttentionShape(1, 8, 4096, 64, causal=True)
        ]
    shapes = []
    for d in (64, 128):
        shapes += [sb.AttentionShape(2, 16, n, d, dtype="float16") for n in (1024, 4096, 16384)]
    shapes += [sb.AttentionShape(2, 16, n, 128, causal=True, dtype="bfloat16") for n in (4096, 16384)]
    shapes += [sb.AttentionShape(2, 16, 4096, 64, dtype="float32")]  # which fused kernels take float32?
    return shapes


def material_shapes() -> list[sb.AttentionShape]:
    """The study material's benchmark shape, in float16 and in the float32 its code times."""
    m = MATERIAL_SHAPE
    return [
        sb.AttentionShape(m["batch"], m["heads"], m["seq_len"], m["head_dim"], dtype=dtype)
        for dtype in ("float16", "float32")
    ]


def fmt(v, spec: str) -> str:
    """format(v, spec), or a dash of the same width for a missing value."""
    width = int("".join(c for c in spec.split(".")[0] if c.isdigit()) or 0)
    return "-".rjust(width) if v is None else format(v, spec)


def print_table(rows: list[dict]) -> None:
    print(f"{'shape':<40} {'backend':<10} {'ms':>9} {'TFLOP/s':>8} {'peak mem':>11} {'max|diff|':>9}  status")
    for r in rows:
        shape = sb.AttentionShape(r["batch"], r["heads"], r["seq_len"], r["head_dim"], r["causal"], r["dtype"])
        print(
            f"{shape.label():<40} {r['backend']:<10} {fmt(r['ms'], '9.2f')} {fmt(r['tflops'], '8.3f')} "
            f"{human_bytes(r['peak_bytes']) if r['status'] == 'ok' else '-':>11} "
            f"{fmt(r['max_abs_diff_vs_naive'], '9.1e')}  {r['status']}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument(
        "--shapes", choices=["default", "material"], default="default", help="material: B=4 H=32 N=4096 D=128"
    )
    add_run_options(ap, RESULTS, budget_s=10.0)
    args = ap.parse_args()
    apply_run_options(args)

    before = machine_info(args.device)
    avail = sb.availability(args.device)
    print(
        f"device: {before['device']} ({before['device_name']}), torch {before['torch']}, "
        f"{before['torch_threads']} threads, load average {before['loadavg_1min']}"
    )
    for a in avail:
        print(f"  {a['backend']:<10} {'available' if a['available'] else 'UNAVAILABLE: ' + a['reason']}")
    shapes = material_shapes() if args.shapes == "material" else default_shapes(args.device)

    def progress(frac: float, label: str) -> None:
        print(f"  [{frac:4.0%}] {label}", file=sys.stderr, flush=True)

    rows = sb.benchmark(shapes, args.device, reps=args.reps, budget_s=args.budget_s, progress=progress)
    after = machine_info(args.device)
    print_table(rows)
    print(f"load average after: {after['loadavg_1min']}")

    run = {
        "command": "python benchmarks/bench_sdpa.py " + " ".join(sys.argv[1:]),
        "date": before["date"],
        "device": args.device,
        "device_name": before["device_name"],
        "torch": before["torch"],
        "cuda_version": before["cuda"],
        "torch_threads": before["torch_threads"],
        "loadavg_1min_before": before["loadavg_1min"],
        "loadavg_1min_after": after["loadavg_1min"],
        "cpu_count": before["cpu_count"],
        "reps": args.reps,
        "budget_s": args.budget_s,
        "flop_formula": "4*B*H*n*n*d, halved for causal",
        "availability": avail,
        "rows": rows,
    }
    results = load_result(args.out) or {}
    results[args.device] = run
    if "cuda" not in results:
        results["cuda"] = NO_GPU if not torch.cuda.is_available() else "not measured yet: run with --device cuda"
    written = save_result(args.out, {k: results[k] for k in ("cpu", "cuda") if k in results})
    print(f"wrote {os.path.relpath(written, ROOT)}")


if __name__ == "__main__":
    main()
