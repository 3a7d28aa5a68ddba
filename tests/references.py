"""Independent references for tests: plain loops that the vectorised code in core/ is checked against.

pool_matrix: block pooling as a Python loop over blocks with numpy's NaN-aware mean (or max); NaN cells (masked)
are ignored, a block of only NaN stays NaN. Same bins as core.pooling.bin_edges (whose sizes are tested apart).
numpy_rollout: attention rollout (Abnar & Zuidema 2020) written out in numpy."""

from __future__ import annotations

import warnings

import numpy as np
import torch

from core.pooling import bin_edges


def pool_matrix(matrix, max_size: int, reduce: str = "mean"):
    """Pool a (rows, cols) matrix to at most (max_size, max_size). Returns (pooled, row_edges, col_edges)."""
    m = matrix.detach().cpu().numpy() if isinstance(matrix, torch.Tensor) else np.asarray(matrix)
    m = m.astype(np.float64)
    r_edges, c_edges = bin_edges(m.shape[0], max_size), bin_edges(m.shape[1], max_size)
    fn = np.nanmean if reduce == "mean" else np.nanmax
    out = np.full((len(r_edges) - 1, len(c_edges) - 1), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN blocks: NaN, as intended
        for i in range(len(r_edges) - 1):
            for j in range(len(c_edges) - 1):
                out[i, j] = fn(m[r_edges[i] : r_edges[i + 1], c_edges[j] : c_edges[j + 1]])
    return out, r_edges, c_edges


def numpy_rollout(trace, index: int, last: int) -> np.ndarray:
    """For each layer 0..last: average the heads' (m, m) weights over the real tokens, add the identity
    (0.5 A + 0.5 I), normalise rows, and multiply onto the product of the layers below (R <- A_layer @ R)."""
    m = trace.length(index)
    result = np.eye(m)
    for layer in range(last + 1):
        heads = [trace.attention(layer, h, index)[:m, :m].double().numpy() for h in range(trace.n_heads)]
        a = 0.5 * np.mean(heads, axis=0) + 0.5 * np.eye(m)
        a /= a.sum(axis=1, keepdims=True)
        result = a @ result
    return result
