"""What the formula half of /rope-scaling draws, one dataclass per view: every method's frequencies at a factor
(wavelengths, ratio to plain RoPE, pair classes), the expected q.k by distance reduced to log-spaced bins, and
the angle between neighbouring positions as the factor grows. All from transformers' RoPE functions (`methods`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..models.rope_scaling import METHODS, SMOLLM2_ROPE, scaled_inv_freq
from .curves import method_table, qk_decay_envelope, resolution_by_factor

DECAY_BINS = 500  # per method: the browser gets 500 x 3 numbers, not 131,072
RES_FACTORS = np.geomspace(1, 64, 25)
ORIGINAL_CONTEXT = SMOLLM2_ROPE["original_context"]


@dataclass(frozen=True)
class FrequencyView:
    factor: float
    pairs: np.ndarray  # (d/2,) pair i = 0 .. d/2 - 1, fastest first
    rows: list[dict]  # per method: method, inv_freq, attention_factor, wavelength, ratio, kept, interpolated, between
    original_context: int  # L0


def frequency_view(factor: float, seq_len: int) -> FrequencyView:
    """Every method at `factor`; dynamic NTK and LongRoPE for a sequence of seq_len tokens."""
    rows = method_table(factor, seq_len)
    return FrequencyView(factor, np.arange(len(rows[0]["ratio"])), rows, ORIGINAL_CONTEXT)


@dataclass(frozen=True)
class DecayView:
    max_distance: int
    envelopes: dict[str, dict]  # method -> qk_decay_envelope (start, end, mean, min, max per bin)
    centres: dict[str, np.ndarray]  # method -> bin centres + 0.5 (distance 0 on a log axis)
    original_context: int


def decay_view(factor: float, max_distance: int) -> DecayView:
    """Every method's expected q.k for all distances 0..max_distance, reduced to DECAY_BINS log-spaced bins.
    Dynamic NTK and LongRoPE are computed for a sequence of max_distance + 1 tokens."""
    envelopes = {}
    for method in METHODS:
        inv, att = scaled_inv_freq(method, factor, seq_len=max_distance + 1)
        envelopes[method] = qk_decay_envelope(inv, att, max_distance, DECAY_BINS)
    centres = {m: (e["start"] + e["end"]) / 2 + 0.5 for m, e in envelopes.items()}
    return DecayView(max_distance, envelopes, centres, ORIGINAL_CONTEXT)


@lru_cache(maxsize=1)
def _resolution() -> dict:
    return resolution_by_factor(RES_FACTORS)


@dataclass(frozen=True)
class ResolutionView:
    factors: np.ndarray  # (25,) scale factors 1 .. 64
    angles: dict[str, dict[str, list[float]]]  # method -> measure -> angle per factor
    nearest: int  # index of the factor closest to the chosen one
    nearest_factor: float


def resolution_view(factor: float) -> ResolutionView:
    """neighbour_angle of every method at 25 factors (computed once per process), and the one nearest `factor`."""
    k = int(np.argmin(np.abs(RES_FACTORS - factor)))
    return ResolutionView(RES_FACTORS, _resolution(), k, float(RES_FACTORS[k]))
