"""Exact softmax attention maps of every head at long lengths, pooled to at most s x s cells, never holding n x n.

A browser cannot draw 131,072 x 131,072 weights, and a GPU cannot even hold them (68 GB per head in float32).
What can be shown exactly is the weight matrix pooled into s x s cells (s <= 512): each cell the mean (and the
max) of the exact weights of a block of queries (rows) against a block of keys (columns).

Two block-wise passes over the scores, each computing q k^T tile by tile and dropping the tile afterwards:
 1. row log-sum-exp: lse_i = log sum_j exp(scale q_i . k_j), by an online max/sum over key tiles;
 2. pooled weights: w_ij = exp(scale q_i . k_j - lse_i) is then exact for every tile, and each tile is reduced to
    its cells (sum and max) at once.
When a strip of query rows fits in memory against all its keys (n up to ~16k with the default tile size), both
passes share one score tile.

Bins: core.pooling.bin_edges(n, s), the same as every pooled view: contiguous, and when s does not divide n their
sizes differ by at most one (floor(n/s) or ceil(n/s) tokens; the larger ones spread evenly by rounding). A cell's
mean divides by its own number of entries (rows in its row bin x keys in its key bin).
Causal: masked entries (key after query) are weights of exactly 0 and count as such in the mean, i.e. the mean
is the mean of that block of the full n x n matrix (core.pooling.block_mean without a mask). Cells entirely above
the diagonal are 0 without being computed.

On CUDA with Triton installed, `backend="auto"` runs the fused kernels in core/long_maps/triton_kernels.py (same
two passes, one kernel each, no score tile ever written to memory); this module's torch code is the fallback and
the reference the kernels are tested against.

Shapes: q (B, H, n, d); k (B, H_kv, n_k, d) with H a multiple of H_kv (grouped-query attention: query head h uses
key head h // (H / H_kv), as in transformers' repeat_kv).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..pooling import bin_edges
from ..sdpa import scale_or_default

DEFAULT_TILE_ELEMENTS = {"cpu": 2**23, "cuda": 2**27}  # scores held at once: 32 MB on CPU, 512 MB on CUDA
MAX_OUT_SIZE = 512
MAX_ZOOM = 512 * 512  # cells of a full-resolution window


@dataclass
class PooledAttention:
    mean: torch.Tensor  # (B, H, s_q, s_k) float32: mean weight of each block
    max: torch.Tensor  # (B, H, s_q, s_k) float32: largest weight in each block
    row_edges: np.ndarray  # (s_q + 1,) query bin edges: cell row a covers queries row_edges[a]:row_edges[a+1]
    col_edges: np.ndarray  # (s_k + 1,) key bin edges
    backend: str  # "torch" or "triton"


def _check(q: torch.Tensor, k: torch.Tensor, causal: bool) -> None:
    if q.dim() != 4 or k.dim() != 4:
        raise ValueError("q and k must be (B, H, n, d)")
    if q.shape[0] != k.shape[0] or q.shape[-1] != k.shape[-1]:
        raise ValueError("q and k must share batch size and head size")
    if q.shape[1] % k.shape[1]:
        raise ValueError("the number of query heads must be a multiple of the number of key heads")
    if causal and q.shape[2] != k.shape[2]:
        raise ValueError("causal pooling needs as many queries as keys (self-attention)")


def _scores(q_strip: torch.Tensor, k_block: torch.Tensor, scale: float) -> torch.Tensor:
    """(B, H, r, c) float32 scores of a query strip against a key block, K never repeated for GQA: the query heads
    that share a key head are stacked along rows and multiplied by that key head once."""
    b, h, r, d = q_strip.shape
    h_kv, c = k_block.shape[1], k_block.shape[2]
    rep = h // h_kv
    qg = q_strip.float().reshape(b, h_kv, rep * r, d) * scale
    return (qg @ k_block.float().transpose(-2, -1)).view(b, h, r, c)


def _mask_future(scores: torch.Tensor, row0: int, col0: int) -> torch.Tensor:
    """Set scores of keys after their query to -inf, in place (tile at rows row0.., columns col0..)."""
    r, c = scores.shape[-2:]
    if col0 + c - 1 <= row0:  # the whole tile is on or below the diagonal
        return scores
    rows = torch.arange(row0, row0 + r, device=scores.device)[:, None]
    cols = torch.arange(col0, col0 + c, device=scores.device)[None, :]
    return scores.masked_fill_(cols > rows, float("-inf"))


def _group(size_of: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive bins [a, b) whose sizes sum to at most `budget` (at least one bin per group)."""
    groups, start, total = [], 0, 0
    for i, size in enumerate(size_of):
        if i > start and total + size > budget:
            groups.append((start, i))
            start, total = i, 0
        total += int(size)
    groups.append((start, len(size_of)))
    return groups


def _reduce_bins(x: torch.Tensor, edges: np.ndarray, dim: int, op: str) -> torch.Tensor:
    """Sum or max of x over contiguous bins along `dim` (edges relative to x, starting at 0). Equal bins are a
    reshape; unequal ones (sizes differ by one) gather each bin padded to the largest size, the padding
    repeating the bin's last element: harmless for max, and zeroed for sum."""
    dim = dim % x.dim()
    sizes = np.diff(edges)
    n_bins, largest = len(sizes), int(sizes.max())
    if (sizes == largest).all():
        shaped = x.reshape(*x.shape[:dim], n_bins, largest, *x.shape[dim + 1 :])
        return shaped.sum(dim + 1) if op == "sum" else shaped.amax(dim + 1)
    offset = np.arange(largest)[None, :]
    index = edges[:-1, None] + np.minimum(offset, sizes[:, None] - 1)  # (n_bins, largest)
    gathered = x.index_select(dim, torch.as_tensor(index.reshape(-1), device=x.device))
    gathered = gathered.reshape(*x.shape[:dim], n_bins, largest, *x.shape[dim + 1 :])
    if op == "max":
        return gathered.amax(dim + 1)
    padding = torch.as_tensor(offset >= sizes[:, None], device=x.device)  # (n_bins, largest)
    padding = padding.reshape((n_bins, largest) + (1,) * (x.dim() - dim - 1))
    return gathered.masked_fill_(padding, 0.0).sum(dim + 1)


def row_logsumexp(
    q, k, scale: float | None = None, causal: bool = False, tile_elements: int | None = None
) -> torch.Tensor:
    """(B, H, n_q) float32 log sum_j exp(scale q_i . k_j) over the keys each query may see, block by block."""
    _check(q, k, causal)
    scale = scale_or_default(scale, q.shape[-1])
    b, h, n_q, _ = q.shape
    n_k = k.shape[2]
    tile = tile_elements or DEFAULT_TILE_ELEMENTS.get(q.device.type, DEFAULT_TILE_ELEMENTS["cpu"])
    rows = max(1, min(n_q, tile // max(1, b * h * n_k)))
    cols = max(1, min(n_k, tile // max(1, b * h * rows)))
    out = torch.empty(b, h, n_q, dtype=torch.float32, device=q.device)
    for r0 in range(0, n_q, rows):
        r1 = min(n_q, r0 + rows)
        out[:, :, r0:r1] = _strip_lse(q[:, :, r0:r1], k, r0, scale, causal, cols)
    return out


def _strip_lse(q_strip, k, row0: int, scale: float, causal: bool, cols: int) -> torch.Tensor:
    """Online log-sum-exp of one query strip over key blocks of `cols` keys (only up to the diagonal if causal)."""
    r = q_strip.shape[2]
    end = min(k.shape[2], row0 + r) if causal else k.shape[2]
    running_max = running_sum = None
    for c0 in range(0, end, cols):
        s = _scores(q_strip, k[:, :, c0 : min(end, c0 + cols)], scale)
        if causal:
            _mask_future(s, row0, c0)
        block_max = s.amax(-1)
        if running_max is None:
            running_max = block_max
            running_sum = s.sub_(block_max.unsqueeze(-1)).exp_().sum(-1)
        else:
            new_max = torch.maximum(running_max, block_max)
            running_sum = running_sum * torch.exp(running_max - new_max) + s.sub_(new_max.unsqueeze(-1)).exp_().sum(-1)
            running_max = new_max
    return running_max + torch.log(running_sum)


def pooled_attention(
    q,
    k,
    out_size: int = MAX_OUT_SIZE,
    causal: bool = False,
    scale: float | None = None,
    tile_elements: int | None = None,
    backend: str = "auto",
) -> PooledAttention:
    """Exact softmax(scale q k^T) of every head, pooled to (B, H, s_q, s_k) means and maxes, s = min(out_size, n).
    Never holds more than about `tile_elements` scores at once. backend: "auto" (Triton on CUDA when importable),
    "torch" or "triton"."""
    _check(q, k, causal)
    if not 1 <= out_size <= 4096:
        raise ValueError("out_size must be in [1, 4096]")
    scale = scale_or_default(scale, q.shape[-1])
    row_edges, col_edges = bin_edges(q.shape[2], out_size), bin_edges(k.shape[2], out_size)
    if backend not in ("auto", "torch", "triton"):
        raise ValueError("backend must be auto, torch or triton")
    if backend != "torch" and (backend == "triton" or q.is_cuda):
        from . import triton_kernels as kernels

        if backend == "triton" or kernels.available(q):
            mean, mx = kernels.pooled_attention(q, k, row_edges, col_edges, causal, scale)
            return PooledAttention(mean, mx, row_edges, col_edges, "triton")
    mean, mx = _pooled_torch(q, k, row_edges, col_edges, causal, scale, tile_elements)
    return PooledAttention(mean, mx, row_edges, col_edges, "torch")


def _pooled_torch(q, k, row_edges, col_edges, causal, scale, tile_elements):
    b, h, n_q, _ = q.shape
    n_k = k.shape[2]
    tile = tile_elements or DEFAULT_TILE_ELEMENTS.get(q.device.type, DEFAULT_TILE_ELEMENTS["cpu"])
    row_sizes, col_sizes = np.diff(row_edges), np.diff(col_edges)
    s_q, s_k = len(row_sizes), len(col_sizes)
    total = torch.zeros(b, h, s_q, s_k, dtype=torch.float32, device=q.device)
    largest = torch.zeros_like(total)
    # Query strips are whole row bins and key blocks whole key bins, so every tile reduces to complete cells.
    # If a strip of rows fits against every key, one score tile serves both passes; else two passes.
    full_rows = tile // max(1, b * h * n_k)
    one_pass = full_rows >= row_sizes.max()
    if one_pass:
        strips, key_blocks = _group(row_sizes, full_rows), [(0, s_k)]
    else:
        side = max(int(row_sizes.max()), int(col_sizes.max()), math.isqrt(max(1, tile // (b * h))))
        strips, key_blocks = _group(row_sizes, side), _group(col_sizes, max(1, tile // (b * h * side)))
    for a0, a1 in strips:
        r0, r1 = int(row_edges[a0]), int(row_edges[a1])
        q_strip = q[:, :, r0:r1]
        # causal: key bins starting after the strip's last query hold only zeros (left as initialised)
        seen = int(np.searchsorted(col_edges[:-1], r1, side="left")) if causal else s_k
        blocks = [(c0, min(c1, seen)) for c0, c1 in key_blocks if c0 < seen]
        lse = None if one_pass else _strip_lse(q_strip, k, r0, scale, causal, max(1, tile // (b * h * (r1 - r0))))
        for c0, c1 in blocks:
            k0, k1 = int(col_edges[c0]), int(col_edges[c1])
            s = _scores(q_strip, k[:, :, k0:k1], scale)
            if causal:
                _mask_future(s, r0, k0)
            if one_pass:  # the tile holds every key of its rows: normalise it directly
                weights = s.sub_(s.amax(-1, keepdim=True)).exp_()
                weights = weights.div_(weights.sum(-1, keepdim=True))
            else:
                weights = s.sub_(lse.unsqueeze(-1)).exp_()  # exact: lse covers all keys of each row
            r_edges, c_edges = row_edges[a0 : a1 + 1] - r0, col_edges[c0 : c1 + 1] - k0
            total[:, :, a0:a1, c0:c1] = _reduce_bins(_reduce_bins(weights, c_edges, -1, "sum"), r_edges, -2, "sum")
            largest[:, :, a0:a1, c0:c1] = _reduce_bins(_reduce_bins(weights, c_edges, -1, "max"), r_edges, -2, "max")
    counts = torch.as_tensor(np.outer(row_sizes, col_sizes), dtype=torch.float32, device=q.device)
    return total / counts, largest


def zoom(
    q, k, rows: slice, cols: slice, causal: bool = False, scale: float | None = None, lse: torch.Tensor | None = None
) -> torch.Tensor:
    """(B, H, len(rows), len(cols)) exact weights of a window of the full matrix at full resolution: the rows'
    log-sum-exp over ALL the keys they see (or `lse` from row_logsumexp, reused), then only the window's scores.
    At most MAX_ZOOM cells."""
    _check(q, k, causal)
    scale = scale_or_default(scale, q.shape[-1])
    r0, r1, _ = rows.indices(q.shape[2])
    c0, c1, _ = cols.indices(k.shape[2])
    if r1 <= r0 or c1 <= c0:
        raise ValueError("empty zoom window")
    if (r1 - r0) * (c1 - c0) > MAX_ZOOM:
        raise ValueError(f"a zoom window holds at most {MAX_ZOOM:,} cells")
    q_rows = q[:, :, r0:r1]
    if lse is None:
        per_block = max(1, DEFAULT_TILE_ELEMENTS["cpu"] // (q.shape[0] * q.shape[1] * (r1 - r0)))
        lse_rows = _strip_lse(q_rows, k, r0, scale, causal, per_block)
    else:
        lse_rows = lse[:, :, r0:r1].float()
    s = _scores(q_rows, k[:, :, c0:c1], scale)
    if causal:
        _mask_future(s, r0, c0)
    return s.sub_(lse_rows.unsqueeze(-1)).exp_()
