"""Learned absolute position embeddings (BERT, GPT-2, MiniLM): one trained vector per position, added to the
token embedding. Nothing forces neighbouring positions to look alike; whatever structure the similarity matrix
shows was learned from data. Positions past the table (512 for MiniLM) simply do not exist. (The table itself comes from the model wrapper:
core.models.minilm.minilm_position_embeddings.)
"""

from __future__ import annotations

import numpy as np
import torch


def cosine_similarity_matrix(vectors: torch.Tensor) -> np.ndarray:
    """(n, n) cosine similarity between rows."""
    v = vectors.double()
    v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return (v @ v.T).numpy()


def similarity_by_distance(sim: np.ndarray) -> dict[str, np.ndarray]:
    """Mean, min and max of sim[i, i + k] over all i, for each distance k = 0 .. n-1: does similarity fall off with
    distance, and does it depend on where the pair sits (a wide min-max range says it does)?"""
    n = sim.shape[0]
    mean, lo, hi = np.empty(n), np.empty(n), np.empty(n)
    for k in range(n):
        diag = np.diagonal(sim, offset=k)
        mean[k], lo[k], hi[k] = diag.mean(), diag.min(), diag.max()
    return {"distance": np.arange(n), "mean": mean, "min": lo, "max": hi}


def block_mean(matrix: np.ndarray, factor: int) -> np.ndarray:
    """Average non-overlapping factor x factor blocks (the sides must divide by factor)."""
    n_r, n_c = matrix.shape
    if factor <= 1:
        return matrix
    if n_r % factor or n_c % factor:
        raise ValueError("matrix sides must divide by factor")
    return matrix.reshape(n_r // factor, factor, n_c // factor, factor).mean(axis=(1, 3))
