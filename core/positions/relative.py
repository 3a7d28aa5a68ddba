"""Relative position representations (Shaw, Uszkoreit and Vaswani 2018).

Instead of adding a position vector to each token, the score of query i on key j gets a learned vector for the
*offset* between them:  e_ij = (Q_i . K_j + Q_i . E_r) / sqrt(d),  r = clip(i - j, -k, k).
Offsets beyond the clipping distance k share one vector: the paper found k = 16 (even k = 2 for translation)
enough, because precise distance matters most nearby. Only 2k + 1 vectors are learned, so any sequence
length works.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..sdpa import masked_softmax


def relative_offsets(n_queries: int, n_keys: int | None = None) -> torch.Tensor:
    """(n_queries, n_keys) matrix of i - j (query position minus key position)."""
    n_keys = n_queries if n_keys is None else n_keys
    return torch.arange(n_queries)[:, None] - torch.arange(n_keys)[None, :]


def clipped_offset_index(n_queries: int, clip: int, n_keys: int | None = None) -> torch.Tensor:
    """Row index into the (2*clip + 1, d) table E for each (i, j): clip(i - j, -clip, clip) + clip."""
    if clip < 0:
        raise ValueError("clip must be >= 0")
    return relative_offsets(n_queries, n_keys).clamp(-clip, clip) + clip


def shaw_relative_scores(
    q: torch.Tensor, rel_table: torch.Tensor, clip: int, n_keys: int | None = None
) -> torch.Tensor:
    """S_ij = Q_i . E_clip(i-j). q (..., n, d), rel_table (2*clip + 1, d): row r + clip holds E_r.
    Computed as Q E^T (n x (2k+1)) then gathered, so no (n, n, d) tensor is built."""
    if rel_table.shape[0] != 2 * clip + 1:
        raise ValueError(f"rel_table needs 2*clip + 1 = {2 * clip + 1} rows, got {rel_table.shape[0]}")
    n = q.shape[-2]
    per_offset = q @ rel_table.transpose(-2, -1)  # (..., n, 2k + 1)
    index = clipped_offset_index(n, clip, n_keys)  # (n, n_keys)
    index = index.expand(*per_offset.shape[:-2], *index.shape)
    return torch.gather(per_offset, -1, index)


def shaw_attention(
    q: torch.Tensor, k: torch.Tensor, rel_table: torch.Tensor, clip: int, mask: torch.Tensor | None = None
) -> dict[str, torch.Tensor]:
    """The three score matrices and the weights: content Q K^T, relative S, and softmax((QK^T + S) / sqrt(d))."""
    content = q @ k.transpose(-2, -1)
    relative = shaw_relative_scores(q, rel_table, clip, k.shape[-2])
    scores = (content + relative) / math.sqrt(q.shape[-1])
    return {"content": content, "relative": relative, "scores": scores, "weights": masked_softmax(scores, mask)}


@dataclass(frozen=True)
class ShawView:
    clip: int
    offsets: np.ndarray  # (n, n) clip(i - j, -k, k): which E each score uses
    relative: np.ndarray  # (n, n) S_ij = Q_i . E_clip(i-j)
    weights: np.ndarray  # (n, n) softmax((QK^T + S) / sqrt(d))
    clipped_spread: float  # largest max - min of S over the keys beyond k on one side of a row (~0: shared vector)
    change: float  # largest |weights - softmax(QK^T / sqrt(d))|: what adding S changed
    pairwise_numbers: int = 0  # an (n, n, d) tensor of every pair's E_clip(i-j): Shaw et al.'s formulation
    gathered_numbers: int = 0  # Q E^T, (n, 2k + 1), then gathered into place: the memory-saving order
    offsets_used: int = 0  # 2k + 1: the clipped offsets -k .. k, one learned vector each

    @property
    def labels(self) -> list[str]:
        """The positions naming the rows (queries) and columns (keys) of the three matrices, in figures and CSVs."""
        return [str(i) for i in range(self.offsets.shape[0])]


def shaw_view(n: int, d: int, clip: int, seed: int) -> ShawView:
    """Shaw attention on random (seeded) Q, K and E of n tokens and head size d: a mechanism, not a trained model."""
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(n, d, generator=g), torch.randn(n, d, generator=g)
    table = torch.randn(2 * clip + 1, d, generator=g)
    out = shaw_attention(q, k, table, clip)
    offset = relative_offsets(n)
    spread = 0.0
    for beyond in (offset > clip, offset < -clip):  # keys past the clipping distance, each side of the query
        for i in range(n):
            vals = out["relative"][i][beyond[i]]
            if vals.numel() > 1:
                spread = max(spread, float(vals.max() - vals.min()))
    content_only = torch.softmax(out["content"] / math.sqrt(d), -1)
    return ShawView(
        clip,
        (clipped_offset_index(n, clip) - clip).numpy(),
        out["relative"].numpy(),
        out["weights"].numpy(),
        spread,
        float((out["weights"] - content_only).abs().max()),
        n * n * d,
        n * (2 * clip + 1),
        2 * clip + 1,
    )
