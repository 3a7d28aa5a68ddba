"""Softmax against linear attention: time against sequence length up to 16k with the fitted log-log slopes
(about 2 for softmax, about 1 for linear), and generation tokens/s up to an 8k context for the RNN form of linear
attention, softmax with a KV cache and softmax without one, with their ratios.

    python benchmarks/bench_linear.py                          # prints both tables, writes results/bench_linear.json
    python benchmarks/bench_linear.py --threads 1              # what produced the committed CPU figures
    python benchmarks/bench_linear.py --max-n 4096 --max-context 2048    # quicker
    python benchmarks/bench_linear.py --device cuda            # on a GPU

Timing: random (1, heads, n, d) q, k, v; softmax is torch's SDPA (fused: the n x n matrix is never stored, but the
work is still n² d), linear is core.linear_attention (φ(K)ᵀV first). Median of up to --reps calls after one warm-up.
Generation: one attention layer of SmolLM2's width (576 = 9 heads x 64) with random weights
(core/linear_attention/decoding.py);
the prompt is read in one untimed pass, then up to --steps tokens are generated one by one and timed; the
median speed of up to --trials such runs is reported.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from benchmarks.cli import add_run_options, apply_run_options
from core.linear_attention import measure as ls
from core.results import results_path, save_result
from core.timing import machine_info

ROOT = Path(__file__).resolve().parents[1]

RESULTS = results_path(ls.RESULT_NAME)


def fmt(v, spec: str) -> str:
    width = int("".join(c for c in spec.split(".")[0] if c.isdigit()) or 0)
    return "-".rjust(width) if v is None else format(v, spec)


def progress(frac: float, label: str) -> None:
    print(f"  [{frac:4.0%}] {label}", file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--min-n", type=int, default=256)
    ap.add_argument("--max-n", type=int, default=16384)
    ap.add_argument("--heads", type=int, default=1)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--causal", action="store_true", help="time causal attention (prefix sums for linear)")
    ap.add_argument("--reps", type=int, default=15, help="timed calls per size (fewer once --budget-s is spent)")
    ap.add_argument("--contexts", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192])
    ap.add_argument("--max-context", type=int, default=None, help="drop contexts above this")
    ap.add_argument("--steps", type=int, default=32, help="tokens generated per trial")
    ap.add_argument("--trials", type=int, default=5, help="generation runs per cell (median; fewer past --budget-s)")
    ap.add_argument(
        "--deadline-s", type=float, default=None, help="generation: start no context or mode that would end later"
    )
    add_run_options(ap, RESULTS, budget_s=2.0)
    args = ap.parse_args()
    apply_run_options(args)
    contexts = [c for c in args.contexts if args.max_context is None or c <= args.max_context]

    before = machine_info(args.device)
    print(
        f"device: {before['device']} ({before['device_name']}), torch {before['torch']}, "
        f"{before['torch_threads']} threads, load average {before['loadavg_1min']}"
    )

    sizes = ls.power_of_two_sizes(args.min_n, args.max_n)
    rows = ls.time_scaling(
        sizes,
        heads=args.heads,
        head_dim=args.head_dim,
        causal=args.causal,
        reps=args.reps,
        budget_s=args.budget_s,
        device=args.device,
        progress=progress,
    )
    slopes = ls.fit_slopes(rows)
    upper = ls.large_n_slopes(rows)
    print(
        f"\nattention time, 1 x {args.heads} head(s) x n x {args.head_dim}, {'causal' if args.causal else 'non-causal'}"
    )
    print(f"{'n':>7} {'softmax ms':>11} {'linear ms':>10} {'softmax/linear':>15}")
    for r in rows:
        ratio = r["softmax_ms"] / r["linear_ms"] if r["linear_ms"] else None
        print(f"{r['n']:>7,} {fmt(r['softmax_ms'], '11.3f')} {fmt(r['linear_ms'], '10.3f')} {fmt(ratio, '15.1f')}")
    print(
        f"log-log slope (fit on n >= {slopes['fit_from']:,}): softmax {fmt(slopes['softmax'], '.2f')}, "
        f"linear {fmt(slopes['linear'], '.2f')}   (2 = quadratic, 1 = linear)"
    )
    if upper["fit_from"] is not None:
        print(
            f"log-log slope (upper half of the sizes, n >= {upper['fit_from']:,}): softmax "
            f"{fmt(upper['softmax'], '.2f')}, linear {fmt(upper['linear'], '.2f')}"
        )

    gen = ls.generation_table(
        contexts,
        steps=args.steps,
        trials=args.trials,
        budget_s=args.budget_s,
        deadline_s=args.deadline_s,
        device=args.device,
        progress=progress,
    )
    print("\ngeneration after a prompt of `context` tokens, one attention layer (d_model 576, 9 heads), tokens/s")
    print(f"{'context':>8} {'RNN (linear)':>13} {'KV cache':>10} {'no cache':>10} {'RNN/KV':>8} {'KV/no cache':>12}")
    for r in gen:
        print(
            f"{r['context']:>8,} {fmt(r['rnn_tok_s'], '13.1f')} {fmt(r['kv_cache_tok_s'], '10.1f')} "
            f"{fmt(r['no_cache_tok_s'], '10.2f')} {fmt(r['rnn_over_kv_cache'], '8.2f')} "
            f"{fmt(r['kv_cache_over_no_cache'], '12.1f')}"
        )
    after = machine_info(args.device)
    print(f"load average after: {after['loadavg_1min']}")

    out = {
        "command": "python benchmarks/bench_linear.py " + " ".join(sys.argv[1:]),
        "date": before["date"],
        "device": args.device,
        "device_name": before["device_name"],
        "torch": before["torch"],
        "torch_threads": before["torch_threads"],
        "cpu_count": before["cpu_count"],
        "loadavg_1min_before": before["loadavg_1min"],
        "loadavg_1min_after": after["loadavg_1min"],
        "scaling": {
            "heads": args.heads,
            "head_dim": args.head_dim,
            "causal": args.causal,
            "reps": args.reps,
            "budget_s": args.budget_s,
            "rows": rows,
            "slopes": slopes,
            "slopes_upper_half": upper,
        },
        "generation": {
            "d_model": 576,
            "n_heads": 9,
            "steps": args.steps,
            "trials": args.trials,
            "budget_s": args.budget_s,
            "rows": gen,
        },
    }
    print(f"wrote {os.path.relpath(save_result(args.out, out), ROOT)}")


if __name__ == "__main__":
    main()
