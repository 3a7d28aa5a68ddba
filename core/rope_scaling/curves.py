"""What scaled RoPE does, derived from (inv_freq, attention_factor) of `methods.scaled_inv_freq`: wavelengths, the
interpolation ratio per pair, the expected q.k by distance, the angle between neighbouring positions.

Pairs are numbered i = 0 .. d/2 - 1, fastest first (theta_i = base^(-2i/d) before scaling).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..models.rope_scaling import METHODS, scaled_inv_freq


def wavelengths(inv_freq: torch.Tensor) -> np.ndarray:
    """Positions per full turn of each pair, 2*pi / theta_i."""
    return (2 * math.pi / inv_freq.double()).numpy()


def interpolation_ratio(inv_freq: torch.Tensor, default_inv_freq: torch.Tensor) -> np.ndarray:
    """theta_i / theta_i^method per pair: 1 = extrapolated (unchanged), s = fully interpolated."""
    return (default_inv_freq.double() / inv_freq.double()).numpy()


def qk_by_distance(inv_freq: torch.Tensor, attention_factor: float, distances) -> np.ndarray:
    """Expected q.k / d at each distance: a^2 * mean_i cos(distance * theta_i).

    For a query and a key carrying the same content x with i.i.d. zero-mean unit-variance entries,
    E[(R_m x) . (R_n x)] = trace(R_(n-m)) = 2 * sum_i cos((n-m) theta_i), and a (the attention factor) multiplies
    both q and k; dividing by d gives 1 at distance 0 for plain RoPE. It is also exactly q.k / d for
    q = k = all-ones."""
    dist = np.asarray(distances, dtype=np.float64)
    theta = inv_freq.double().numpy()
    out = np.zeros(dist.shape)
    for th in theta:  # one pair at a time keeps memory at one row of distances (numpy: no thread start-up)
        out += np.cos(dist * th)
    return attention_factor**2 * out / theta.shape[0]


def log_bins(max_distance: int, n_bins: int) -> np.ndarray:
    """Bin edges over distances 0 .. max_distance: every distance its own bin while bins are narrower than one,
    then log-spaced. Sorted, unique integers starting at 0 and ending at max_distance + 1."""
    edges = np.unique(np.round(np.geomspace(1, max_distance + 1, n_bins)).astype(np.int64))
    return np.unique(np.concatenate(([0], edges, [max_distance + 1])))


def qk_decay_envelope(inv_freq: torch.Tensor, attention_factor: float, max_distance: int, n_bins: int = 600) -> dict:
    """qk_by_distance for EVERY distance 0..max_distance, reduced to <= n_bins log-spaced bins (min, mean, max per
    bin): what goes to the browser is small, and no oscillation is hidden by sampling."""
    values = qk_by_distance(inv_freq, attention_factor, np.arange(max_distance + 1))
    edges = log_bins(max_distance, n_bins)
    lo, hi = edges[:-1], edges[1:]
    mean = np.add.reduceat(values, lo) / (hi - lo)
    return {
        "start": lo,
        "end": hi - 1,
        "mean": mean,
        "min": np.minimum.reduceat(values, lo),
        "max": np.maximum.reduceat(values, lo),
    }


def neighbour_angle(inv_freq: torch.Tensor) -> dict:
    """How far apart neighbouring positions m and m+1 are after rotation (the same for every m).
    'vector': the angle between R_m x and R_(m+1) x for x = all-ones, arccos(mean_i cos theta_i);
    'fastest_pair': the step of the fastest-turning pair, theta_0 wrapped into [0, pi] (the finest detail any pair
    can resolve); 'slowest_pair': the smallest step of any pair, the one interpolation shrinks first."""
    theta = inv_freq.double()
    wrapped = torch.remainder(theta, 2 * math.pi)
    wrapped = torch.minimum(wrapped, 2 * math.pi - wrapped)
    return {
        "vector": float(torch.arccos(torch.cos(theta).mean().clamp(-1, 1))),
        "fastest_pair": float(wrapped.max()),
        "slowest_pair": float(wrapped.min()),
    }


def method_seq_len(method: str, factor: float, original_context: int, seq_len: int | None) -> int | None:
    """The sequence length a curve is computed for: dynamic and longrope depend on it; others ignore it."""
    if seq_len is not None:
        return seq_len
    return int(round(factor * original_context)) if method in ("dynamic", "longrope") else None


def pair_classes(ratio: np.ndarray, factor: float, tolerance: float = 0.01) -> dict[str, int]:
    """Count pairs left alone (ratio within 1% of 1), fully interpolated (within 1% of the factor; more than the
    factor counts too, as dynamic NTK does for its slowest pairs) and in between."""
    kept = np.abs(ratio - 1.0) <= tolerance
    interpolated = (ratio >= factor * (1 - tolerance)) & ~kept
    return {
        "kept": int(kept.sum()),
        "interpolated": int(interpolated.sum()),
        "between": int((~kept & ~interpolated).sum()),
    }


def method_table(
    factor: float, seq_len: int, *, head_dim: int = 64, rope_theta: float = 100000.0, original_context: int = 8192
) -> list[dict]:
    """Per method at `factor`: inv_freq, attention factor, wavelengths, ratio to plain RoPE and the pair classes.
    seq_len is the current sequence length (used by dynamic and longrope)."""
    kw = dict(head_dim=head_dim, rope_theta=rope_theta, original_context=original_context)
    default, _ = scaled_inv_freq("default", 1.0, **kw)
    rows = []
    for method in METHODS:
        inv, att = scaled_inv_freq(method, factor, seq_len=seq_len, **kw)
        ratio = interpolation_ratio(inv, default)
        rows.append(
            {
                "method": method,
                "inv_freq": inv,
                "attention_factor": att,
                "wavelength": wavelengths(inv),
                "ratio": ratio,
                **pair_classes(ratio, factor if method != "default" else 1.0),
            }
        )
    return rows


def resolution_by_factor(
    factors, *, head_dim: int = 64, rope_theta: float = 100000.0, original_context: int = 8192
) -> dict[str, dict[str, list[float]]]:
    """neighbour_angle per method for each factor, each method at the length it was stretched to (s * L0; matters
    for dynamic and longrope)."""
    kw = dict(head_dim=head_dim, rope_theta=rope_theta, original_context=original_context)
    out: dict[str, dict[str, list[float]]] = {}
    for method in METHODS:
        out[method] = {"vector": [], "fastest_pair": [], "slowest_pair": []}
        for f in factors:
            inv, _ = scaled_inv_freq(method, float(f), seq_len=int(round(f * original_context)), **kw)
            for key, value in neighbour_angle(inv).items():
                out[method][key].append(value)
    return out
