"""ALiBi: Attention with Linear Biases (Press, Smith and Lewis 2022, "Train Short, Test Long").

No position vectors at all: each head h adds  -m_h * (i - j)  to the score of query i on key j <= i, a penalty
growing linearly with distance. The slopes m_h are a geometric sequence fixed before training:
for n heads (a power of two) m_h = 2^(-8h/n), h = 1..n, e.g. 1/2, 1/4, ..., 1/256 for 8 heads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch


def _power_of_two_slopes(n: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)
    return [start ** (h + 1) for h in range(n)]


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """The paper's slopes (its reference code, `get_slopes`). For a head count that is not a power of two, take the
    slopes of the closest smaller power of two p, then every other slope of the 2p sequence for the remaining heads
    (so the extra slopes fall between the existing ones)."""
    if n_heads < 1:
        raise ValueError("n_heads must be >= 1")
    p = 2 ** math.floor(math.log2(n_heads))
    slopes = _power_of_two_slopes(p)
    if p < n_heads:
        slopes += _power_of_two_slopes(2 * p)[0::2][: n_heads - p]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(n_heads: int, n_queries: int, n_keys: int | None = None, causal: bool = True) -> torch.Tensor:
    """(n_heads, n_queries, n_keys) additive bias -m_h * |i - j| (queries are the last n_queries positions when
    n_keys > n_queries). With causal=True, future keys get -inf (masked), as in the paper's decoder."""
    n_keys = n_queries if n_keys is None else n_keys
    offset = n_keys - n_queries
    i = torch.arange(n_queries, dtype=torch.float64)[:, None] + offset
    j = torch.arange(n_keys, dtype=torch.float64)[None, :]
    bias = -alibi_slopes(n_heads)[:, None, None] * (i - j).abs()
    if causal:
        bias = bias.masked_fill((j > i)[None], float("-inf"))
    return bias


def alibi_weights(n_heads: int, n: int, scores: torch.Tensor | None = None) -> torch.Tensor:
    """softmax(scores + bias) per head for a causal sequence of n tokens; scores default to 0, which isolates
    what the bias alone does: head h spreads its weight over roughly the last 1/m_h tokens."""
    bias = alibi_bias(n_heads, n)
    scores = torch.zeros_like(bias) if scores is None else scores.to(bias.dtype)
    return torch.softmax(scores + bias, dim=-1)


def effective_span(slopes: torch.Tensor, mass: float = 0.9) -> torch.Tensor:
    """With zero content scores and unlimited history, the weights on distances 0, 1, 2, ... are geometric with
    ratio r = exp(-m); the shortest window holding `mass` of the weight has ceil(ln(1 - mass) / -m) keys."""
    return torch.ceil(torch.log(torch.tensor(1.0 - mass, dtype=torch.float64)) / -slopes)


@dataclass(frozen=True)
class AlibiView:
    head: int  # the head drawn
    slopes: np.ndarray  # (heads,) m_h
    slope_labels: list[str]  # "2^-0.5" ...: the slopes as powers of two
    bias: np.ndarray  # (n, n) -m_h (i - j) for the drawn head, 0 where masked
    weights: np.ndarray  # (n, n) softmax of the bias alone
    future: np.ndarray  # (n, n) bool: j > i, masked
    span: np.ndarray  # (heads,) keys holding 90% of the weight

    @property
    def labels(self) -> list[str]:
        """The positions naming the rows (queries) and columns (keys) of `bias` and `weights`, in their figures and
        CSVs."""
        return [str(i) for i in range(self.bias.shape[0])]


def alibi_view(n_heads: int, n: int, head: int) -> AlibiView:
    """Slopes of every head, and the bias and bias-only weights of `head` (clipped to 0 .. n_heads - 1)."""
    head = min(max(head, 0), n_heads - 1)
    slopes = alibi_slopes(n_heads)
    bias = alibi_bias(n_heads, n)[head]
    future = torch.isinf(bias)
    return AlibiView(
        head,
        slopes.numpy(),
        [f"2^{math.log2(m):.3g}" for m in slopes.tolist()],
        bias.masked_fill(future, 0.0).numpy(),
        alibi_weights(n_heads, n)[head].numpy(),
        future.numpy(),
        effective_span(slopes).long().numpy(),
    )
