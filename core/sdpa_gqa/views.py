"""What each part of /sdpa-gqa draws, computed once: the backend table with its bar-chart series and the summary
sentence's numbers, and the KV-cache calculator with the GQA check. Pages read widgets, call one function here and
hand the result to viz/sdpa_gqa.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..kv_cache.memory import DTYPE_BYTES, cached_positions, kv_cache_bytes
from ..timing import PEAK_METHOD_KEYS
from . import backends as sb
from .configs import ModelConfig, attention_variants

MIB = 1024**2
GIB = 1024**3


def shape_label(r: dict) -> str:
    return sb.AttentionShape(r["batch"], r["heads"], r["seq_len"], r["head_dim"], r["causal"], r["dtype"]).label()


def short_labels(rows: list[dict]) -> dict[str, str]:
    """Full shape label -> only the parts that differ between these rows (readable bar-chart categories)."""
    fields = [("batch", "B={}"), ("heads", "H={}"), ("seq_len", "n={}"), ("head_dim", "d={}"), ("dtype", "{}")]
    varying = [(f, fmt) for f, fmt in fields if len({r[f] for r in rows}) > 1]
    out = {}
    for r in rows:
        parts = [fmt.format(r[f]) for f, fmt in varying] + (["causal"] if r["causal"] else [])
        out[shape_label(r)] = " ".join(parts) or f"n={r['seq_len']}"
    return out


# what a run's row says of its backend (core.sdpa_gqa.backends.benchmark; "failed": an older committed run), each with
# its words in the locales (sdpa_gqa.status_<key>); a status none of these names reads as "other"
STATUS_KEYS = {"ok": "ok", "unavailable": "unavailable", "out of memory": "out_of_memory", "failed": "failed"}


@dataclass(frozen=True)
class BackendsView:
    """One benchmark run: every row with its shape label, and per backend one value per shape that ran."""

    rows: list[dict]  # as measured (core.sdpa_gqa.backends.benchmark)
    labels: list[str]  # shape label of each row
    statuses: list[str]  # each row's status as a locale key: status_ok, status_unavailable, ... (STATUS_KEYS)
    shapes: list[str]  # shapes with at least one backend that ran, full labels
    categories: list[str]  # the same, only the parts that differ (bar-chart categories)
    ms: dict[str, list[float | None]]  # backend -> ms per shape, None where it did not run
    peak_bytes: dict[str, list[float | None]]
    peak_mib: dict[str, list[float | None]]  # None also for 0 B: a log axis has no place for it (the table has)
    summary: dict | None  # the largest shape: best fused backend against naive (None when not both ran)
    memory_method: str | None
    memory_method_key: str | None  # its words' locale key (core.timing.PEAK_METHOD_KEYS); None: shown as it is


def backends_view(rows: list[dict]) -> BackendsView:
    ok = [r for r in rows if r["status"] == "ok"]
    shapes = list(dict.fromkeys(shape_label(r) for r in ok))
    names = list(dict.fromkeys(r["backend"] for r in ok))
    cell = {(shape_label(r), r["backend"]): r for r in ok}

    def values(field: str) -> dict[str, list[float | None]]:
        return {b: [cell[(s, b)][field] if (s, b) in cell else None for s in shapes] for b in names}

    peak = values("peak_bytes")
    short = short_labels(ok)
    method = next((r["memory_method"] for r in rows if r.get("memory_method")), None)
    return BackendsView(
        rows=rows,
        labels=[shape_label(r) for r in rows],
        statuses=[f"status_{STATUS_KEYS.get(r['status'], 'other')}" for r in rows],
        shapes=shapes,
        categories=[short[s] for s in shapes],
        ms=values("ms"),
        peak_bytes=peak,
        peak_mib={b: [v / MIB if v else None for v in vs] for b, vs in peak.items()},
        summary=_summary(ok),
        memory_method=method,
        memory_method_key=PEAK_METHOD_KEYS.get(method),
    )


def _summary(ok: list[dict]) -> dict | None:
    if not ok:
        return None
    biggest = max(ok, key=lambda r: r["flops"])
    same = [r for r in ok if shape_label(r) == shape_label(biggest)]
    naive = next((r for r in same if r["backend"] == sb.NAIVE), None)
    fused = [r for r in same if r["backend"] != sb.NAIVE]
    diffs = [r["max_abs_diff_vs_naive"] for r in ok if r["max_abs_diff_vs_naive"] is not None]
    if not (naive and fused and diffs):
        return None
    best = min(fused, key=lambda r: r["ms"])
    naive_faster = naive["ms"] < best["ms"]
    return {
        "shape": shape_label(biggest),
        "best": best["backend"],
        "best_ms": best["ms"],
        "naive_ms": naive["ms"],
        "speedup": naive["ms"] / best["ms"],
        # the catalog key that says which was faster, and the faster one's speed over the slower one's
        "words": "backends_result_naive_faster" if naive_faster else "backends_result",
        "ratio": best["ms"] / naive["ms"] if naive_faster else naive["ms"] / best["ms"],
        "naive_bytes": naive["peak_bytes"],
        "best_bytes": best["peak_bytes"],
        "diff": max(diffs),
    }


def live_run(
    seq_len: int, causal: bool, heads: int, head_dim: int, budget_s: float, progress: Callable | None = None
) -> dict:
    """A small CPU run of every backend on one float32 shape: {"rows": benchmark rows, "availability": [...]}."""
    shape = sb.AttentionShape(1, heads, seq_len, head_dim, causal=causal)
    rows = sb.benchmark([shape], "cpu", reps=3, budget_s=budget_s, progress=progress)
    return {"rows": rows, "availability": sb.availability("cpu")}


@dataclass(frozen=True)
class KvCacheView:
    """The KV cache of one model at one context, batch and number format, the same model as MHA / GQA / MQA, and
    the check that GQA is MHA with repeated key/value heads."""

    cfg: ModelConfig
    context: int
    batch: int
    bytes_per_value: float
    total: float  # bytes
    per_token: float  # bytes, one token, all layers, one sequence
    window_positions: int | None  # with a sliding window: positions a rolling buffer holds
    windowed: float | None  # bytes of that buffer
    variants: list[dict]  # kv_cache.attention_variants
    variant_gib: list[float]
    check: dict  # backends.gqa_check


def kv_cache_view(cfg: ModelConfig, context: int, batch: int, dtype: str) -> KvCacheView:
    nbytes = DTYPE_BYTES[dtype]
    pos = None if cfg.sliding_window is None else cached_positions(context, cfg.sliding_window)
    variants = attention_variants(cfg.layers, cfg.heads, cfg.kv_heads, cfg.head_dim, context, nbytes, batch)
    return KvCacheView(
        cfg=cfg,
        context=context,
        batch=batch,
        bytes_per_value=nbytes,
        total=kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, context, nbytes, batch),
        per_token=kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, 1, nbytes, 1),
        window_positions=pos,
        windowed=None if pos is None else kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, pos, nbytes, batch),
        variants=variants,
        variant_gib=[r["bytes"] / GIB for r in variants],
        check=sb.gqa_check(cfg.heads, cfg.kv_heads),
    )


@dataclass(frozen=True)
class DevicesCompared:
    """The committed CPU run beside the committed GPU run: which kernels ran on each, and each one's fastest kernel
    against the naive version at its largest shape (the summary sentences' figures)."""

    cpu_name: str
    gpu_name: str
    cpu_backends: list[str]  # kernels (not naive) that ran at least once
    gpu_backends: list[str]
    cpu_best: dict  # BackendsView.summary of the CPU run
    gpu_best: dict
    gpu_only_best: bool  # the GPU's fastest kernel has no CPU implementation


def devices_compared(runs: dict | None) -> DevicesCompared | None:
    """None unless both a CPU and a GPU run are committed, each with a summary."""
    cpu, gpu = (runs or {}).get("cpu"), (runs or {}).get("cuda")
    if not (isinstance(cpu, dict) and isinstance(gpu, dict)):
        return None
    cpu_view, gpu_view = backends_view(cpu["rows"]), backends_view(gpu["rows"])
    if cpu_view.summary is None or gpu_view.summary is None:
        return None

    def ran(rows: list[dict]) -> list[str]:
        return list(dict.fromkeys(r["backend"] for r in rows if r["status"] == "ok" and r["backend"] != sb.NAIVE))

    cpu_backends = ran(cpu["rows"])
    return DevicesCompared(
        cpu_name=cpu.get("device_name", "cpu"),
        gpu_name=gpu.get("device_name", "cuda"),
        cpu_backends=cpu_backends,
        gpu_backends=ran(gpu["rows"]),
        cpu_best=cpu_view.summary,
        gpu_best=gpu_view.summary,
        gpu_only_best=gpu_view.summary["best"] not in cpu_backends,
    )
