"""core/positions/prefix.py: one phrase with and without a prefix, against references built here: the sinusoidal
formula written out, and RoPE as complex multiplication (pair (2i, 2i+1) = x_2i + i x_2i+1 times e^(i m θ_i))."""

import math

import numpy as np
import torch

from core.positions import prefix


def _weights(d: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    words = sorted(set(prefix.PHRASE) | set(prefix.PREFIX))
    table = {w: torch.randn(d, generator=g, dtype=torch.float64) for w in words}
    w_q = torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    w_k = torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    return torch.stack([table[w] for w in prefix.PHRASE]).numpy(), w_q.numpy(), w_k.numpy()


def test_absolute_scores_by_the_formula_and_they_change_with_the_prefix():
    d, base = 16, 10000.0
    x, w_q, w_k = _weights(d)
    for start, key in ((0, "absolute_alone"), (len(prefix.PREFIX), "absolute_prefixed")):
        pe = np.zeros((3, d))
        for r, p in enumerate(range(start, start + 3)):
            for i in range(d // 2):
                pe[r, 2 * i], pe[r, 2 * i + 1] = math.sin(p / base ** (2 * i / d)), math.cos(p / base ** (2 * i / d))
        ref = ((x + pe) @ w_q) @ ((x + pe) @ w_k).T / math.sqrt(d)
        np.testing.assert_allclose(prefix.prefix_view(d, base).scores[key], ref, atol=1e-12)
    assert prefix.prefix_view(d, base).absolute_change > 0.1


def test_rope_scores_as_complex_rotations_do_not_change():
    d, base = 16, 10000.0
    x, w_q, w_k = _weights(d)
    theta = base ** (-2 * np.arange(d // 2) / d)
    view = prefix.prefix_view(d, base)
    for start, key in ((0, "rope_alone"), (len(prefix.PREFIX), "rope_prefixed")):
        q, k = x @ w_q, x @ w_k
        qc, kc = q[:, 0::2] + 1j * q[:, 1::2], k[:, 0::2] + 1j * k[:, 1::2]
        pos = np.arange(start, start + 3)[:, None]
        qr, kr = qc * np.exp(1j * pos * theta), kc * np.exp(1j * pos * theta)
        ref = (qr @ kr.conj().T).real / math.sqrt(d)  # Re(q conj(k)) is the real dot product of the pairs
        np.testing.assert_allclose(view.scores[key], ref, atol=1e-12)
    assert view.rope_change < 1e-12
    # "yesterday in the garden" takes positions 0-3, "the cat sat" 4-6; the table's query is "sat"
    assert (view.last, view.query, view.phrase[view.query]) == (6, 2, "sat")
