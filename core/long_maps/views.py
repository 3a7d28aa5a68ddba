"""What each part of the /long-maps page shows, from the pooled maps (maps.LayerMaps) and the layer's q and k, in
one object per part: the per-head shares, one head's pooled map at the chosen resolution, and a full-resolution
window. Also the SmolLM2 timings committed in results/bench_pooled.json, read through core.results."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..results import load_result
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


def measured_smollm2(min_tokens: int = 0) -> list[dict]:
    """SmolLM2 rows (n_tokens, layer, forward_s, pool_s, loadavg_1min) of results/bench_pooled.json with at least
    `min_tokens` tokens; [] when the benchmark has not been run with --smollm2."""
    data = load_result("bench_pooled", required=lambda d: isinstance(d["cpu"]["smollm2"]["rows"], list))
    rows = [] if data is None else data["cpu"]["smollm2"]["rows"]
    return [r for r in rows if isinstance(r, dict) and r.get("n_tokens", 0) >= min_tokens]
