"""Sinusoidal position encoding (Vaswani et al. 2017, section 3.5).

    PE(p, 2i)   = sin(p / base^(2i/d))
    PE(p, 2i+1) = cos(p / base^(2i/d))        base = 10000 in the paper

Column 2i and 2i+1 share one frequency omega_i = base^(-2i/d): together they are the point
(sin p*omega_i, cos p*omega_i) on the unit circle, so moving k positions is a rotation by k*omega_i whatever p is.
That is why PE(p) . PE(q) = sum_i cos((p - q) * omega_i) depends only on the distance p - q.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def sinusoidal_frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """omega_i = base^(-2i/d) for i = 0 .. d/2 - 1 (one frequency per sin/cos pair)."""
    if d < 2 or d % 2:
        raise ValueError("d must be an even number >= 2")
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)


def sinusoidal_encoding(n_positions: int, d: int, base: float = 10000.0) -> np.ndarray:
    """(n_positions, d): sin on even columns, cos on odd columns."""
    return _encoding_rows(0, n_positions, d, base)


def pe_dot_by_distance(distances, d: int, base: float = 10000.0) -> np.ndarray:
    """PE(p) . PE(p + k) for each distance k, in closed form: sum_i cos(k * omega_i). The same for every p."""
    k = np.asarray(distances, dtype=np.float64)
    return np.cos(k[..., None] * sinusoidal_frequencies(d, base)).sum(-1)


def sine_only_encoding(n_positions: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The tempting simplification: sin in every column, one frequency per column (no cosine partner)."""
    omega = base ** (-np.arange(d, dtype=np.float64) / d)
    return np.sin(np.arange(n_positions, dtype=np.float64)[:, None] * omega[None, :])


def sine_collision(omega: float, n_positions: int) -> dict:
    """Two positions p < q whose sine values sin(p*omega), sin(q*omega) are closest, and how far apart the same
    two positions are once the cosine is added. A sine alone takes each value twice per period (sin x = sin(pi - x)),
    so one column cannot tell the two positions apart; the (sin, cos) pair is a point on a circle and can."""
    if n_positions < 2:
        raise ValueError("need at least two positions")
    p = np.arange(n_positions, dtype=np.float64)
    s, c = np.sin(p * omega), np.cos(p * omega)
    order = np.argsort(s, kind="stable")
    gaps = np.diff(s[order])
    j = int(np.argmin(gaps))
    a, b = sorted((int(order[j]), int(order[j + 1])))
    return {
        "p": a,
        "q": b,
        "sin_p": float(s[a]),
        "sin_q": float(s[b]),
        "cos_p": float(c[a]),
        "cos_q": float(c[b]),
        "sine_gap": float(abs(s[a] - s[b])),
        "pair_distance": float(np.hypot(s[a] - s[b], c[a] - c[b])),
    }


def dimension_variation(n_positions: int, d: int, base: float = 10000.0) -> np.ndarray:
    """For each column j: (max - min of PE(p, j) over p < n_positions) / 2, the share of the full [-1, 1] range the
    column actually sweeps over the context. Exact without building the (n, d) matrix: a column with angle
    p*omega sweeps the arc [0, (n-1)*omega]; its extremes are at the arc's ends or at the crests it passes."""
    omega = sinusoidal_frequencies(d, base)
    end = (n_positions - 1) * omega
    sin_range = np.array([_arc_range(np.sin, e, np.pi / 2) for e in end])
    cos_range = np.array([_arc_range(np.cos, e, 0.0) for e in end])
    out = np.empty(d)
    out[0::2], out[1::2] = sin_range / 2, cos_range / 2
    return out


def _arc_range(fn, end: float, crest: float) -> float:
    """max - min of fn over [0, end], where fn has maxima at crest + 2*pi*k and minima at crest + pi + 2*pi*k."""
    values = [fn(0.0), fn(end)]
    for offset in (crest, crest + np.pi):
        first = offset % (2 * np.pi)
        if first <= end:
            values.append(fn(first))
    return float(max(values) - min(values))


def slow_dimension_share(n_positions: int, d: int, base: float = 10000.0, threshold: float = 0.01) -> dict:
    """The sparsity finding: the share of the d columns whose value changes by less than `threshold` (as a share
    of the full [-1, 1] range) over the whole context. Those columns hold (almost) the same number at every
    position, so they carry no position information in this context: they are free for content."""
    var = dimension_variation(n_positions, d, base)
    slow = var < threshold
    return {
        "share": float(slow.mean()),
        "count": int(slow.sum()),
        "d": d,
        "n_positions": n_positions,
        "threshold": threshold,
        "sin_share": float(slow[0::2].mean()),
        "cos_share": float(slow[1::2].mean()),
        "first_slow_dim": int(np.argmax(slow)) if slow.any() else None,
    }


def neighbour_step_share(d: int, base: float = 10000.0, threshold: float = 0.01) -> float:
    """Share of columns that move by less than `threshold` of their range between ANY two neighbouring positions:
    |PE(p+1, j) - PE(p, j)| <= omega (the slope of sin and cos is at most 1), i.e. columns with omega / 2 <
    threshold. Unlike slow_dimension_share this does not depend on the context length."""
    omega = np.repeat(sinusoidal_frequencies(d, base), 2)
    return float((omega / 2 < threshold).mean())


# --- what the page's three views draw -------------------------------------------------------------------------


def even(d: int) -> int:
    """sin/cos pairs need an even width: an odd one (from a link) is rounded down, never below 2."""
    return max(2, d - d % 2)


@dataclass(frozen=True)
class EncodingView:
    pe: np.ndarray  # (n, d) PE(position, column)
    dots: np.ndarray  # (n, n) PE(i) . PE(j)
    distances: np.ndarray  # (2n - 1,) k = -(n-1) .. n-1
    dot_by_distance: np.ndarray  # (2n - 1,) closed form sum_i cos(k * omega_i)
    diagonal_spread: float  # largest max - min along any diagonal of `dots` (~0: depends on i - j only)

    @property
    def positions(self) -> list[int]:
        """The rows of `pe`, and the rows and columns of `dots`, as their figures' axes and CSVs number them."""
        return list(range(self.pe.shape[0]))

    @property
    def dims(self) -> list[int]:
        """The columns of `pe`."""
        return list(range(self.pe.shape[1]))

    @property
    def pairs(self) -> int:
        """(i, j) position pairs compared: n^2."""
        return self.dots.size


def encoding_view(n: int, d: int, base: float = 10000.0) -> EncodingView:
    pe = sinusoidal_encoding(n, even(d), base)
    dots = pe @ pe.T
    spread = max(float(np.ptp(np.diagonal(dots, offset=k))) for k in range(-(n - 1), n))
    k = np.arange(-(n - 1), n)
    return EncodingView(pe, dots, k, pe_dot_by_distance(k, even(d), base), spread)


@dataclass(frozen=True)
class CollisionView:
    pair: int  # i: columns 2i and 2i+1
    omega: float  # omega_i = base^(-2i/d)
    positions: np.ndarray  # (n,)
    points: np.ndarray  # (n, 2): (sin p*omega, cos p*omega)
    collision: dict  # sine_collision's answer
    sine_only_lo: float  # min over p of PE(p) . PE(p+1) with sine in every column
    sine_only_hi: float  # ... and its max (not one value: sine alone does not give a function of distance)


def collision_view(n: int, d: int, base: float, pair: int) -> CollisionView:
    """Why sin AND cos: one pair's sine column over n positions, its (sin, cos) circle, the closest sine collision,
    and the neighbour dot-product range of the sine-only encoding. `pair` is clipped to 0 .. d/2 - 1."""
    d = even(d)
    pair = min(max(pair, 0), d // 2 - 1)
    omega = float(sinusoidal_frequencies(d, base)[pair])
    positions = np.arange(n)
    points = np.stack([np.sin(positions * omega), np.cos(positions * omega)], 1)
    so = sine_only_encoding(n, d, base)
    neighbour = np.einsum("pd,pd->p", so[:-1], so[1:])  # (n - 1,) PE(p) . PE(p + 1)
    return CollisionView(
        pair, omega, positions, points, sine_collision(omega, n), float(neighbour.min()), float(neighbour.max())
    )


@dataclass(frozen=True)
class SparsityView:
    n: int
    d: int
    threshold: float
    columns: np.ndarray  # (d,) 0 .. d-1
    variation: np.ndarray  # (d,) dimension_variation
    slow: dict  # slow_dimension_share's answer
    neighbour_share: float  # neighbour_step_share

    @property
    def least(self) -> float:
        """The variation of the column that moves least."""
        return float(self.variation.min())


def sparsity_view(n: int, d: int, base: float, threshold: float) -> SparsityView:
    d = even(d)
    return SparsityView(
        n,
        d,
        threshold,
        np.arange(d),
        dimension_variation(n, d, base),
        slow_dimension_share(n, d, base, threshold),
        neighbour_step_share(d, base, threshold),
    )


MATERIAL_SIZE = (8192, 3072)  # the study material's heatmap: n positions x d dimensions
POOLED_CELLS = 128  # cells a side of a pooled heatmap sent to the browser (a view stays under 1 MB)


@dataclass(frozen=True)
class PooledEncoding:
    """PE(position, column) of a large n x d as block means: each cell averages a block of positions x columns.
    A fast column averages out to about 0 over a block of positions; the slow columns keep their values."""

    pe: np.ndarray  # (s_n, s_d) block means
    n: int
    d: int
    row_edges: np.ndarray  # (s_n + 1,) position bins
    col_edges: np.ndarray  # (s_d + 1,) column bins

    @property
    def row_labels(self) -> list[int]:
        """Each row's first position, where its figure draws the block and its CSV names it."""
        return self.row_edges[:-1].tolist()

    @property
    def col_labels(self) -> list[int]:
        """Each column's first dimension."""
        return self.col_edges[:-1].tolist()


def pooled_encoding(n: int, d: int, base: float = 10000.0, cells: int = POOLED_CELLS) -> PooledEncoding:
    """The block means of sinusoidal_encoding(n, d) without building it (8,192 x 3,072 would be 200 MB): over
    positions a .. b-1 a column sums in closed form, sum_p sin(p w) = sin(c w) D and sum_p cos(p w) = cos(c w) D with
    c = (a + b - 1) / 2, D = sin(m w / 2) / sin(w / 2), m = b - a (D -> m as w -> 0); then columns are averaged by
    bins with a 0/1 membership matrix."""
    from ..pooling import bin_edges, membership

    d = even(d)
    row_edges, col_edges = bin_edges(n, cells), bin_edges(d, cells)
    sin_sums, cos_sums = position_block_sums(row_edges, sinusoidal_frequencies(d, base))
    sums = np.empty((len(row_edges) - 1, d))
    sums[:, 0::2], sums[:, 1::2] = sin_sums, cos_sums
    cols = membership(col_edges, d).double().numpy()  # (s_d, d) 0/1
    out = (sums @ cols.T) / (np.diff(row_edges)[:, None] * cols.sum(1)[None, :])
    return PooledEncoding(out, n, d, row_edges, col_edges)


def position_block_sums(row_edges: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sum of sin(p w), sum of cos(p w)) over p in each bin [a, b) of row_edges, for every frequency w: each
    (bins, len(w)), in closed form (pooled_encoding's docstring)."""
    a, b = row_edges[:-1].astype(np.float64), row_edges[1:].astype(np.float64)
    m, c = (b - a)[:, None], ((a + b - 1) / 2)[:, None]  # (bins, 1)
    w = np.asarray(w, dtype=np.float64)[None, :]
    half = np.sin(w / 2)
    tiny = np.abs(half) < 1e-12
    dirichlet = np.where(tiny, m, np.sin(m * w / 2) / np.where(tiny, 1.0, half))  # (bins, len(w))
    return np.sin(c * w) * dirichlet, np.cos(c * w) * dirichlet


def _encoding_rows(a: int, b: int, d: int, base: float) -> np.ndarray:
    """Positions a .. b-1 of the encoding: sin on even columns, cos on odd columns."""
    angles = np.arange(a, b, dtype=np.float64)[:, None] * sinusoidal_frequencies(d, base)[None, :]
    pe = np.empty((b - a, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe
