"""What each part of /linear-attention draws, computed once: the counted costs of the two product orders, the
attention matrices softmax and linear attention imply on the same Q and K, measured times with their fitted slopes,
and generation speeds. Pages read widgets, call one function here and hand the result to viz/linear_attention.py."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from core.masks import causal_mask
from core.sdpa import attention_scores, entropy, masked_softmax

from .decoding import MODES
from .kernel import associativity_costs, causal_linear_attention, implied_linear_weights, linear_attention
from .measure import KINDS, fit_slopes, large_n_slopes, local_slopes, timed_rows

# --- 1. which product first -------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class AssociativityView:
    """Both orders of phi(Q) phi(K)^T V at one (n, d), and their multiply-adds over a range of n."""

    n: int
    d: int
    costs: dict[str, dict]  # associativity_costs(n, d): {"quadratic": {...}, "linear": {...}}
    ratio: float  # multiply-adds of the n x n order / those of the d x d order
    crossover: int  # smallest n where the d x d order is cheaper
    sizes: list[int]
    curves: dict[str, list[int]]  # {"quadratic": [...], "linear": [...]} over sizes
    words: str  # the catalog key saying which order is cheaper here: "trick_result" (d x d), "trick_result_quadratic"
    fewer: float  # how many times fewer multiply-adds the cheaper order takes (>= 1)


def associativity_view(n: int, d: int, sizes: list[int]) -> AssociativityView:
    costs = associativity_costs(n, d)
    ratio = costs["quadratic"]["multiply_adds"] / costs["linear"]["multiply_adds"]
    words, fewer = ("trick_result", ratio) if ratio >= 1 else ("trick_result_quadratic", 1 / ratio)
    return AssociativityView(n, d, costs, ratio, associativity_crossover(d), list(sizes), cost_curves(sizes, d),
                             words, fewer)  # fmt: skip


# --- 2. the implied matrix --------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class ImpliedView:
    """implied_matrices with what the figures label: query and key names, and ln n (the entropy of a uniform row)."""

    n: int
    causal: bool
    softmax: np.ndarray  # (n, n)
    linear: np.ndarray  # (n, n)
    mask: np.ndarray | None  # (n, n), True where a query may not look (causal)
    queries: list[str]
    keys: list[str]
    stats: dict[str, float]  # entropy_*, row_max_*, check_* of implied_matrices
    uniform_entropy: float


def implied_view(n: int, d: int, spread: float, causal: bool, seed: int) -> ImpliedView:
    r = implied_matrices(n, d, spread, causal, seed)
    stats = {k: v for k, v in r.items() if k not in ("softmax", "linear", "mask")}
    return ImpliedView(
        n,
        causal,
        r["softmax"],
        r["linear"],
        r["mask"],
        [f"q{i}" for i in range(n)],
        [f"k{j}" for j in range(n)],
        stats,
        math.log(n),
    )


# --- 4. time against n ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimingView:
    """Measured times with three readings of their growth: the fit over n >= largest/8 (what the benchmark
    records), the fit over the upper half of the sizes, and the slope between neighbouring sizes."""

    sizes: list[int]
    ms: dict[str, list[float | None]]  # {"softmax": [...], "linear": [...]}, None where skipped
    skipped: list[bool]
    ratio: list[float | None]  # softmax ms / linear ms
    local: dict[str, list[float | None]]  # local_slopes per kind
    slopes: dict  # fit_slopes: fit_from, softmax, softmax_intercept, linear, linear_intercept
    large: dict  # large_n_slopes, the same keys
    steepest: dict | None  # where linear's time grows fastest: n0, n1, slope, time_ratio, size_ratio
    last: dict | None  # the largest timed row
    heads: int
    head_dim: int
    causal: bool


def timing_view(
    rows: list[dict], slopes: dict | None = None, heads: int = 1, head_dim: int = 64, causal: bool = False
) -> TimingView:
    """`slopes`: the fit stored with committed results (recomputed with fit_slopes when None)."""
    done = timed_rows(rows)
    local = {kind: local_slopes(rows, kind) for kind in KINDS}
    timed = [(r["n"], r["linear_ms"]) for r in rows if not r.get("skipped") and r.get("linear_ms")]
    steps = [
        {"n0": n0, "n1": n1, "slope": s, "time_ratio": t1 / t0, "size_ratio": n1 / n0}
        for (n0, t0), (n1, t1), s in zip(timed, timed[1:], [s for s in local["linear"] if s is not None])
    ]
    return TimingView(
        sizes=[r["n"] for r in rows],
        ms={kind: [None if r.get("skipped") else r.get(f"{kind}_ms") for r in rows] for kind in KINDS},
        skipped=[bool(r.get("skipped")) for r in rows],
        ratio=[r["softmax_ms"] / r["linear_ms"] if not r.get("skipped") and r.get("linear_ms") else None for r in rows],
        local=local,
        slopes=slopes if slopes is not None else fit_slopes(rows),
        large=large_n_slopes(rows),
        steepest=max(steps, key=lambda p: p["slope"]) if steps else None,
        last=done[-1] if done else None,
        heads=heads,
        head_dim=head_dim,
        causal=causal,
    )


# --- 5. generation ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerationView:
    """Tokens/s per mode (core.linear_attention.decoding.MODES) against the context."""

    contexts: list[int]
    tok_s: dict[str, list[float | None]]
    skipped: dict[str, list[bool]]  # a mode not run at a context (deadline), shown as such
    rnn_over_kv: list[float | None]
    kv_over_none: list[float | None]
    last: dict | None  # the largest context where every mode ran
    # at `last`, which of the RNN form and softmax with a KV cache generated faster, as the catalog key that says so
    # ("gen_result": the RNN form, "gen_result_kv_faster": the cache, as on a GPU), and the faster one's tokens/s
    # over the slower one's
    last_words: str | None
    last_speedup: float | None


def generation_view(rows: list[dict]) -> GenerationView:
    full = [r for r in rows if r.get("rnn_over_kv_cache") and r.get("kv_cache_over_no_cache")]
    last = full[-1] if full else None
    rnn_faster = last is not None and last["rnn_over_kv_cache"] >= 1
    return GenerationView(
        contexts=[r["context"] for r in rows],
        tok_s={m: [r.get(f"{m}_tok_s") for r in rows] for m in MODES},
        skipped={m: [bool(r.get("skipped") or r.get(f"{m}_skipped")) for r in rows] for m in MODES},
        rnn_over_kv=[r.get("rnn_over_kv_cache") for r in rows],
        kv_over_none=[r.get("kv_cache_over_no_cache") for r in rows],
        last=last,
        last_words=None if last is None else ("gen_result" if rnn_faster else "gen_result_kv_faster"),
        last_speedup=None
        if last is None
        else (last["rnn_over_kv_cache"] if rnn_faster else 1 / last["rnn_over_kv_cache"]),
    )


# Katharopoulos et al. 2020, table 2 and 3: images per second of the linear model in its RNN form over softmax's,
# generating MNIST (784 pixels) and CIFAR-10 (32 x 32 x 3 = 3,072 values) one value at a time, on a GPU.
PAPER_SPEEDUPS = {784: 317, 3072: 4462}
PAPER_LENGTHS_RESULT = "bench_linear_paper_lengths"  # benchmarks/bench_linear.py --contexts 784 3072


@dataclass(frozen=True)
class PaperSpeedup:
    context: int
    paper: int  # the paper's speed-up over softmax at this sequence length
    rnn_over_kv: float  # this page's measured RNN-form tokens/s over softmax with a KV cache, at context L
    rnn_over_none: float  # ... over softmax without a cache (every step recomputes the whole context)


def paper_speedups(rows: list[dict]) -> list[PaperSpeedup]:
    """The paper's speed-ups beside this app's generation ratios at the same lengths (rows of a bench_linear
    generation run that measured those contexts; lengths it did not measure are left out)."""
    by_context = {
        r["context"]: r for r in rows if r.get("rnn_tok_s") and r.get("kv_cache_tok_s") and r.get("no_cache_tok_s")
    }
    return [
        PaperSpeedup(
            L,
            paper,
            by_context[L]["rnn_tok_s"] / by_context[L]["kv_cache_tok_s"],
            by_context[L]["rnn_tok_s"] / by_context[L]["no_cache_tok_s"],
        )  # fmt: skip
        for L, paper in PAPER_SPEEDUPS.items()
        if L in by_context
    ]


@dataclass(frozen=True)
class PaperLengths:
    """The paper's lengths this app measured: each row, and the range of each of this app's ratios over them."""

    rows: list[PaperSpeedup]
    kv_lo: float  # the smallest RNN-over-KV-cache ratio among the rows
    kv_hi: float
    none_lo: float  # the smallest RNN-over-no-cache ratio
    none_hi: float


def paper_lengths(rows: list[dict]) -> PaperLengths | None:
    """paper_speedups' rows with their ranges; None when the run measured none of the paper's lengths."""
    speedups = paper_speedups(rows)
    if not speedups:
        return None
    kv, none = [s.rnn_over_kv for s in speedups], [s.rnn_over_none for s in speedups]
    return PaperLengths(speedups, min(kv), max(kv), min(none), max(none))


@dataclass(frozen=True)
class GenerationOnDevices:
    """The committed CPU and GPU generation runs side by side: at which contexts the RNN form beat softmax with a
    KV cache on each, and how far each mode's tokens/s moved across the contexts on the GPU."""

    cpu_name: str
    gpu_name: str
    contexts: list[int]  # contexts where both runs timed the RNN form and the KV cache
    cpu_rnn_faster: list[int]  # of those, where the RNN form generated more tokens/s than the KV cache
    gpu_rnn_faster: list[int]
    cpu: dict  # each run's row at the largest of those contexts
    gpu: dict
    gpu_rnn_range: tuple[float, float]  # lowest and highest tokens/s over the contexts, on the GPU
    gpu_kv_range: tuple[float, float]

    @property
    def conclusion_changes(self) -> bool:
        return set(self.cpu_rnn_faster) != set(self.gpu_rnn_faster)

    @property
    def context_growth(self) -> float:
        """How many times longer the largest context is than the smallest."""
        return self.contexts[-1] / self.contexts[0]


def generation_on_devices(cpu: dict | None, gpu: dict | None) -> GenerationOnDevices | None:
    """From the two runs' files (core.linear_attention.measure.load_results); None unless both share a context."""
    if cpu is None or gpu is None:
        return None

    def timed(run: dict) -> dict[int, dict]:
        return {
            r["context"]: r
            for r in run["generation"]["rows"]
            if r.get("rnn_tok_s")
            and r.get("kv_cache_tok_s")
            and not (r.get("rnn_skipped") or r.get("kv_cache_skipped"))
        }

    c, g = timed(cpu), timed(gpu)
    contexts = sorted(set(c) & set(g))
    if not contexts:
        return None

    def rnn_faster(rows: dict[int, dict]) -> list[int]:
        return [n for n in contexts if rows[n]["rnn_tok_s"] > rows[n]["kv_cache_tok_s"]]

    def spread(mode: str) -> tuple[float, float]:
        values = [g[n][f"{mode}_tok_s"] for n in contexts]
        return min(values), max(values)

    return GenerationOnDevices(
        cpu_name=cpu.get("device_name", "cpu"),
        gpu_name=gpu.get("device_name", "cuda"),
        contexts=contexts,
        cpu_rnn_faster=rnn_faster(c),
        gpu_rnn_faster=rnn_faster(g),
        cpu=c[contexts[-1]],
        gpu=g[contexts[-1]],
        gpu_rnn_range=spread("rnn"),
        gpu_kv_range=spread("kv_cache"),
    )
