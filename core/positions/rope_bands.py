"""RoPE in a real model: how much each frequency pair of SmolLM2's rotated q and k contributes to its scores.

In the rotate_half layout that most transformers families store, pair i (i = 0 .. d/2 - 1, fastest first) is
dimensions (i, i + d/2); families that rotate interleaved pairs (GPT-J, Cohere: capabilities' rope_pairs) keep pair i
in dimensions (2i, 2i + 1). Either way q . k splits exactly into d/2 per-pair parts, and contiguous runs of pairs
into bands: the pairing decides which part belongs to which frequency.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..pooling import indexed_labels


def pair_parts(x: torch.Tensor, pairs: str = "half") -> tuple[torch.Tensor, torch.Tensor]:
    """(first, second) members of each rotation pair of x (..., d), each (..., d/2): pairs "half" are dimensions
    (i, i + d/2), "interleaved" (2i, 2i + 1)."""
    if pairs == "interleaved":
        return x[..., 0::2], x[..., 1::2]
    half = x.shape[-1] // 2
    return x[..., :half], x[..., half:]


def join_pairs(first: torch.Tensor, second: torch.Tensor, pairs: str = "half") -> torch.Tensor:
    """pair_parts undone: (..., d/2) first and second members back into (..., d) in the `pairs` layout."""
    if pairs == "interleaved":
        return torch.stack((first, second), dim=-1).flatten(-2)
    return torch.cat((first, second), dim=-1)


def frequency_band_contributions(q: torch.Tensor, k: torch.Tensor, n_bands: int, pairs: str = "half") -> torch.Tensor:
    """Split q . k into the part each frequency band contributes. q (n_q, d), k (n_k, d) already rotated, their
    pairs laid out as `pairs` says (pair_parts); bands are contiguous runs of pairs, band 0 the fastest-rotating.
    Returns (n_bands, n_q, n_k); the bands sum to q @ k.T exactly."""
    half = q.shape[-1] // 2
    (q1, q2), (k1, k2) = pair_parts(q, pairs), pair_parts(k, pairs)
    per_pair = q1[:, None] * k1[None] + q2[:, None] * k2[None]  # (n_q, n_k, d/2)
    return torch.stack([per_pair[..., a:b].sum(-1) for a, b in band_edges(half, n_bands)])


def band_edges(half: int, n_bands: int) -> list[tuple[int, int]]:
    """The [start, end) pair indices of each band used by frequency_band_contributions."""
    n_bands = max(1, min(n_bands, half))
    edges = torch.linspace(0, half, n_bands + 1).round().long().tolist()
    return list(zip(edges[:-1], edges[1:]))


def mean_share(parts: torch.Tensor, visible: torch.Tensor) -> np.ndarray:
    """parts (p, n_q, n_k) signed pieces of one score matrix -> (p,): each piece's share of the summed |pieces|,
    averaged over the visible (query, key) cells."""
    share = parts.abs() / parts.abs().sum(0).clamp_min(1e-30)
    return share[:, visible].mean(-1).numpy()


@dataclass(frozen=True)
class BandsView:
    layer: int
    head: int
    kv_head: int  # the key/value head this query head reads (grouped-query attention)
    labels: list[str]  # (n,) '3 cat': each token with its position (unique, for the axes)
    q: np.ndarray  # (n, d) rotated queries, as the model holds them (pairs: rope_pairs)
    k: np.ndarray  # (n, d) rotated keys
    visible: np.ndarray  # (n, n) bool: causal mask of the sequence
    pair_share: np.ndarray  # (d/2,) each pair's mean share of |score|
    band_pairs: list[tuple[int, int]]  # (n_bands,) first and last pair of each band (inclusive)
    band_scores: np.ndarray  # (n_bands, n, n) each band's part of the scaled score q.k * scale
    band_share: np.ndarray  # (n_bands,) each band's mean share of |score|
    max_diff: float  # |sum of bands - the model's scaled scores| over visible cells: ~0

    @property
    def dims(self) -> list[str]:
        """The dimensions naming the columns of `q` and `k`, in their figures and CSVs."""
        return [str(j) for j in range(self.q.shape[1])]


def bands_view(trace, layer: int, head: int, n_bands: int, pairs: str = "half") -> BandsView:
    """Split one head's scaled scores q.k * scale (sequence 0 of a Trace) by frequency pair and into n_bands
    bands; `pairs`: how the model lays out its rotation pairs (capabilities' positions.rope_pairs). Layer and head
    are clipped to what the model has."""
    layer = min(max(layer, 0), trace.n_layers - 1)
    head = min(max(head, 0), trace.n_heads - 1)
    q = trace.queries[layer][0, head].double()  # (n, d)
    g = trace.kv_head(head)
    k = trace.keys[layer][0, g].double()  # (n, d)
    visible = trace.mask(0)
    half = q.shape[-1] // 2
    per_pair = frequency_band_contributions(q, k, half, pairs) * trace.scale  # (d/2, n, n)
    bands = frequency_band_contributions(q, k, n_bands, pairs) * trace.scale  # (bands, n, n)
    edges = band_edges(half, n_bands)
    full = (q @ k.T) * trace.scale
    return BandsView(
        layer,
        head,
        g,
        indexed_labels(trace.batch.tokens[0]),
        q.numpy(),
        k.numpy(),
        visible.numpy(),
        mean_share(per_pair, visible),
        [(a, b - 1) for a, b in edges],
        bands.numpy(),
        mean_share(bands, visible),
        float((bands.sum(0) - full)[visible].abs().max()),
    )
