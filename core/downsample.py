"""Shrinking big matrices before they go to the browser: block means over (nearly) equal bins."""

import numpy as np
import torch


def bin_edges(n: int, n_bins: int) -> np.ndarray:
    """n_bins + 1 edges splitting range(n) into contiguous bins whose sizes differ by at most one."""
    n_bins = max(1, min(n_bins, n))
    return np.round(np.linspace(0, n, n_bins + 1)).astype(int)


def pool_matrix(matrix, max_size: int, reduce: str = "mean"):
    """Pool a (rows, cols) matrix to at most (max_size, max_size) with mean (or max) over blocks.
    NaN cells (masked) are ignored; a block with only NaN stays NaN. Returns (pooled, row_edges, col_edges)."""
    m = matrix.detach().cpu().numpy() if isinstance(matrix, torch.Tensor) else np.asarray(matrix)
    m = m.astype(np.float64)
    r_edges, c_edges = bin_edges(m.shape[0], max_size), bin_edges(m.shape[1], max_size)
    if len(r_edges) - 1 == m.shape[0] and len(c_edges) - 1 == m.shape[1]:
        return m, r_edges, c_edges
    fn = np.nanmean if reduce == "mean" else np.nanmax
    out = np.full((len(r_edges) - 1, len(c_edges) - 1), np.nan)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for i in range(len(r_edges) - 1):
                block_rows = m[r_edges[i] : r_edges[i + 1]]
                for j in range(len(c_edges) - 1):
                    out[i, j] = fn(block_rows[:, c_edges[j] : c_edges[j + 1]])
    return out, r_edges, c_edges


def bin_labels(labels: list[str], edges: np.ndarray) -> list[str]:
    """Labels for pooled bins: the token itself for a bin of one, else 'first…last (i–j)'."""
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        out.append(labels[a] if b - a == 1 else f"{labels[a]}…{labels[b - 1]} ({a}–{b - 1})")
    return out
