"""Exact attention maps of a long document, for the long-maps page: the q and k of one layer (a model on a long
text, or random), every head's weights pooled to <= 512 x 512 mean and max cells (core/long_maps/pooled.py),
coarser views merged exactly from those cells, a full-resolution window, and a few numbers read off the maps.

Everything here is exact: a coarser view's cell is the mean (or max) of the same block of the full n x n matrix,
because a block mean is recovered from the finer cells' means weighted by their sizes.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from ..models.base import Batch
from . import pooled as pa

RANDOM_SHAPE = {"heads": 9, "kv_heads": 3, "head_dim": 64}  # SmolLM2's attention shape, for the random demo


def document_batch(model, text: str, n_tokens: int) -> Batch:
    """A one-sequence Batch of the first `n_tokens` tokens of `text` for an HFAttentionModel. Unlike
    model.tokenize it does not stop at the model's trained context (max_positions): the page decides how far to go
    and says when it goes past. Raises ValueError if the text gives no token."""
    if n_tokens < 1:
        raise ValueError("n_tokens must be at least 1")
    all_ids = model.encode(str(text or ""), special_tokens=True)
    if not all_ids:
        raise ValueError(f"{model.name}: the text gives no tokens (is it empty?)")
    return model.batch_of_ids([all_ids[:n_tokens]], texts=[str(text)], truncated=[len(all_ids) > n_tokens])


def layer_qk_of(model, text: str, n_tokens: int, layer: int) -> LayerQK:
    """One layer's q and k of the first n_tokens tokens of `text` by the model, with the forward's time."""
    batch = document_batch(model, text, n_tokens)
    t0 = time.perf_counter()
    q, k, scale = model.layer_qk(batch, layer)
    return LayerQK(q, k, scale, batch.tokens[0], time.perf_counter() - t0)


def pooled_layer(model, text: str, n_tokens: int, layer: int, causal: bool) -> tuple[LayerQK, LayerMaps]:
    """layer_qk_of, then every head pooled (layer_maps, on the default device): the /long-maps page's work."""
    from ..device import default_device

    qk = layer_qk_of(model, text, n_tokens, layer)
    device = default_device()
    return qk, layer_maps(qk.q.to(device), qk.k.to(device), qk.scale, causal=causal)


class LayerQK(NamedTuple):
    """One layer's queries and keys as the page computes them (a model forward, or random)."""

    q: torch.Tensor  # (1, H, n, d)
    k: torch.Tensor  # (1, H_kv, n, d)
    scale: float
    tokens: list[str] | None = None  # None for random q and k
    forward_s: float = 0.0  # seconds of the model forward (0 for random)


def random_qk(
    n: int,
    seed: int = 0,
    spread: float = 1.0,
    heads: int = RANDOM_SHAPE["heads"],
    kv_heads: int = RANDOM_SHAPE["kv_heads"],
    head_dim: int = RANDOM_SHAPE["head_dim"],
):
    """(q (1, heads, n, d), k (1, kv_heads, n, d), scale): independent Gaussian entries with standard deviation
    `spread`, for the demo that runs without model weights. Its maps show only what causal softmax does to
    structureless scores (each row spreads over the keys it may see)."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, heads, n, head_dim, generator=g) * spread
    k = torch.randn(1, kv_heads, n, head_dim, generator=g) * spread
    return q, k, head_dim**-0.5


@dataclass
class LayerMaps:
    """Every head of one layer, pooled (what the page caches; numpy, no tensors)."""

    mean: np.ndarray  # (H, s, s) float32: mean weight of each block of the n x n matrix
    max: np.ndarray  # (H, s, s) float32: largest weight of each block
    row_edges: np.ndarray  # (s + 1,) query bin edges
    col_edges: np.ndarray  # (s + 1,) key bin edges
    causal: bool
    seconds: float  # time the pooling took
    backend: str  # "torch" or "triton"

    @property
    def n(self) -> int:
        return int(self.row_edges[-1])

    @property
    def full_bytes(self) -> int:
        """What the full n x n float32 matrices of these heads would take (for comparison on the page)."""
        return full_matrix_bytes(self.n, self.mean.shape[0])


def layer_maps(
    q: torch.Tensor, k: torch.Tensor, scale: float, causal: bool, out_size: int = pa.MAX_OUT_SIZE
) -> LayerMaps:
    """Pooled exact weights of every head of one sequence's layer: q (1, H, n, d), k (1, H_kv, n, d)."""
    t0 = time.perf_counter()
    pooled = pa.pooled_attention(q, k, out_size, causal=causal, scale=scale)
    seconds = time.perf_counter() - t0
    return LayerMaps(
        pooled.mean[0].cpu().numpy(),
        pooled.max[0].cpu().numpy(),
        pooled.row_edges,
        pooled.col_edges,
        causal,
        seconds,
        pooled.backend,
    )


def coarsen(
    mean: np.ndarray, mx: np.ndarray, row_edges: np.ndarray, col_edges: np.ndarray, side: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge groups of `factor` = ceil(s / side) consecutive bins on each axis of (..., s_q, s_k) pooled maps:
    (mean, max, row_edges, col_edges) with at most `side` cells a side. Exact: a merged cell's mean is the sum
    of its cells' means times their sizes over its own size, its max the largest max."""

    def starts(edges):
        s = len(edges) - 1
        factor = max(1, math.ceil(s / side))
        first = np.arange(0, s, factor)
        return first, np.append(edges[first], edges[-1])

    r_first, r_edges = starts(row_edges)
    c_first, c_edges = starts(col_edges)
    if len(r_first) == len(row_edges) - 1 and len(c_first) == len(col_edges) - 1:
        return mean, mx, row_edges, col_edges
    counts = np.outer(np.diff(row_edges), np.diff(col_edges)).astype(np.float64)
    mass = np.add.reduceat(np.add.reduceat(mean.astype(np.float64) * counts, r_first, axis=-2), c_first, axis=-1)
    new_counts = np.outer(np.diff(r_edges), np.diff(c_edges))
    big = np.maximum.reduceat(np.maximum.reduceat(mx, r_first, axis=-2), c_first, axis=-1)
    return (mass / new_counts).astype(np.float32), big.astype(np.float32), r_edges, c_edges


def future_cells(row_edges: np.ndarray, col_edges: np.ndarray) -> np.ndarray:
    """(s_q, s_k) bool: True where every key of the cell comes after every query of it (causal: all masked,
    weight exactly 0 by construction rather than by what the model computed)."""
    last_query = row_edges[1:] - 1
    first_key = col_edges[:-1]
    return first_key[None, :] > last_query[:, None]


def head_summary(maps: LayerMaps) -> dict[str, np.ndarray]:
    """Per head, read off the exact pooled means (each query's weights sum to 1, so block mean x block size is
    the block's share of its rows' total):
      first_share   average over all queries of the weight on the keys of the first key bin (attention sink);
      own_bin_share average over all queries of the weight on keys in the query's own bin (local attention,
                    meaningful when rows and columns share bins, as in self-attention);
      row_sum_error largest |sum over a row bin's cells of mean x size / rows - 1|: a check that rows sum to 1."""
    rows, cols = np.diff(maps.row_edges), np.diff(maps.col_edges)
    mass = maps.mean.astype(np.float64) * np.outer(rows, cols)  # (H, s_q, s_k): weight summed in block
    n_q = rows.sum()
    diag = min(mass.shape[-2], mass.shape[-1])
    own = np.trace(mass[:, :diag, :diag], axis1=-2, axis2=-1) / n_q
    return {
        "first_share": mass[:, :, 0].sum(-1) / n_q,
        "own_bin_share": own,
        "row_sum_error": np.abs(mass.sum(-1) / rows - 1.0).max(-1),
    }


def zoom_window(
    q: torch.Tensor, k: torch.Tensor, scale: float, causal: bool, head: int, q0: int, k0: int, size: int
) -> tuple[np.ndarray, np.ndarray, slice, slice]:
    """(weights (r, c), masked (r, c), rows, cols): head `head`'s exact weights of `size` queries from q0 and
    `size` keys from k0, at full resolution (core.long_maps.pooled.zoom: each row's normaliser runs over every key
    it sees). A window that would run past the end is moved back to fit (shorter only if n < size).
    masked: keys after their query (causal)."""
    n_q, n_k = q.shape[2], k.shape[2]
    q0, k0 = max(0, min(q0, n_q - size)), max(0, min(k0, n_k - size))
    rows, cols = slice(q0, min(n_q, q0 + size)), slice(k0, min(n_k, k0 + size))
    kv = head // (q.shape[1] // k.shape[1])
    w = pa.zoom(q[:, head : head + 1], k[:, kv : kv + 1], rows, cols, causal=causal, scale=scale)[0, 0]
    r = np.arange(rows.start, rows.stop)[:, None]
    c = np.arange(cols.start, cols.stop)[None, :]
    masked = (c > r) if causal else np.zeros((len(r), c.shape[1]), dtype=bool)
    return w.numpy(), masked, rows, cols


def full_matrix_bytes(n: int, heads: int = 1, bytes_per: int = 4) -> int:
    """What sending the full n x n float32 matrix of `heads` heads would take (for comparison on screen)."""
    return int(n) * int(n) * heads * bytes_per


LOG_DECADES = 8  # a log colour scale covers at most this many decades below the largest value


def log_colour_range(values: np.ndarray, masked: np.ndarray | None = None, decades: int = LOG_DECADES):
    """(low, top) in log10 units of the colour scale of a map of weights: top = log10 of the largest value not
    masked; low = log10 of the smallest positive one, but at most `decades` below top (weights of a long
    sequence span many decades: a row of 8,192 keys averages 1/8,192) and at least a little below top.
    Values under 10**low share the lowest colour."""
    z = np.asarray(values, dtype=np.float64)
    shown = z if masked is None else z[~np.asarray(masked, dtype=bool)]
    shown = shown[np.isfinite(shown)]
    top = float(shown.max()) if shown.size else 1.0
    top_log = float(np.log10(top)) if top > 0 else 0.0
    positive = shown[shown > 0]
    low = max(float(np.log10(positive.min())) if positive.size else top_log - 1, top_log - decades)
    return min(low, top_log - 1e-3), top_log
