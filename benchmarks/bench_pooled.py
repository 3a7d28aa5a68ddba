"""Exact attention maps at long lengths (core/long_maps/pooled.py): time and peak extra memory of pooling every
head's softmax weights to 512 x 512 mean and max cells, never holding n x n, against one SDPA forward pass of the
same shape.

    python benchmarks/bench_pooled.py                      # CPU rows -> table + results/bench_pooled.json ("cpu")
    python benchmarks/bench_pooled.py --device cuda        # the GPU target shape, torch and Triton paths ("cuda")
    python benchmarks/bench_pooled.py --device cuda --parts sweep   # Triton block sizes and the fused statistics
                                                           # pass at 64k and 128k, each beside cuDNN (--sweep-grid)
    python benchmarks/bench_pooled.py --smollm2            # also SmolLM2: one layer's q/k of a long document
    python benchmarks/bench_pooled.py --parts target       # only the target rows (other parts keep their entry)

Timings on a shared machine are noisy: each part of the JSON records its own date and load average, and every
row keeps all its timed calls (ms_all) and the fastest (ms_min) next to the median (ms, the reported figure).

Targets:
  CPU:  B=1, H=8, n=8,192, d=64, float32: <= 5 s and <= 1 GB extra memory (causal and not).
  CUDA: B=1, H=32, n=65,536, d=128, bfloat16: <= 1.5 x one cuDNN SDPA forward of the same shape (114 ms on an H100,
        113.8 on an H200, non-causal), <= 1.3 x at n=131,072, and <= 256 MiB extra memory (core/long_maps/views.py).

Each row: median ms over --reps timed calls after one untimed call (which also measures memory), peak extra
memory (core/timing.py: the CUDA allocator's peak above what was allocated before; on CPU the process's peak
resident memory above the level before, after handing freed heap back to the kernel), and a correctness check:
the first and the last query bin of the result against an independent computation of exactly those rows
(float64 softmax over all keys, pooled with numpy's reduceat), so a fast wrong kernel cannot pass.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from benchmarks.cli import add_run_options, apply_run_options
from core.long_maps import pooled as pa
from core.long_maps.views import GPU_TARGET_BYTES, GPU_TARGET_RATIO
from core.sdpa_gqa import backends as sb
from core.timing import human_bytes, machine_info, peak_memory_delta, time_ms

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "results" / "bench_pooled.json"
NOT_MEASURED_HERE = (
    "not measured here: this machine has no GPU. Run `python benchmarks/bench_pooled.py --device "
    "cuda` on one to fill this entry"
)
OUT_SIZE = 512
GiB = 1024**3
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass(frozen=True)
class Shape:
    batch: int
    heads: int
    seq_len: int
    head_dim: int
    causal: bool
    dtype: str = "float32"
    kv_heads: int | None = None  # None: as many as query heads (no GQA)

    def label(self) -> str:
        kv = f" (kv {self.kv_heads})" if self.kv_heads and self.kv_heads != self.heads else ""
        return (
            f"B={self.batch} H={self.heads}{kv} n={self.seq_len:,} d={self.head_dim} {self.dtype}"
            f"{' causal' if self.causal else ''}"
        )


CPU_TARGET = {"seq_len": 8192, "heads": 8, "head_dim": 64, "limit_ms": 5000.0, "limit_bytes": 1 * GiB}
CUDA_TARGET = {
    "seq_len": 65536,
    "heads": 32,
    "head_dim": 128,
    "dtype": "bfloat16",
    "ratio_limit": GPU_TARGET_RATIO[65536],
    "limit_bytes": GPU_TARGET_BYTES,
    "reference_ms_h100": 114.0,
}
CHECK_LIMIT = 1e-5  # a swept configuration whose checked rows differ by more is wrong, however fast


def make_qkv(shape: Shape, device, seed: int = 0):
    """Random q, k, v (B, H, n, d) (k and v with kv_heads heads) created on `device` in the benchmark dtype."""
    g = torch.Generator(device=device).manual_seed(seed)
    kv = shape.kv_heads or shape.heads
    dtype = DTYPES[shape.dtype]

    def rand(h):
        return torch.randn(shape.batch, h, shape.seq_len, shape.head_dim, generator=g, device=device, dtype=dtype)

    return rand(shape.heads), rand(kv), rand(kv)


# --- the independent check ---------------------------------------------------------------------------------


def check_row_bins(q, k, result: pa.PooledAttention, causal: bool) -> float:
    """Largest |difference| between the result's first and last row of cells (mean and max) and the same cells
    computed directly: exact float64 softmax of those query rows over every key, one head at a time, then pooled
    over the key bins with numpy's reduceat (a cell's sum is the sum of its columns' sums over the rows, its max
    the max of their maxima). Absolute differences: every weight is at most 1.
    The float64 softmax runs on the inputs' device: a GPU does a 64k row of bins in milliseconds where the host
    took about 8 s (its elementwise numpy on one core), which the one GPU call cannot spare."""
    scale = q.shape[-1] ** -0.5
    rep = q.shape[1] // k.shape[1]
    col_edges, row_edges = result.col_edges, result.row_edges
    sizes = np.diff(col_edges)
    keys = torch.arange(k.shape[2], device=q.device)
    worst = 0.0
    for a in (0, len(row_edges) - 2):
        r0, r1 = int(row_edges[a]), int(row_edges[a + 1])
        for h in range(q.shape[1]):
            s = q[0, h, r0:r1].double() @ k[0, h // rep].double().T * scale
            if causal:
                s.masked_fill_(torch.arange(r0, r1, device=q.device)[:, None] < keys[None, :], -np.inf)
            w = torch.exp(s - s.max(-1, keepdim=True).values)
            w /= w.sum(-1, keepdim=True)
            col_sum, col_max = w.sum(0).cpu().numpy(), w.max(0).values.cpu().numpy()
            mean = np.add.reduceat(col_sum, col_edges[:-1]) / (sizes * (r1 - r0))
            mx = np.maximum.reduceat(col_max, col_edges[:-1])
            got_mean = result.mean[0, h, a].double().cpu().numpy()
            got_max = result.max[0, h, a].double().cpu().numpy()
            worst = max(worst, float(np.abs(got_mean - mean).max()), float(np.abs(got_max - mx).max()))
    return worst


# --- one measurement ---------------------------------------------------------------------------------------


def measure(
    path: str,
    shape: Shape,
    device,
    reps: int,
    budget_s: float | None,
    qkv=None,
    config: dict | None = None,
    check: bool = True,
) -> dict:
    """One row: `path` is "pooled/torch", "pooled/triton" (CUDA) or "sdpa/<backend>" (flash, cudnn, math...)."""
    device = torch.device(device)
    q, k, v = qkv if qkv is not None else make_qkv(shape, device)
    row = {
        "path": path,
        "label": shape.label(),
        **asdict(shape),
        "out_size": OUT_SIZE if path.startswith("pooled") else None,
        "status": "ok",
        "reason": None,
        "ms": None,
        "peak_bytes": None,
        "memory_method": None,
        "check_max_abs_diff": None,
        "config": config,
    }
    if path.startswith("sdpa/"):
        if (shape.kv_heads or shape.heads) != shape.heads:
            k, v = (t.repeat_interleave(shape.heads // shape.kv_heads, dim=1) for t in (k, v))
        call = lambda: sb.run_backend(path.split("/", 1)[1], q, k, v, shape.causal)  # noqa: E731
    elif path == "pooled/triton" and config is not None:
        from core.long_maps import triton_kernels as kernels

        edges = pa.bin_edges(shape.seq_len, OUT_SIZE)

        def call():
            mean, mx = kernels.pooled_attention(q, k, edges, edges, shape.causal, q.shape[-1] ** -0.5, config)
            return pa.PooledAttention(mean, mx, edges, edges, "triton")
    else:
        backend = path.split("/", 1)[1]
        call = lambda: pa.pooled_attention(q, k, OUT_SIZE, causal=shape.causal, backend=backend)  # noqa: E731
    if device.type == "cuda":
        torch.cuda.empty_cache()
    try:
        out, peak, how = peak_memory_delta(call, device)  # doubles as the warm-up call
        times = timed_calls(call, reps, device, budget_s)
    except sb.BackendUnavailable as err:
        row.update(status="unavailable", reason=str(err))
        return row
    except (RuntimeError, MemoryError) as err:
        if not sb._is_oom(err):
            raise
        row.update(status="out of memory", reason=" ".join(str(err).split())[:300])
        if device.type == "cuda":
            torch.cuda.empty_cache()
        return row
    row.update(
        ms=statistics.median(times),
        ms_min=min(times),
        ms_all=[round(t, 1) for t in times],
        peak_bytes=peak,
        memory_method=how,
    )
    if path.startswith("pooled"):
        row["backend_used"] = out.backend
        if check:
            row["check_max_abs_diff"] = check_row_bins(q, k, out, shape.causal)
    return row


def timed_calls(call, reps: int, device, budget_s: float | None) -> list[float]:
    """Milliseconds of each of `reps` calls (fewer once budget_s is spent, at least one). The median is the
    figure; the minimum is kept too: on a shared machine other work only ever adds time."""
    times, spent = [], 0.0
    for _ in range(max(1, reps)):
        times.append(time_ms(call, reps=1, warmup=0, device=device))
        spent += times[-1] / 1e3
        if budget_s is not None and spent >= budget_s:
            break
    return times


def print_row(r: dict) -> None:
    ms = "-" if r["ms"] is None else f"{r['ms']:10.1f}"
    fastest = "" if r.get("ms_min") is None else f" (min {r['ms_min']:.1f})"
    diff = "" if r.get("check_max_abs_diff") is None else f"  check {r['check_max_abs_diff']:.1e}"
    cfg = "" if not r.get("config") else f"  {r['config']}"
    print(
        f"{r['label']:<46} {r['path']:<14} {ms:>10} ms{fastest:<16} {human_bytes(r['peak_bytes']):>11}  "
        f"{r['status']}{diff}{cfg}",
        flush=True,
    )


# --- CPU ----------------------------------------------------------------------------------------------------


def cpu_target(args) -> dict:
    t = CPU_TARGET
    rows, target = [], {"limit_ms": t["limit_ms"], "limit_bytes": t["limit_bytes"]}
    for causal in (False, True):
        shape = Shape(1, t["heads"], t["seq_len"], t["head_dim"], causal)
        qkv = make_qkv(shape, "cpu")
        row = measure("pooled/torch", shape, "cpu", args.reps, args.budget_s, qkv)
        ref = measure("sdpa/flash", shape, "cpu", args.reps, args.budget_s, qkv, check=False)
        for r in (row, ref):
            print_row(r)
        rows += [row, ref]
        target["causal" if causal else "non_causal"] = {
            "ms": row["ms"],
            "ms_min": row["ms_min"],
            "peak_bytes": row["peak_bytes"],
            "sdpa_flash_ms": ref["ms"],
            "time_met": row["ms"] is not None and row["ms"] <= t["limit_ms"],
            "memory_met": row["peak_bytes"] is not None and row["peak_bytes"] <= t["limit_bytes"],
        }
    return {"summary": target, "rows": rows}


def cpu_sizes(args) -> dict:
    rows = []
    for n in args.sizes:
        for causal in (False, True):
            shape = Shape(1, CPU_TARGET["heads"], n, CPU_TARGET["head_dim"], causal)
            qkv = make_qkv(shape, "cpu")
            # the largest sizes take tens of seconds per call: one timed call is enough to place them
            reps = args.reps if n <= CPU_TARGET["seq_len"] else 1
            row = measure("pooled/torch", shape, "cpu", reps, args.budget_s, qkv)
            ref = measure("sdpa/flash", shape, "cpu", reps, args.budget_s, qkv, check=False)
            for r in (row, ref):
                print_row(r)
            rows += [row, ref]
    return {"rows": rows}


# --- CUDA ---------------------------------------------------------------------------------------------------


def cuda_target(args) -> dict:
    t = CUDA_TARGET
    rows, target = (
        [],
        {"ratio_limit": t["ratio_limit"], "limit_bytes": t["limit_bytes"], "reference_ms_h100": t["reference_ms_h100"]},
    )
    paths = ("pooled/triton",) if args.triton_only else ("pooled/triton", "pooled/torch")
    for causal in (False, True):
        shape = Shape(1, t["heads"], t["seq_len"], t["head_dim"], causal, t["dtype"])
        qkv = make_qkv(shape, "cuda")
        sdpa = measure("sdpa/cudnn", shape, "cuda", args.reps, args.budget_s, qkv, check=False)
        print_row(sdpa)
        found = {"sdpa_cudnn_ms": sdpa["ms"], "sdpa_cudnn_peak_bytes": sdpa["peak_bytes"]}
        rows.append(sdpa)
        for path in paths:
            row = measure(path, shape, "cuda", args.reps, args.budget_s, qkv)
            print_row(row)
            rows.append(row)
            name = path.split("/")[1]
            ratio = row["ms"] / sdpa["ms"] if row["ms"] and sdpa["ms"] else None
            found[name] = {
                "ms": row["ms"],
                "ms_min": row.get("ms_min"),
                "peak_bytes": row["peak_bytes"],
                "ratio_to_cudnn": ratio,
                "backend_used": row.get("backend_used"),
                "time_met": ratio is not None and ratio <= t["ratio_limit"],
                "memory_met": row["peak_bytes"] is not None and row["peak_bytes"] <= t["limit_bytes"],
            }
        target["causal" if causal else "non_causal"] = found
        del qkv
        torch.cuda.empty_cache()
    return {"summary": target, "rows": rows}


def cuda_sizes(args) -> dict:
    rows = []
    for n in args.sizes:
        for causal in (True, False) if args.both_masks else (True,):
            shape = Shape(1, CUDA_TARGET["heads"], n, CUDA_TARGET["head_dim"], causal, CUDA_TARGET["dtype"])
            qkv = make_qkv(shape, "cuda")
            for path in ("sdpa/cudnn", "pooled/triton"):
                row = measure(path, shape, "cuda", args.reps, args.budget_s, qkv, check=path != "sdpa/cudnn")
                print_row(row)
                rows.append(row)
            del qkv
            torch.cuda.empty_cache()
    return {"rows": rows}


# --- CUDA: the Triton kernels' block sizes and the fused statistics pass ----------------------------------------


def grid(**axes) -> list[dict]:
    """Every combination of the axes' values, each a config dict."""
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


# What each case tries, as changes to core/long_maps/triton_kernels.default_config (at 64k: block_m 128, block_n 64,
# 8 warps, 2 stages; the statistics kernel 64 x 64; at 128k block_m 64, 4 warps). fused_stats computes a query bin's
# log-sum-exp inside the pooling kernel (one launch instead of two); it applies only where a bin fits one row tile:
# 128 rows at 64k, 256 at 128k. num_warps and num_stages apply to both kernels. one_pass computes each score once
# (a key bin's rows' max and sum kept in a scratch of scratch_mib, the cells made from those): its block_m is any
# row tile, not tied to the query bins, and sets how many programs each group's launch has: with 32 heads and 512 key
# bins the default 96 MiB holds 768 rows, 12 tiles of 64 rows a head, 384 programs (2.9 waves on an H100's or H200's
# 132 SMs) where 128-row tiles give 192 (1.5 waves, the second under half full). A key tile as wide as a key bin
# (128 keys at 64k, 256 at 128k) makes the kernel one loop over the bins, which Triton can pipeline. "small" is what the one GPU call
# (scripts/gpu_check.py) can afford beside everything else: 18 configs over the four cases, as many as fit its
# deadline, one_pass first in each; "full" is for a session with the GPU to itself.
SWEEPS = {
    "small": {
        65536: [
            {"one_pass": True, "block_m": 64},
            {"one_pass": True, "block_m": 64, "block_n": 128},
            {"fused_stats": True},
            {"block_n": 128},
            {"num_stages": 3},
        ],
        131072: [
            {"one_pass": True, "block_m": 64},
            {"one_pass": True, "block_m": 64, "block_n": 256, "num_warps": 8},
            {"block_m": 128, "num_warps": 8},
            {"block_m": 256, "num_warps": 8, "fused_stats": True},
        ],
    },
    "full": {
        65536: grid(
            block_m=[128], block_n=[32, 64, 128], num_warps=[4, 8], num_stages=[2, 3], fused_stats=[False, True]
        )
        + grid(lse_block_m=[64, 128], lse_block_n=[32, 64, 128], num_warps=[8])
        + grid(one_pass=[True], block_m=[64, 128], block_n=[64, 128], num_warps=[4, 8]),
        131072: grid(block_m=[64, 128], block_n=[32, 64, 128], num_warps=[4, 8], num_stages=[2, 3])
        + grid(block_m=[256], block_n=[32, 64], num_warps=[8], num_stages=[2, 3], fused_stats=[False, True])
        + grid(one_pass=[True], block_m=[64, 128], block_n=[64, 256], num_warps=[4, 8]),
    },
}


def past_deadline(args) -> bool:
    return args.deadline_s is not None and time.monotonic() - args.started > args.deadline_s


def sweep_entry(row: dict, changed: dict, sdpa_ms: float | None) -> dict:
    """What a sweep keeps of one measured row: its time, memory and check beside cuDNN's time."""
    ok = row["status"] == "ok"
    checked = ok and row.get("check_max_abs_diff") is not None and row["check_max_abs_diff"] <= CHECK_LIMIT
    return {
        "changed": changed,
        "config": row.get("config"),
        "status": row["status"] if not ok or checked else f"wrong: checked rows differ by {row['check_max_abs_diff']}",
        "reason": row.get("reason"),
        "ms": row.get("ms"),
        "ms_min": row.get("ms_min"),
        "ms_all": row.get("ms_all"),
        "peak_bytes": row.get("peak_bytes"),
        "check_max_abs_diff": row.get("check_max_abs_diff"),
        "ratio_to_cudnn": row["ms"] / sdpa_ms if checked and sdpa_ms else None,
    }


def sweep_case(shape: Shape, qkv, device, configs: list[dict], args) -> dict:
    """cuDNN's forward, the default kernel and each config (merged onto the default) at one shape, each Triton row
    checked (check_row_bins) and timed with --sweep-reps; a config not started by --deadline-s is left out, and one
    that fails to compile or run is recorded as failed. `fastest` is the quickest correct one, default included."""
    from core.long_maps import triton_kernels as kernels

    reps = args.sweep_reps
    edges = pa.bin_edges(shape.seq_len, OUT_SIZE)
    base = kernels.default_config(qkv[0], edges, edges)
    sdpa_path = "sdpa/cudnn" if torch.device(device).type == "cuda" else "sdpa/flash"
    sdpa = measure(sdpa_path, shape, device, reps, args.budget_s, qkv, check=False)
    print_row(sdpa)
    case = {"label": shape.label(), "seq_len": shape.seq_len, "causal": shape.causal, "sdpa_path": sdpa_path,
            "sdpa_ms": sdpa["ms"], "target_ratio": GPU_TARGET_RATIO.get(shape.seq_len), "entries": []}  # fmt: skip
    for changed in [{}, *configs]:  # {}: the default configuration, the reference of every other
        if past_deadline(args):
            case["entries"].append({"changed": changed, "status": "left out: past --deadline-s"})
            continue
        try:
            row = measure("pooled/triton", shape, device, reps, args.budget_s, qkv, config={**base, **changed})
        except Exception as err:  # a config the compiler or the device refuses (registers, shared memory)
            row = {"status": "failed", "reason": f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"}
            print(f"{shape.label():<46} pooled/triton  {changed}: failed ({row['reason'][:120]})", flush=True)
            if torch.device(device).type == "cuda":
                torch.cuda.empty_cache()
        else:
            print_row(row)
        case["entries"].append(sweep_entry(row, changed, sdpa["ms"]))
    correct = [e for e in case["entries"] if e.get("ratio_to_cudnn") is not None]
    case["fastest"] = min(correct, key=lambda e: e["ms"]) if correct else None
    if case["fastest"] is not None:
        case["fastest_time_met"] = (
            case["target_ratio"] is not None and case["fastest"]["ratio_to_cudnn"] <= case["target_ratio"]
        )
        case["fastest_memory_met"] = case["fastest"]["peak_bytes"] is not None and (
            case["fastest"]["peak_bytes"] <= GPU_TARGET_BYTES
        )
    return case


def cuda_sweep(args) -> dict:
    """The sweep at each length of --sweep-grid, non-causal and causal, in that order (64k first)."""
    cases = []
    for n, configs in SWEEPS[args.sweep_grid].items():
        for causal in (False, True):
            shape = Shape(1, CUDA_TARGET["heads"], n, CUDA_TARGET["head_dim"], causal, CUDA_TARGET["dtype"])
            if past_deadline(args):
                cases.append({"label": shape.label(), "seq_len": n, "causal": causal, "left_out": "past --deadline-s"})
                continue
            qkv = make_qkv(shape, "cuda")
            cases.append(sweep_case(shape, qkv, "cuda", configs, args))
            del qkv
            torch.cuda.empty_cache()
    return {"grid": args.sweep_grid, "sweep_reps": args.sweep_reps, "deadline_s": args.deadline_s, "cases": cases}


# --- SmolLM2: one layer of a long document -------------------------------------------------------------------


def smollm2_part(args) -> dict:
    return {"rows": smollm2_rows(args.smollm2_lengths, args.smollm2_layers)}


def smollm2_rows(lengths: list[int], layers: list[int]) -> list[dict]:
    """Seconds to get one layer's q/k of the first n tokens of data/licence_texts.txt (HFAttentionModel.layer_qk:
    the pass stops at that layer) and to pool its 9 heads, causal, once each (they take seconds to minutes)."""
    from core.long_maps import document_batch
    from core.models.smollm2 import load_smollm2
    from core.rope_scaling.long_context import load_long_text

    model = load_smollm2()
    text = load_long_text()
    out = []
    for n in lengths:
        batch = document_batch(model, text, n)
        for layer in layers:
            t0 = time.perf_counter()
            (q, k, scale), peak, _ = peak_memory_delta(lambda: model.layer_qk(batch, layer), "cpu")
            forward_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            pa.pooled_attention(q, k, OUT_SIZE, causal=True, scale=scale)
            pool_s = time.perf_counter() - t0
            row = {
                "n_tokens": int(batch.input_ids.shape[1]),
                "layer": layer,
                "forward_s": round(forward_s, 2),
                "forward_peak_bytes": peak,
                "pool_s": round(pool_s, 2),
                "loadavg_1min": round(os.getloadavg()[0], 2),
            }
            print(
                f"SmolLM2 n={row['n_tokens']:,} layer {layer:>2}: q/k {forward_s:6.1f} s "
                f"({human_bytes(peak)}), pooling 9 heads {pool_s:5.1f} s, load {row['loadavg_1min']}",
                flush=True,
            )
            out.append(row)
    return out


PARTS = {
    "cpu": {"target": cpu_target, "sizes": cpu_sizes, "smollm2": smollm2_part},
    "cuda": {"target": cuda_target, "sizes": cuda_sizes, "sweep": cuda_sweep},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--parts",
        nargs="+",
        default=["target", "sizes"],
        choices=["target", "sizes", "sweep", "smollm2"],
        help="what to measure; parts not measured keep their earlier entry in --out",
    )
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        default=None,
        help="further sequence lengths (CPU default 2048 4096 16384; CUDA default 16384 131072)",
    )
    ap.add_argument("--sweep", action="store_true", help="same as adding sweep to --parts (CUDA)")
    ap.add_argument("--sweep-grid", default="small", choices=sorted(SWEEPS), help="the configs the sweep tries")
    ap.add_argument("--sweep-reps", type=int, default=2, help="timed calls of each swept config (after one untimed)")
    ap.add_argument(
        "--deadline-s",
        type=float,
        default=None,
        help="start no swept config this many seconds after the start (those left out are recorded)",
    )
    ap.add_argument(
        "--triton-only",
        action="store_true",
        help="CUDA target: leave out the torch path (36x cuDNN on the H200, 4 s a call at 64k)",
    )
    ap.add_argument("--both-masks", action="store_true", help="CUDA sizes: each length causal and not (else causal)")
    ap.add_argument("--smollm2", action="store_true", help="same as adding smollm2 to --parts")
    ap.add_argument("--smollm2-lengths", type=int, nargs="+", default=[2048, 4096, 8192])
    ap.add_argument("--smollm2-layers", type=int, nargs="+", default=[12, 29])
    add_run_options(ap, RESULTS, budget_s=60.0)
    args = ap.parse_args()
    args.started = time.monotonic()
    apply_run_options(args)
    if args.sizes is None:
        args.sizes = [2048, 4096, 16384] if args.device == "cpu" else [16384, 131072]
    parts = list(dict.fromkeys(args.parts + (["smollm2"] if args.smollm2 else []) + (["sweep"] if args.sweep else [])))
    if "smollm2" in parts and args.device != "cpu":
        sys.exit("the smollm2 part times the page's CPU path: run it with --device cpu")
    if "sweep" in parts and args.device != "cuda":
        sys.exit("the sweep part tries the Triton kernels' block sizes on a GPU: run it with --device cuda")

    try:
        results = json.loads(args.out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        results = {}
    info = machine_info(args.device)
    previous = results.get(args.device)
    keep = isinstance(previous, dict) and previous.get("device_name") == info["device_name"]
    run = {k: v for k, v in previous.items() if k in PARTS[args.device]} if keep else {}
    run.update(
        {
            "device": args.device,
            "device_name": info["device_name"],
            "torch": info["torch"],
            "cuda_version": info["cuda"],
            "python": info["python"],
            "cpu_count": info["cpu_count"],
            "out_size": OUT_SIZE,
        }
    )
    print(
        f"device: {info['device']} ({info['device_name']}), torch {info['torch']}, {info['torch_threads']} threads",
        flush=True,
    )
    command = "python benchmarks/bench_pooled.py " + " ".join(sys.argv[1:])
    for part in parts:
        before = machine_info(args.device)
        print(f"--- {part} (load average {before['loadavg_1min']})", flush=True)
        t0 = time.perf_counter()
        found = PARTS[args.device][part](args)
        after = machine_info(args.device)
        # each part says when and under what load it was measured: parts may come from different runs
        run[part] = {
            "command": command,
            "date": before["date"],
            "torch_threads": before["torch_threads"],
            "reps": args.reps,
            "loadavg_1min_before": before["loadavg_1min"],
            "loadavg_1min_after": after["loadavg_1min"],
            "seconds": round(time.perf_counter() - t0, 1),
            **found,
        }
        print(f"load average after: {after['loadavg_1min']} ({run[part]['seconds']:.0f} s)", flush=True)
        results[args.device] = run
        write(args.out, results)  # after every part: a run stopped from outside keeps what it measured
    if "target" in run:
        summary(args.device, run["target"]["summary"])
    if "sweep" in run:
        sweep_summary(run["sweep"])
    print(f"wrote {os.path.relpath(args.out, ROOT)}")


def write(out: Path, results: dict) -> None:
    results.setdefault("cuda", NOT_MEASURED_HERE)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({k: results[k] for k in ("cpu", "cuda") if k in results}, indent=1) + "\n"
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)


def summary(device: str, target: dict) -> None:
    for key in ("non_causal", "causal"):
        t = target.get(key)
        if not t:
            continue
        if device == "cpu":
            print(
                f"CPU target ({key.replace('_', '-')}): {t['ms'] / 1e3:.2f} s (limit "
                f"{target['limit_ms'] / 1e3:.0f} s) {'MET' if t['time_met'] else 'NOT MET'}, "
                f"{human_bytes(t['peak_bytes'])} (limit 1 GiB) {'MET' if t['memory_met'] else 'NOT MET'}; "
                f"SDPA flash forward {t['sdpa_flash_ms'] / 1e3:.2f} s"
            )
        else:
            for name in ("triton", "torch"):
                r = t.get(name)
                if r is None:  # --triton-only
                    continue
                ratio = "n/a" if r["ratio_to_cudnn"] is None else f"{r['ratio_to_cudnn']:.2f}x"
                print(
                    f"CUDA target ({key.replace('_', '-')}, {name}): {r['ms']} ms = {ratio} cuDNN SDPA "
                    f"({t['sdpa_cudnn_ms']} ms; limit {target['ratio_limit']}x) {'MET' if r['time_met'] else 'NOT MET'}"
                    f", {human_bytes(r['peak_bytes'])} (limit {human_bytes(target['limit_bytes'])}) "
                    f"{'MET' if r['memory_met'] else 'NOT MET'}"
                )


def sweep_summary(sweep: dict) -> None:
    """One line per case: the default kernel and the fastest correct config against cuDNN and the target."""

    def timed(e: dict) -> str:
        ratio = "" if e.get("ratio_to_cudnn") is None else f" = {e['ratio_to_cudnn']:.2f}x"
        return f"{e['ms']:.1f} ms{ratio}" if e.get("ms") is not None else str(e.get("status"))

    for case in sweep["cases"]:
        if case.get("left_out") or not case["entries"]:
            print(f"sweep {case['label']}: left out ({case.get('left_out')})")
            continue
        default, fastest = case["entries"][0], case["fastest"]
        line = f"sweep {case['label']}: {case['sdpa_path']} {timed({'ms': case['sdpa_ms'], 'status': 'failed'})}; default {timed(default)}"
        if fastest is not None:
            met = "" if case["target_ratio"] is None else f" (target {case['target_ratio']}x) "
            met += "MET" if case["fastest_time_met"] else "NOT MET"
            line += (
                f"; fastest {timed(fastest)}{met}, "
                f"{human_bytes(fastest['peak_bytes'])} with {fastest['changed'] or 'the default'}"
            )
        left = sum(1 for e in case["entries"] if str(e["status"]).startswith("left out"))
        print(line + (f"; {left} configs left out at the deadline" if left else ""))


if __name__ == "__main__":
    main()
