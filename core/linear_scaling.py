"""What linear attention changes, counted and measured: the two orders of the product (multiply-adds), the
attention matrix it implies next to softmax's, time against sequence length (with the log-log slope), and
generation speed of the RNN form against softmax with and without a KV cache.

Shared by benchmarks/bench_linear.py and the live runs of app/views/linear_attention.py, so the page and the
committed results measure exactly the same thing. Every run can be bounded: `budget_s` caps the repetitions of
one measurement, `deadline_s` the whole sweep (sizes not reached are reported as skipped, never extrapolated).
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

from . import decoding
from .linear_attention import associativity_costs, causal_linear_attention, implied_linear_weights, linear_attention
from .masks import causal_mask
from .sdpa import attention_scores, entropy, masked_softmax
from .timing import fit_loglog_slope, time_ms

Progress = Callable[[float, str], None]
RESULTS_PATH = Path(__file__).resolve().parents[1] / "results" / "bench_linear.json"
KINDS = ("softmax", "linear")


# --- counted --------------------------------------------------------------------------------------------------


def cost_curves(sizes: list[int], d: int, d_v: int | None = None) -> dict[str, list[int]]:
    """Multiply-adds of both orders of phi(Q) phi(K)^T V for each n (core.linear_attention.associativity_costs)."""
    costs = [associativity_costs(n, d, d_v) for n in sizes]
    return {order: [c[order]["multiply_adds"] for c in costs] for order in ("quadratic", "linear")}


def associativity_crossover(d: int, d_v: int | None = None) -> int:
    """The smallest n at which computing phi(K)^T V first takes fewer multiply-adds than phi(Q) phi(K)^T first.
    Found by doubling then bisection on the counted costs (no closed form assumed)."""

    def linear_cheaper(n: int) -> bool:
        c = associativity_costs(n, d, d_v)
        return c["linear"]["multiply_adds"] < c["quadratic"]["multiply_adds"]

    hi = 1
    while not linear_cheaper(hi):
        hi *= 2
    lo = hi // 2  # linear_cheaper(lo) is False (or lo == 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if linear_cheaper(mid) else (mid, hi)
    return hi


@torch.no_grad()
def implied_matrices(n: int, d: int, spread: float = 1.0, causal: bool = False, seed: int = 0) -> dict:
    """Softmax attention and linear attention on the SAME random q, k, v (entries ~ N(0, spread^2)), n x d.

    softmax: softmax(QK^T / sqrt(d)) (core.sdpa); linear: phi(q_i).phi(k_j) / sum_j' phi(q_i).phi(k_j')
    with phi = elu + 1 and no 1/sqrt(d) (the paper's form). Returns both (n, n) matrices as numpy, each one's mean
    row entropy (nats; log n = uniform) and mean largest weight per row, and how far weights @ V is from each
    method's own output (SDPA for softmax, linear_attention for linear): the matrices shown are the ones the
    outputs use.
    row_max_*: the largest weight of each row, averaged over rows (1 = every query looks at one key only)."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(n, d, generator=g, dtype=torch.float64) * spread for _ in range(3))
    mask = causal_mask(n, n) if causal else None
    soft = masked_softmax(attention_scores(q, k), mask)  # float64 throughout
    lin = implied_linear_weights(q, k, causal=causal)
    soft_out = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]
    lin_out = causal_linear_attention(q, k, v) if causal else linear_attention(q, k, v)
    return {
        "softmax": soft.numpy(),
        "linear": lin.numpy(),
        "mask": None if mask is None else (~mask).numpy(),
        "entropy_softmax": float(entropy(soft).mean()),
        "entropy_linear": float(entropy(lin).mean()),
        "row_max_softmax": float(soft.max(-1).values.mean()),
        "row_max_linear": float(lin.max(-1).values.mean()),
        "check_softmax": float((soft @ v - soft_out).abs().max()),
        "check_linear": float((lin @ v - lin_out).abs().max()),
    }


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
    softmax attention with and without a KV cache (core.decoding, one attention layer of SmolLM2's width by
    default). Each speed is the median of up to `trials` runs of up to `steps` tokens; a mode stops repeating once
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


def load_results(path: Path | None = None) -> dict | None:
    """The committed output of benchmarks/bench_linear.py, or None when missing, unreadable or not that shape."""
    try:
        data = json.loads(Path(path or RESULTS_PATH).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    try:
        ok = (
            isinstance(data["scaling"]["rows"], list)
            and isinstance(data["generation"]["rows"], list)
            and isinstance(data["scaling"]["slopes"], dict)
            and isinstance(data["command"], str)
        )
    except (KeyError, TypeError):
        return None
    return data if ok else None
