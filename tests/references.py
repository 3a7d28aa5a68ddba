"""Independent references for tests: plain loops that the vectorised code in core/ is checked against.

pool_matrix: block pooling as a Python loop over blocks with numpy's NaN-aware mean (or max); NaN cells (masked)
are ignored, a block of only NaN stays NaN. Same bins as core.pooling.bin_edges (whose sizes are tested apart).
numpy_rollout: attention rollout (Abnar & Zuidema 2020) written out in numpy.
assert_close_in_scale: the one comparison of float32 activations, logits and losses against a reference.
is_major_tick: 1, 2 or 5 times a power of ten (what a log axis should label)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch

from core.pooling import bin_edges

# float32 has a 24-bit mantissa (eps 1.2e-7). Two correct implementations that sum in another order (another BLAS
# kernel, another thread count, another CPU) differ by a few ulps of the largest term, accumulated over the
# reduction: so an activation's tolerance must follow its magnitude. 1e-5 of the scale leaves ~80 ulps of room.
FLOAT32_RELATIVE = 1e-5


def assert_close_in_scale(ours, reference, relative: float = FLOAT32_RELATIVE, what: str = "") -> None:
    """|ours - reference| <= relative * max(1, max|reference|), elementwise over the whole tensor.

    The scale is the reference's largest magnitude (not each element's), because rounding errors of a sum are set
    by its largest terms: an element near zero inside a tensor of hundreds carries the same absolute error as its
    neighbours. Values of order 1 or less (attention weights, probabilities) keep the absolute bound `relative`.
    Weights and exact integer results keep their own tight absolute checks; this is for computed activations."""
    ours = torch.as_tensor(ours).detach().to(torch.float64)
    reference = torch.as_tensor(reference).detach().to(torch.float64)
    assert ours.shape == reference.shape, f"{what}: shape {tuple(ours.shape)} != {tuple(reference.shape)}"
    scale = max(1.0, float(reference.abs().max())) if reference.numel() else 1.0
    error = float((ours - reference).abs().max()) if reference.numel() else 0.0
    assert error <= relative * scale, f"{what}: max |difference| {error:.3g} > {relative:g} x scale {scale:.3g}"


def pool_matrix(matrix, max_size: int, reduce: str = "mean"):
    """Pool a (rows, cols) matrix to at most (max_size, max_size). Returns (pooled, row_edges, col_edges)."""
    m = matrix.detach().cpu().numpy() if isinstance(matrix, torch.Tensor) else np.asarray(matrix)
    m = m.astype(np.float64)
    r_edges, c_edges = bin_edges(m.shape[0], max_size), bin_edges(m.shape[1], max_size)
    fn = np.nanmean if reduce == "mean" else np.nanmax
    out = np.full((len(r_edges) - 1, len(c_edges) - 1), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN blocks: NaN, as intended
        for i in range(len(r_edges) - 1):
            for j in range(len(c_edges) - 1):
                out[i, j] = fn(m[r_edges[i] : r_edges[i + 1], c_edges[j] : c_edges[j + 1]])
    return out, r_edges, c_edges


def numpy_rollout(trace, index: int, last: int) -> np.ndarray:
    """For each layer 0..last: average the heads' (m, m) weights over the real tokens, add the identity
    (0.5 A + 0.5 I), normalise rows, and multiply onto the product of the layers below (R <- A_layer @ R)."""
    m = trace.length(index)
    result = np.eye(m)
    for layer in range(last + 1):
        heads = [trace.attention(layer, h, index)[:m, :m].double().numpy() for h in range(trace.n_heads)]
        a = 0.5 * np.mean(heads, axis=0) + 0.5 * np.eye(m)
        a /= a.sum(axis=1, keepdims=True)
        result = a @ result
    return result


def is_major_tick(value: float) -> bool:
    """1, 2 or 5 times a power of ten."""
    mantissa = value / 10 ** math.floor(math.log10(value) + 1e-9)
    return any(abs(mantissa - m) < 1e-9 for m in (1, 2, 5))
