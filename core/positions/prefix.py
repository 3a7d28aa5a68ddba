"""The same phrase with and without a prefix: absolute positions change its scores, RoPE's stay equal.

A phrase read at positions 0, 1, 2 and again after a prefix (positions p, p+1, p+2). With absolute positions the
position vector is added to each token before W^Q and W^K, so q and k themselves change with the shift and so do
the scores between the phrase's words. RoPE rotates q and k by their positions, and q_m . k_n depends on m - n
only: the phrase's scores are the same wherever it starts. Random (seeded) embeddings and projections: the
mechanism, not a trained model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .rope import apply_rope_adjacent, rope_inv_freq
from .sinusoidal import sinusoidal_encoding

PHRASE = ("the", "cat", "sat")
PREFIX = ("yesterday", "in", "the", "garden")


@dataclass(frozen=True)
class PrefixView:
    phrase: tuple[str, ...]
    prefix: tuple[str, ...]
    d: int
    scores: dict[str, np.ndarray]  # "absolute_alone", "absolute_prefixed", "rope_alone", "rope_prefixed": (3, 3)
    absolute_change: float  # largest |prefixed - alone| of the phrase's scores with absolute positions
    rope_change: float  # the same with RoPE: rounding only

    @property
    def last(self) -> int:
        """The phrase's last position after the prefix."""
        return len(self.prefix) + len(self.phrase) - 1

    @property
    def query(self) -> int:
        """The row the page's table shows: the phrase's last word as the query (it sees every word of the phrase)."""
        return len(self.phrase) - 1


def _scores(x: torch.Tensor, start: int, w_q, w_k, kind: str, base: float) -> torch.Tensor:
    n, d = x.shape
    positions = torch.arange(start, start + n)
    if kind == "absolute":
        x = x + torch.from_numpy(sinusoidal_encoding(start + n, d, base)[start:])
        q, k = x @ w_q, x @ w_k
    else:
        inv_freq = rope_inv_freq(d, base)
        q, k = apply_rope_adjacent(x @ w_q, positions, inv_freq), apply_rope_adjacent(x @ w_k, positions, inv_freq)
    return q @ k.T / math.sqrt(d)


def prefix_view(d: int = 16, base: float = 10000.0, seed: int = 0) -> PrefixView:
    g = torch.Generator().manual_seed(seed)
    words = sorted(set(PHRASE) | set(PREFIX))
    table = {w: torch.randn(d, generator=g, dtype=torch.float64) for w in words}
    w_q = torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    w_k = torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    text = torch.stack([table[w] for w in PREFIX + PHRASE])
    phrase = text[len(PREFIX) :]
    scores = {}
    for kind in ("absolute", "rope"):
        scores[f"{kind}_alone"] = _scores(phrase, 0, w_q, w_k, kind, base).numpy()
        scores[f"{kind}_prefixed"] = _scores(phrase, len(PREFIX), w_q, w_k, kind, base).numpy()

    def change(kind: str) -> float:
        return float(np.abs(scores[f"{kind}_prefixed"] - scores[f"{kind}_alone"]).max())

    return PrefixView(PHRASE, PREFIX, d, scores, change("absolute"), change("rope"))
