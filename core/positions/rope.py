"""Rotary position embedding, RoPE (Su et al. 2021, "RoFormer").

The head's d dimensions are cut into d/2 pairs; pair i of the vector at position m is rotated by the angle
m * theta_i, with theta_i = base^(-2i/d), i = 0 .. d/2 - 1 (base 10000 in the paper, 100000 in SmolLM2). The
paper writes theta_i = base^(-2(i-1)/d) for i = 1 .. d/2: the same frequencies; this project counts pairs from 0
everywhere (formulas, sliders, axes), as the code and transformers' inv_freq index them.
Rotating q by m*theta and k by n*theta leaves their dot product depending on (m - n)*theta only:
    (R_m q) . (R_n k) = q . R_m^T R_n k = q . R_(n-m) k.

Two layouts put the same rotation in different places:
- "adjacent" (the paper): pair i is dimensions (2i, 2i+1); R_m is block-diagonal with 2x2 rotation blocks.
- "rotate_half" (GPT-NeoX, Llama, transformers): pair i is dimensions (i, i + d/2), applied as
  x*cos + rotate_half(x)*sin. It is the same map after reordering the dimensions (`half_permutation`).
Checkpoints trained with one layout need their q/k weight rows permuted to run with the other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch


def rope_inv_freq(d: int, base: float = 10000.0, dtype=torch.float64) -> torch.Tensor:
    """theta_i = base^(-2i/d) for i = 0 .. d/2 - 1: radians per position of each pair (fastest first)."""
    if d < 2 or d % 2:
        raise ValueError("d must be an even number >= 2")
    return base ** (-torch.arange(0, d, 2, dtype=dtype) / d)


def rope_angles(positions, inv_freq: torch.Tensor) -> torch.Tensor:
    """(n, d/2) matrix of m * theta_i: the angle pair i is turned by at position m."""
    m = torch.as_tensor(positions, dtype=inv_freq.dtype)
    return m[:, None] * inv_freq[None, :]


def rotation_matrix(m: float, inv_freq: torch.Tensor, layout: str = "adjacent") -> torch.Tensor:
    """(d, d) matrix R_m with R_m @ x = RoPE(x at position m). Block-diagonal (2x2 rotation blocks) in the
    adjacent layout; in the rotate_half layout the same blocks sit on dimensions (i, i + d/2)."""
    if layout not in ("adjacent", "rotate_half"):
        raise ValueError(f"unknown layout {layout!r}")
    half = inv_freq.shape[0]
    d = 2 * half
    angle = m * inv_freq
    cos, sin = torch.cos(angle), torch.sin(angle)
    R = torch.zeros(d, d, dtype=inv_freq.dtype)
    for i in range(half):
        a, b = (2 * i, 2 * i + 1) if layout == "adjacent" else (i, i + half)
        R[a, a], R[a, b] = cos[i], -sin[i]
        R[b, a], R[b, b] = sin[i], cos[i]
    return R


def apply_rope_adjacent(x: torch.Tensor, positions, inv_freq: torch.Tensor) -> torch.Tensor:
    """x (..., n, d) -> rotated, pairs (2i, 2i+1): (x0 cos - x1 sin, x0 sin + x1 cos)."""
    angle = rope_angles(positions, inv_freq).to(x.dtype)
    cos, sin = torch.cos(angle), torch.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) on the two halves of the last dimension."""
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def apply_rope_rotate_half(
    x: torch.Tensor, positions, inv_freq: torch.Tensor, attention_factor: float = 1.0
) -> torch.Tensor:
    """x (..., n, d) -> x*cos + rotate_half(x)*sin with cos = cos(cat(angles, angles)), as in Llama. The
    attention_factor multiplies cos and sin (YaRN/LongRoPE use it; q.k is then scaled by its square)."""
    angle = rope_angles(positions, inv_freq).to(x.dtype)
    emb = torch.cat((angle, angle), dim=-1)
    return x * (torch.cos(emb) * attention_factor) + rotate_half(x) * (torch.sin(emb) * attention_factor)


def half_permutation(d: int) -> torch.Tensor:
    """perm with x_half = x_adjacent[..., perm]: rotate_half's pair (i, i + d/2) holds the adjacent layout's
    (2i, 2i+1). So apply_rope_rotate_half(x[..., perm]) == apply_rope_adjacent(x)[..., perm]."""
    return torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))


def pair_trajectory(vector_2d, theta: float, positions) -> torch.Tensor:
    """(n, 2): one pair (x, y) rotated by m * theta for each position m: a point going round a circle."""
    v = torch.as_tensor(vector_2d, dtype=torch.float64)
    angle = torch.as_tensor(positions, dtype=torch.float64) * theta
    c, s = torch.cos(angle), torch.sin(angle)
    return torch.stack((v[0] * c - v[1] * s, v[0] * s + v[1] * c), dim=-1)


def relative_score_check(q: torch.Tensor, k: torch.Tensor, n_positions: int, inv_freq: torch.Tensor) -> dict:
    """Put the same q at every query position m and the same k at every key position n, rotate, and compare
    q_m . k_n across all (m, n) with equal m - n. Returns the (n, n) score matrix, the score per offset
    (m - n = -(n-1) .. n-1) and the largest spread within one offset, which is ~0 (float rounding) for RoPE."""
    positions = torch.arange(n_positions)
    qm = apply_rope_adjacent(q.expand(n_positions, -1), positions, inv_freq)
    kn = apply_rope_adjacent(k.expand(n_positions, -1), positions, inv_freq)
    scores = qm @ kn.T
    offsets = positions[:, None] - positions[None, :]
    by_offset, spread = [], []
    for off in range(-(n_positions - 1), n_positions):
        vals = scores[offsets == off]
        by_offset.append(vals.mean())
        spread.append(vals.max() - vals.min())
    return {
        "scores": scores,
        "offsets": torch.arange(-(n_positions - 1), n_positions),
        "score_by_offset": torch.stack(by_offset),
        "spread_by_offset": torch.stack(spread),
        "max_spread": float(torch.stack(spread).max()),
        "score_range": float(scores.max() - scores.min()),
    }


# --- what the page's views draw -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RotationView:
    d: int
    m: int
    layout: str
    inv_freq: torch.Tensor  # (d/2,) theta_i, float64
    rotation: np.ndarray  # (d, d) R_m

    @property
    def dims(self) -> list[str]:
        """The dimensions naming the rows (out) and columns (in) of `rotation`, in its figure and CSV."""
        return [str(i) for i in range(self.d)]


def rotation_view(d: int, base: float, m: int, layout: str = "adjacent") -> RotationView:
    """R_m for head size d (an odd d is rounded down to even, never below 2)."""
    d = max(2, d - d % 2)
    inv = rope_inv_freq(d, base)
    return RotationView(d, m, layout, inv, rotation_matrix(m, inv, layout).numpy())


@dataclass(frozen=True)
class AnglesView:
    pair: int  # the followed pair i (0-based)
    theta: float  # theta_i, radians per position
    angles: np.ndarray  # (n, d/2) m * theta_i mod 2 pi
    trajectory: np.ndarray  # (min(n, 64), 2) the vector (1, 0) of pair i rotated to each position

    @property
    def row_labels(self) -> list[int]:
        """The positions m, the rows of `angles`, as its figure's axis and CSV number them."""
        return list(range(self.angles.shape[0]))

    @property
    def col_labels(self) -> list[int]:
        """The pairs i, the columns of `angles`."""
        return list(range(self.angles.shape[1]))


def angles_view(inv_freq: torch.Tensor, n: int, pair: int) -> AnglesView:
    pair = min(max(pair, 0), inv_freq.shape[0] - 1)
    theta = float(inv_freq[pair])
    angles = torch.remainder(rope_angles(torch.arange(n), inv_freq), 2 * math.pi).numpy()
    return AnglesView(pair, theta, angles, pair_trajectory([1.0, 0.0], theta, torch.arange(min(n, 64))).numpy())


@dataclass(frozen=True)
class PooledAngles:
    """The angles m·θ_i of a large n x d/2 as block circular means: each cell is the direction of the mean of
    (cos, sin) over its positions and pairs, and `coherence` the length of that mean (1: the block's angles agree;
    near 0: they cover the whole circle, as a fast pair does over a block of positions)."""

    angles: np.ndarray  # (s_n, s_p) in [0, 2 pi)
    coherence: np.ndarray  # (s_n, s_p) in [0, 1]
    n: int
    d: int
    row_edges: np.ndarray
    col_edges: np.ndarray  # bins of pairs

    @property
    def row_labels(self) -> list[int]:
        """Each row's first position, where its figure draws the block and its CSV names it."""
        return self.row_edges[:-1].tolist()

    @property
    def col_labels(self) -> list[int]:
        """Each column's first pair."""
        return self.col_edges[:-1].tolist()

    @property
    def fastest_coherence(self) -> float:
        """Mean coherence of the fastest pairs' column: about 0, their angles cover the circle within a block."""
        return float(self.coherence[:, 0].mean())

    @property
    def slowest_coherence(self) -> float:
        """Lowest coherence of the slowest pairs' column: about 1, they barely turn within a block."""
        return float(self.coherence[:, -1].min())


def pooled_angles(n: int, d: int, base: float = 10000.0, cells: int = 128) -> PooledAngles:
    """Never builds the n x d/2 angles: the position sums of cos and sin come in closed form
    (core.positions.sinusoidal.position_block_sums), then pairs are summed by bins."""
    from ..pooling import bin_edges, membership
    from .sinusoidal import position_block_sums

    pairs = d // 2
    row_edges, col_edges = bin_edges(n, cells), bin_edges(pairs, cells)
    sin_sums, cos_sums = position_block_sums(row_edges, rope_inv_freq(2 * pairs, base).numpy())
    cols = membership(col_edges, pairs).double().numpy()  # (s_p, pairs)
    count = np.diff(row_edges)[:, None] * cols.sum(1)[None, :]
    s, c = sin_sums @ cols.T / count, cos_sums @ cols.T / count
    return PooledAngles(np.remainder(np.arctan2(s, c), 2 * math.pi), np.hypot(s, c), n, 2 * pairs, row_edges, col_edges)


@dataclass(frozen=True)
class CheckView:
    n: int  # positions checked
    scores: np.ndarray  # (n, n) q_m . k_n
    offsets: np.ndarray  # (2n - 1,) m - n
    score_by_offset: np.ndarray  # (2n - 1,)
    score_range: float
    max_spread: float  # ~0: the score depends on m - n only
    permutation: list[int]  # rotate_half's order of the adjacent layout's dimensions
    layout_diff: float  # |rotate_half(Px) - P adjacent(x)|, ~0
    layout_nodiff: float  # the same without P: the layouts differ

    @property
    def labels(self) -> list[int]:
        """The positions naming the rows (queries, m) and columns (keys, n) of `scores`, in its figure and CSV."""
        return list(range(self.n))

    @property
    def pairs(self) -> int:
        """(m, n) position pairs checked: n^2."""
        return self.scores.size


def check_view(inv_freq: torch.Tensor, n: int, m: int, seed: int = 0) -> CheckView:
    """The same random q and k at every position 0 .. min(n, 64) - 1, and the two layouts compared on 5 random
    vectors at positions m, m + 7, ... (float64)."""
    d = 2 * inv_freq.shape[0]
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(d, generator=g, dtype=torch.float64), torch.randn(d, generator=g, dtype=torch.float64)
    n = min(n, 64)
    check = relative_score_check(q, k, n, inv_freq)
    perm = half_permutation(d)
    x = torch.randn(5, d, generator=g, dtype=torch.float64)
    pos = torch.arange(5) * 7 + m
    adjacent = apply_rope_adjacent(x, pos, inv_freq)
    diff = (apply_rope_rotate_half(x[..., perm], pos, inv_freq) - adjacent[..., perm]).abs().max()
    nodiff = (apply_rope_rotate_half(x, pos, inv_freq) - adjacent).abs().max()
    return CheckView(
        n,
        check["scores"].numpy(),
        check["offsets"].numpy(),
        check["score_by_offset"].numpy(),
        check["score_range"],
        check["max_spread"],
        perm.tolist(),
        float(diff),
        float(nodiff),
    )
