"""What linear attention changes, measured: time against sequence length (with log-log slopes fitted over the whole
large-n range, over the upper half of the sizes, and between neighbouring sizes), and generation speed of the RNN
form against softmax with and without a KV cache.

Shared by benchmarks/bench_linear.py and the live runs of app/views/linear_attention/, so the page and the
committed results measure exactly the same thing. Every run can be bounded: `budget_s` caps the repetitions of
one measurement, `deadline_s` the whole sweep (sizes not reached are reported as skipped, never extrapolated).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

from core.results import gpu_result_name, load_result
from core.timing import fit_loglog_slope, time_ms

from . import decoding
from .kernel import causal_linear_attention, linear_attention

Progress = Callable[[float, str], None]
RESULT_NAME = "bench_linear"  # results/bench_linear.json, written by benchmarks/bench_linear.py
GPU_RESULT = gpu_result_name(RESULT_NAME)  # the same benchmark's committed GPU run (--device cuda)
KINDS = ("softmax", "linear")


# --- measured -------------------------------------------------------------------------------------------------


def power_of_two_sizes(lo: int, hi: int) -> list[int]:
    """lo, 2 lo, 4 lo, ... up to hi (both powers of two or not: every size is lo * 2^k <= hi)."""
    if lo < 1 or hi < lo:
        raise ValueError("need 1 <= lo <= hi")
    return [lo * 2**k for k in range(int(math.log2(hi / lo)) + 1)]


def attention_call(kind: str, q, k, v, causal: bool) -> Callable[[], torch.Tensor]:
    """softmax: torch's SDPA (its fastest kernel here, the n x n matrix is never stored, the work is still n^2 d);
    linear: core.linear_attention, phi(K)^T V first (n d^2 work)."""
    if kind == "softmax":
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    if kind == "linear":
        return (lambda: causal_linear_attention(q, k, v)) if causal else (lambda: linear_attention(q, k, v))
    raise ValueError(f"kind must be one of {KINDS}")


@torch.no_grad()
def time_scaling(
    sizes: list[int],
    heads: int = 1,
    head_dim: int = 64,
    causal: bool = False,
    reps: int = 3,
    budget_s: float | None = None,
    deadline_s: float | None = None,
    device="cpu",
    progress: Progress | None = None,
    seed: int = 0,
) -> list[dict]:
    """For each n: median ms of softmax and of linear attention on random (1, heads, n, head_dim) q, k, v.
    Rows {n, softmax_ms, linear_ms, skipped}; once deadline_s has passed, the remaining sizes are skipped."""
    rows, t0 = [], time.perf_counter()
    g = torch.Generator().manual_seed(seed)
    for i, n in enumerate(sizes):
        if deadline_s is not None and time.perf_counter() - t0 > deadline_s:
            rows.append({"n": n, "softmax_ms": None, "linear_ms": None, "skipped": True})
            continue
        q, k, v = (torch.randn(1, heads, n, head_dim, generator=g).to(device) for _ in range(3))
        row = {"n": n, "skipped": False}
        for j, kind in enumerate(KINDS):
            if progress:
                progress((i + j / len(KINDS)) / len(sizes), f"{kind} n={n:,}")
            row[f"{kind}_ms"] = time_ms(
                attention_call(kind, q, k, v, causal), reps=reps, warmup=1, device=device, budget_s=budget_s
            )
        rows.append(row)
    if progress:
        progress(1.0, "done")
    return rows


def fit_slopes(rows: list[dict], fit_from: int | None = None) -> dict:
    """Log-log slope of each kind over the measured sizes n >= fit_from (default: the largest n / 8, so the
    fit ignores the small sizes where fixed per-call overhead dominates). None where fewer than 2 points remain."""
    done = [r for r in rows if not r.get("skipped") and r.get("softmax_ms") is not None]
    if fit_from is None:
        fit_from = max(r["n"] for r in done) // 8 if done else 0
    out = {"fit_from": fit_from}
    for kind in KINDS:
        pts = [(r["n"], r[f"{kind}_ms"]) for r in done if r["n"] >= fit_from]
        if len(pts) < 2:
            out[kind] = None
            out[f"{kind}_intercept"] = None
            continue
        slope, intercept = fit_loglog_slope([p[0] for p in pts], [p[1] for p in pts])
        out[kind], out[f"{kind}_intercept"] = slope, intercept
    return out


def timed_rows(rows: list[dict]) -> list[dict]:
    """The rows where both kinds were timed (skipped sizes have no times)."""
    return [r for r in rows if not r.get("skipped") and r.get("softmax_ms") is not None]


def upper_half_from(sizes: list[int]) -> int | None:
    """The smallest size of the upper half of the measured sizes: the largest floor(m / 2) of m distinct sizes (with
    an odd m the median size belongs to neither half), and at least the two largest. None with fewer than two.

    Why the upper half: at small n a fixed per-call cost (dispatching a dozen small operations) flattens the curve,
    and a step between two neighbouring sizes (arrays outgrowing a cache, other load) steepens one segment; a fit
    over the largest sizes only reads the growth the work sets, once the work dominates. (On the committed CPU run
    the fit from n >= largest / 8 = 2,048 straddles such a step: 1.35; the upper half, n >= 4,096: 1.01.)"""
    distinct = sorted(set(sizes))
    if len(distinct) < 2:
        return None
    return distinct[-max(2, len(distinct) // 2)]


def large_n_slopes(rows: list[dict]) -> dict:
    """fit_slopes over the upper half of the timed sizes (upper_half_from): {fit_from, softmax, softmax_intercept,
    linear, linear_intercept}, slopes None when fewer than two sizes were timed."""
    fit_from = upper_half_from([r["n"] for r in timed_rows(rows)])
    if fit_from is None:
        return {"fit_from": None, **{f"{k}{s}": None for k in KINDS for s in ("", "_intercept")}}
    return fit_slopes(rows, fit_from=fit_from)


def local_slopes(rows: list[dict], kind: str) -> list[float | None]:
    """For each row, the log-log slope from the previous timed size to this one, log(t_i / t_j) / log(n_i / n_j):
    where along n the time grows faster or slower than the overall fit says. None for the first timed size and
    for skipped ones."""
    out, previous = [], None
    for r in rows:
        t = None if r.get("skipped") else r.get(f"{kind}_ms")
        if t is None or t <= 0:
            out.append(None)
            continue
        out.append(None if previous is None else math.log(t / previous[1]) / math.log(r["n"] / previous[0]))
        previous = (r["n"], t)
    return out


# How the cost of one measurement call (prefill + warm-up + timed steps) grows with the context: the softmax modes
# run a full quadratic forward at least once (no_cache at every step); the RNN's prefill is linear.
CALL_COST_POWER = {"rnn": 1.0, "kv_cache": 2.0, "no_cache": 2.0}


@torch.no_grad()
def generation_table(
    contexts: list[int],
    d_model: int = 576,
    n_heads: int = 9,
    steps: int = 16,
    trials: int = 1,
    budget_s: float | None = None,
    deadline_s: float | None = None,
    device="cpu",
    progress: Progress | None = None,
) -> list[dict]:
    """Tokens per second after a prompt of each context length, for the RNN form of linear attention and for
    softmax attention with and without a KV cache (core.linear_attention.decoding, one attention layer of SmolLM2's
    width by default). Each speed is the median of up to `trials` runs of up to `steps` tokens; a mode stops repeating once
    its timed steps took budget_s in all.

    deadline_s bounds the whole table: nothing starts after it, and a mode is not started at a context when its
    time at the previous context, scaled by CALL_COST_POWER, says it would end past the deadline (without this,
    the no-cache run at 8k, a few full forwards of 20 s each on a busy 2-core CPU, overran 120 s by a minute).
    Rows {context, <mode>_tok_s, <mode>_steps (tokens timed in all), <mode>_skipped, rnn_over_kv_cache,
    kv_cache_over_no_cache, skipped (the deadline had passed before the row started)}."""
    layer = decoding.ToyAttentionLayer.random(d_model=d_model, n_heads=n_heads, device=device)
    rows, t0 = [], time.perf_counter()
    last_call: dict[str, tuple[int, float]] = {}  # mode -> (context, seconds of its whole measurement)
    for i, context in enumerate(contexts):
        row = {"context": context, "skipped": False}
        for j, mode in enumerate(decoding.MODES):
            elapsed = time.perf_counter() - t0
            if deadline_s is not None and elapsed > deadline_s:
                row["skipped"] = j == 0
                break
            if deadline_s is not None and mode in last_call:
                ctx0, secs0 = last_call[mode]
                if elapsed + secs0 * (context / ctx0) ** CALL_COST_POWER[mode] > deadline_s:
                    row[f"{mode}_skipped"] = True
                    continue
            if progress:
                progress((i + j / len(decoding.MODES)) / len(contexts), f"{mode}, context {context:,}")
            speeds, timed_steps, spent = [], 0, 0.0
            call_start = time.perf_counter()
            for _ in range(max(1, trials)):  # repeated runs: the median resists other work on the machine
                r = decoding.tokens_per_second(layer, context, mode, steps=steps, budget_s=budget_s)
                speeds.append(r["tokens_per_s"])
                timed_steps += r["steps"]
                spent += r["seconds"]
                if budget_s is not None and spent >= budget_s:
                    break
            last_call[mode] = (context, time.perf_counter() - call_start)
            row[f"{mode}_tok_s"], row[f"{mode}_steps"] = statistics.median(speeds), timed_steps
        for mode in decoding.MODES:
            row.setdefault(f"{mode}_tok_s", None)
            row.setdefault(f"{mode}_steps", 0)
            row.setdefault(f"{mode}_skipped", row[f"{mode}_tok_s"] is None)
        row["rnn_over_kv_cache"] = _ratio(row["rnn_tok_s"], row["kv_cache_tok_s"])
        row["kv_cache_over_no_cache"] = _ratio(row["kv_cache_tok_s"], row["no_cache_tok_s"])
        rows.append(row)
    if progress:
        progress(1.0, "done")
    return rows


def _ratio(a, b):
    return a / b if a is not None and b else None


def _has_shape(data: dict) -> bool:
    return (
        isinstance(data["scaling"]["rows"], list)
        and isinstance(data["generation"]["rows"], list)
        and isinstance(data["scaling"]["slopes"], dict)
        and isinstance(data["command"], str)
    )


def load_results(path: str | Path | None = None) -> dict | None:
    """The committed output of benchmarks/bench_linear.py, or None when missing, unreadable or not that shape."""
    return load_result(path or RESULT_NAME, required=_has_shape)
