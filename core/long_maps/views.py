"""What each part of the /long-maps page shows, from the pooled maps (maps.LayerMaps) and the layer's q and k, in
one object per part: the per-head shares, one head's pooled map at the chosen resolution, and a full-resolution
window. Also the committed runs of benchmarks/bench_pooled.py (results/bench_pooled.json and its GPU run, read
through core.results.load_device_runs): SmolLM2's timings and the exact maps against one SDPA forward."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..results import load_device_runs
from .maps import LayerMaps, coarsen, future_cells, head_summary, log_colour_range, zoom_window


@dataclass
class HeadShares:
    """Per head of the layer: where each query's weight goes, read off the exact pooled means."""

    first_share: np.ndarray  # (H,) mean weight on the first key bin (attention sink)
    own_bin_share: np.ndarray  # (H,) mean weight on keys in the query's own bin (local attention)
    row_sum_error: float  # largest deviation of a row bin's total weight from 1 (a check)
    first_width: int  # tokens in the first key bin
    own_width: int  # tokens per query bin (rounded mean)
    n: int  # tokens
    head: int  # the head the other parts show


def head_shares(maps: LayerMaps, head: int) -> HeadShares:
    summary = head_summary(maps)
    return HeadShares(
        first_share=summary["first_share"],
        own_bin_share=summary["own_bin_share"],
        row_sum_error=float(summary["row_sum_error"].max()),
        first_width=int(maps.col_edges[1] - maps.col_edges[0]),
        own_width=int(round(float(np.diff(maps.row_edges).mean()))),
        n=maps.n,
        head=head,
    )


@dataclass
class MapView:
    """One head's pooled map, merged (exactly) to at most `side` cells a side."""

    values: np.ndarray  # (s_q, s_k) mean or max weight of each block of the full n x n matrix
    masked: np.ndarray | None  # (s_q, s_k) bool: every key after every query (causal), None if not causal
    row_edges: np.ndarray  # (s_q + 1,) query bin edges
    col_edges: np.ndarray  # (s_k + 1,) key bin edges
    head: int
    kv_head: int  # the key/value head this query head reads (grouped-query attention)
    stat: str  # "mean" or "max"
    cell_rows: int  # tokens per cell, rounded mean, rows
    cell_cols: int
    log_low: float  # log10 of the lowest colour of a log scale: smaller weights share it


def map_view(maps: LayerMaps, head: int, stat: str, side: int, n_kv_heads: int) -> MapView:
    mean, mx, r_edges, c_edges = coarsen(maps.mean[head], maps.max[head], maps.row_edges, maps.col_edges, side)
    values = mean if stat == "mean" else mx
    masked = future_cells(r_edges, c_edges) if maps.causal else None
    return MapView(
        values=values,
        masked=masked,
        row_edges=r_edges,
        col_edges=c_edges,
        head=head,
        kv_head=head // (maps.mean.shape[0] // n_kv_heads),
        stat=stat,
        cell_rows=int(round(float(np.diff(r_edges).mean()))),
        cell_cols=int(round(float(np.diff(c_edges).mean()))),
        log_low=log_colour_range(values, masked)[0],
    )


@dataclass
class ZoomView:
    """Exact weights of one head in a window of queries x keys, at full resolution."""

    weights: np.ndarray  # (r, c)
    masked: np.ndarray  # (r, c) bool: key after its query (causal; all False for an encoder)
    rows: slice  # query positions
    cols: slice  # key positions
    row_labels: list[str]  # "position token"
    col_labels: list[str]
    head: int
    inside: float  # mean over the window's queries of their weight inside the window
    text: str | None  # the window's queries as text (None for random q and k)

    @property
    def keys(self) -> int:
        return self.cols.stop - self.cols.start

    @property
    def outside(self) -> float:
        """The mean weight the window's queries give keys outside it (each query's weights sum to 1)."""
        return max(0.0, 1.0 - self.inside)


def zoom_view(
    q: torch.Tensor,
    k: torch.Tensor,
    scale: float,
    tokens: list[str] | None,
    head: int,
    q0: int,
    k0: int,
    size: int,
    causal: bool = True,
) -> ZoomView:
    """q (1, H, n, d), k (1, H_kv, n, d); causal (a decoder, random q and k) or not (an encoder); the window moves
    back to fit at the end (zoom_window)."""
    weights, masked, rows, cols = zoom_window(q, k, scale, causal, head, q0, k0, size)
    names = tokens if tokens is not None else [""] * q.shape[2]
    return ZoomView(
        weights=weights,
        masked=masked,
        rows=rows,
        cols=cols,
        row_labels=[f"{i} {names[i]}" for i in range(rows.start, rows.stop)],
        col_labels=[f"{j} {names[j]}" for j in range(cols.start, cols.stop)],
        head=head,
        inside=float(weights.sum(-1).mean()),
        text=None if tokens is None else "".join(tokens[rows.start : rows.stop]),
    )


@dataclass(frozen=True)
class SentBytes:
    """Bytes of plotly JSON the computed page sends to the browser: each figure's, and in all (the budget is 1 MB)."""

    bars: int
    pooled_map: int
    zoom: int

    @property
    def total(self) -> int:
        return self.bars + self.pooled_map + self.zoom


POOLED_RESULT = "bench_pooled"  # results/bench_pooled.json, written by benchmarks/bench_pooled.py
POOLED_PARTS = ("target", "sizes", "smollm2")  # the benchmark's --parts, each {"rows": [...], "command": ...}
# The exact maps' targets on a GPU: at most this many times one SDPA forward of the same shape (cuDNN's), by n, and
# at most this much extra memory. Two passes over QK^T cost SDPA's matrix FLOPs, so parity is the physical bound.
GPU_TARGET_RATIO = {65_536: 1.5, 131_072: 1.3}
GPU_TARGET_BYTES = 256 * 1024**2


def _is_pooled_run(run: dict) -> bool:
    return any(isinstance(run[part]["rows"], list) for part in POOLED_PARTS if part in run)


def pooled_runs() -> dict | None:
    """{device: run, or why not measured} of benchmarks/bench_pooled.py; None when nothing is committed."""
    return load_device_runs(POOLED_RESULT, _is_pooled_run)


def measured_smollm2(min_tokens: int = 0) -> list[dict]:
    """SmolLM2 rows (n_tokens, layer, forward_s, pool_s, loadavg_1min) of results/bench_pooled.json with at least
    `min_tokens` tokens; [] when the benchmark has not been run with --smollm2."""
    cpu = (pooled_runs() or {}).get("cpu")
    part = cpu.get("smollm2") if isinstance(cpu, dict) else None
    rows = part["rows"] if isinstance(part, dict) and isinstance(part.get("rows"), list) else []
    return [r for r in rows if isinstance(r, dict) and r.get("n_tokens", 0) >= min_tokens]


@dataclass(frozen=True)
class ExactMapsTiming:
    """One committed timing of the exact pooled maps beside one SDPA forward of the same shape and device."""

    seq_len: int
    heads: int
    head_dim: int
    dtype: str
    causal: bool
    path: str  # "pooled/triton" or "pooled/torch"
    ms: float
    peak_bytes: int  # extra memory of the maps
    check: float | None  # largest difference of the rows checked independently
    sdpa_path: str  # "sdpa/cudnn" on CUDA, "sdpa/flash" on CPU
    sdpa_ms: float
    sdpa_peak_bytes: int

    @property
    def ratio(self) -> float:
        return self.ms / self.sdpa_ms

    @property
    def target(self) -> float | None:
        """The GPU target ratio at this length, where one is set."""
        return GPU_TARGET_RATIO.get(self.seq_len)

    @property
    def target_met(self) -> bool | None:
        return None if self.target is None else self.ratio <= self.target


@dataclass(frozen=True)
class GpuTargets:
    """The Triton kernel's timings at the lengths with a target, and its largest extra memory against the limit."""

    aimed: list[ExactMapsTiming]
    most_bytes: int
    memory_met: bool


def gpu_targets(timings: list[ExactMapsTiming]) -> GpuTargets | None:
    """None when the run has no Triton timing at a length with a target (a CPU run)."""
    triton = [t for t in timings if t.path == "pooled/triton"]
    aimed = [t for t in triton if t.target is not None]
    if not aimed:
        return None
    most = max(t.peak_bytes for t in triton)
    return GpuTargets(aimed, most, most <= GPU_TARGET_BYTES)


def exact_maps_timings(run: dict) -> list[ExactMapsTiming]:
    """The pooled rows of a bench_pooled run's target and sizes parts that ran, each beside the SDPA row of the same
    label, by length, causal mask and path."""
    out = []
    for part in ("target", "sizes"):
        rows = [r for r in run.get(part, {}).get("rows", []) if r.get("status") == "ok"]
        sdpa = {r["label"]: r for r in rows if r["path"].startswith("sdpa/")}
        for r in rows:
            ref = sdpa.get(r["label"])
            if r["path"].startswith("pooled/") and ref is not None:
                out.append(
                    ExactMapsTiming(
                        seq_len=r["seq_len"],
                        heads=r["heads"],
                        head_dim=r["head_dim"],
                        dtype=r["dtype"],
                        causal=bool(r["causal"]),
                        path=r["path"],
                        ms=r["ms"],
                        peak_bytes=r["peak_bytes"],
                        check=r.get("check_max_abs_diff"),
                        sdpa_path=ref["path"],
                        sdpa_ms=ref["ms"],
                        sdpa_peak_bytes=ref["peak_bytes"],
                    )
                )
    return sorted(out, key=lambda t: (t.seq_len, t.causal, t.path))
