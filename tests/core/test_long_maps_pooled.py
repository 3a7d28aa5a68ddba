"""Pooled exact attention maps: equal to pooling the full softmax matrix (built here in float64 and pooled by
tests.references.pool_matrix, an independent loop) at small n, causal and not, with even and uneven bins, GQA, and
tiles small enough to force the two-pass path."""

import importlib.util
import math

import numpy as np
import pytest
import torch

from core.long_maps import pooled as pa
from tests.references import assert_close_in_scale, pool_matrix


def make_qk(b=1, h=2, h_kv=None, n=48, n_k=None, d=16, seed=0, spread=2.0):
    g = torch.Generator().manual_seed(seed)
    h_kv = h if h_kv is None else h_kv
    n_k = n if n_k is None else n_k
    # spread > 1 makes the weights peaky, so max pooling and exp underflow are exercised
    return (torch.randn(b, h, n, d, generator=g) * spread, torch.randn(b, h_kv, n_k, d, generator=g) * spread)


def full_weights(q, k, causal, scale=None):
    """The n x n matrix the pooled maps summarise: softmax in float64, masked entries exactly 0."""
    q, k = q.double(), k.double()
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = q @ k.transpose(-2, -1) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(s, dim=-1)


def reference_pooled(q, k, size, causal):
    w = full_weights(q, k, causal)
    b, h = w.shape[:2]
    means = [[pool_matrix(w[i, j], size, "mean")[0] for j in range(h)] for i in range(b)]
    maxes = [[pool_matrix(w[i, j], size, "max")[0] for j in range(h)] for i in range(b)]
    return torch.tensor(np.array(means)), torch.tensor(np.array(maxes))


CASES = [
    # (n, out_size, tile_elements): 48/8 even bins; 50/8 and 37/5 uneven; 300/512 one token per cell;
    # tiny tiles force strips of one bin and the two-pass (log-sum-exp, then weights) path
    (48, 8, None),
    (50, 8, None),
    (37, 5, None),
    (30, 512, None),
    (50, 8, 2 * 7 * 8),
    (97, 10, 300),
]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,size,tile", CASES)
def test_pooled_equals_pooling_the_full_matrix(n, size, tile, causal):
    q, k = make_qk(n=n)
    got = pa.pooled_attention(q, k, size, causal=causal, tile_elements=tile, backend="torch")
    mean, mx = reference_pooled(q, k, size, causal)
    assert got.mean.shape == mean.shape == (1, 2, min(size, n), min(size, n))
    torch.testing.assert_close(got.mean.double(), mean, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(got.max.double(), mx, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(got.row_edges, pool_matrix(np.zeros((n, n)), size)[1])


@pytest.mark.parametrize("causal", [False, True])
def test_gqa_batch_and_custom_scale(causal):
    q, k = make_qk(b=2, h=6, h_kv=2, n=41, d=8, seed=3)
    for tile in (None, 150):
        got = pa.pooled_attention(q, k, 6, causal=causal, scale=0.3, tile_elements=tile, backend="torch")
        w = full_weights(q, k, causal, scale=0.3)
        ref = torch.tensor(np.array([[pool_matrix(w[i, j], 6)[0] for j in range(6)] for i in range(2)]))
        torch.testing.assert_close(got.mean.double(), ref, rtol=1e-5, atol=1e-7)


def test_cross_attention_with_different_lengths():
    q, k = make_qk(n=20, n_k=33, seed=4)
    got = pa.pooled_attention(q, k, 7, tile_elements=100, backend="torch")
    w = full_weights(q, k, False)
    torch.testing.assert_close(got.mean[0, 1].double(), torch.tensor(pool_matrix(w[0, 1], 7)[0]), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError):
        pa.pooled_attention(q, k, 7, causal=True)


def test_mean_cells_weighted_by_size_sum_rows_to_one():
    """A property: every query row sums to 1, so the weighted sum of a row bin's means is its number of rows."""
    q, k = make_qk(n=53, seed=5)
    got = pa.pooled_attention(q, k, 9, causal=True, backend="torch")
    rows, cols = np.diff(got.row_edges), np.diff(got.col_edges)
    mass = (got.mean.double() * torch.tensor(np.outer(rows, cols))).sum(-1)
    torch.testing.assert_close(mass, torch.tensor(rows, dtype=torch.float64).expand_as(mass), rtol=1e-5, atol=1e-5)
    # causal: cells entirely above the diagonal are exactly zero
    assert got.mean[0, 0, 0, -1] == 0 and got.max[0, 0, 0, -1] == 0


def test_tiles_stay_within_the_budget(monkeypatch):
    """Never n x n: every score tile computed holds at most max(tile_elements, B*H*bin*bin) scores."""
    shapes = []
    original = pa._scores

    def recording(q_strip, k_block, scale):
        out = original(q_strip, k_block, scale)
        shapes.append(out.numel())
        return out

    monkeypatch.setattr(pa, "_scores", recording)
    q, k = make_qk(n=400, d=8)
    budget = 2 * 50 * 50
    got = pa.pooled_attention(q, k, 16, causal=True, tile_elements=budget, backend="torch")
    bin_size = math.ceil(400 / 16)
    assert max(shapes) <= max(budget, 2 * bin_size * bin_size) < 2 * 400 * 400 / 10
    ref_mean, _ = reference_pooled(q, k, 16, True)
    torch.testing.assert_close(got.mean.double(), ref_mean, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("causal", [False, True])
def test_row_logsumexp_and_zoom(causal):
    q, k = make_qk(n=70, seed=6)
    lse = pa.row_logsumexp(q, k, causal=causal, tile_elements=90)
    s = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~torch.ones(70, 70, dtype=torch.bool).tril(), float("-inf"))
    assert_close_in_scale(lse, torch.logsumexp(s, -1), what="row log-sum-exp")
    w = full_weights(q, k, causal)
    for given in (None, lse):
        window = pa.zoom(q, k, slice(10, 40), slice(5, 60), causal=causal, lse=given)
        torch.testing.assert_close(window.double(), w[:, :, 10:40, 5:60], rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError):
        pa.zoom(q, k, slice(5, 5), slice(0, 3))


def test_bad_arguments():
    q, k = make_qk(n=10)
    with pytest.raises(ValueError):
        pa.pooled_attention(q, k, 0)
    with pytest.raises(ValueError):
        pa.pooled_attention(q[0], k[0], 4)
    with pytest.raises(ValueError):
        pa.pooled_attention(q, k[:, :, :, :3], 4)
    with pytest.raises(ValueError):
        pa.pooled_attention(q, k, 4, backend="cuda-magic")


def test_bfloat16_inputs_are_scored_in_float32():
    q, k = make_qk(n=64, seed=7)
    got = pa.pooled_attention(q.bfloat16(), k.bfloat16(), 8, causal=True, backend="torch")
    ref, _ = reference_pooled(q.bfloat16().float(), k.bfloat16().float(), 8, True)  # exact for bf16 inputs
    torch.testing.assert_close(got.mean.double(), ref, rtol=1e-5, atol=1e-7)


# --- the Triton kernels: on a GPU, or on CPU through Triton's interpreter (TRITON_INTERPRET=1) ----------------

HAS_TRITON = importlib.util.find_spec("triton") is not None
TRITON_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
INTERPRETED = TRITON_DEVICE == "cpu"
needs_triton = pytest.mark.skipif(
    not HAS_TRITON or (INTERPRETED and not __import__("os").environ.get("TRITON_INTERPRET")),
    reason="needs Triton and a GPU, or TRITON_INTERPRET=1 on CPU",
)


@needs_triton
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "n,size,h,h_kv,dtype",
    [
        (64, 8, 2, 2, torch.float32),
        (100, 7, 4, 2, torch.float32),
        (96, 6, 2, 1, torch.float16),
        (300, 512, 1, 1, torch.float16),
        (130, 3, 2, 1, torch.float32),
        (256, 4, 2, 2, torch.bfloat16),
    ],
)
def test_triton_kernels_match_the_torch_reference(n, size, h, h_kv, dtype, causal):
    # (130, 3): query bins of 43-44 rows in one row tile; (256, 4): bins of 64 rows. Triton 3.9's interpreter
    # computes tl.dot wrongly on bfloat16 (a 16 x 16 product comes out ~1e10), so bfloat16 runs on a GPU only.
    if dtype == torch.bfloat16 and INTERPRETED:
        pytest.skip("Triton's CPU interpreter mishandles bfloat16 tl.dot")
    if size > n and INTERPRETED:  # one-token bins: 300 x 300 cells, each a Python loop (over 40 min interpreted)
        pytest.skip("one cell per (query, key) pair: a GPU case; the interpreter takes tens of minutes")
    q, k = make_qk(b=1, h=h, h_kv=h_kv, n=n, d=32, seed=n)
    q, k = q.to(TRITON_DEVICE, dtype), k.to(TRITON_DEVICE, dtype)
    got = pa.pooled_attention(q, k, size, causal=causal, backend="triton")
    ref = pa.pooled_attention(q.cpu(), k.cpu(), size, causal=causal, backend="torch")
    assert got.backend == "triton"
    torch.testing.assert_close(got.mean.cpu(), ref.mean, rtol=2e-3, atol=1e-6)
    torch.testing.assert_close(got.max.cpu(), ref.max, rtol=2e-3, atol=1e-6)


@needs_triton
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,size,h,h_kv,dtype", [(64, 8, 2, 2, torch.float32), (100, 7, 4, 2, torch.float32),
                                                 (96, 6, 2, 1, torch.float16), (130, 3, 2, 1, torch.float32)])  # fmt: skip
def test_the_fused_statistics_pass_gives_the_same_maps(n, size, h, h_kv, dtype, causal):
    """fused_stats: each query bin's program computes its rows' log-sum-exp itself (one launch instead of two)."""
    from core.long_maps import triton_kernels as kernels

    q, k = make_qk(b=1, h=h, h_kv=h_kv, n=n, d=32, seed=n)
    q, k = q.to(TRITON_DEVICE, dtype), k.to(TRITON_DEVICE, dtype)
    ref = pa.pooled_attention(q.cpu(), k.cpu(), size, causal=causal, backend="torch")
    edges = pa.bin_edges(n, size)
    config = {"fused_stats": True, "block_m": kernels._pow2(int(np.diff(edges).max()))}  # one row tile per bin
    mean, mx = kernels.pooled_attention(q, k, edges, edges, causal, 32**-0.5, config)
    torch.testing.assert_close(mean.cpu(), ref.mean, rtol=2e-3, atol=1e-6)
    torch.testing.assert_close(mx.cpu(), ref.max, rtol=2e-3, atol=1e-6)


@needs_triton
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "n,n_k,size,h,h_kv,dtype,scratch_mib",
    [
        (64, 64, 8, 2, 2, torch.float32, 96),
        (100, 100, 7, 4, 2, torch.float32, 96),  # unequal bins (14 and 15 tokens), grouped-query heads
        (100, 100, 7, 4, 2, torch.float32, 0),  # no scratch to speak of: each query bin a group of its own
        (96, 96, 6, 2, 1, torch.float16, 96),
        (130, 130, 3, 2, 1, torch.float32, 96),  # key bins of 43-44 keys: several key tiles a bin
        (70, 90, 5, 2, 2, torch.float32, 0),  # cross-attention: more keys than queries
    ],
)
def test_the_one_pass_kernels_give_the_same_maps(n, n_k, size, h, h_kv, dtype, scratch_mib, causal):
    """one_pass: each score computed once, a key bin's rows' max and sum kept, the cells made from those alone;
    against the torch reference (two passes over the full scores). With 16-key tiles, key bins of 8-16 keys take
    the one-tile path (ONE_KEY_TILE), those of 18 and 43-44 keys the online max and sum over several tiles."""
    from core.long_maps import triton_kernels as kernels

    if causal and n != n_k:
        pytest.skip("causal pooling is self-attention only (pooled_attention refuses it)")
    q, k = make_qk(b=1, h=h, h_kv=h_kv, n=n, n_k=n_k, d=32, seed=n)
    q, k = q.to(TRITON_DEVICE, dtype), k.to(TRITON_DEVICE, dtype)
    ref = pa.pooled_attention(q.cpu(), k.cpu(), size, causal=causal, backend="torch")
    config = {"one_pass": True, "block_n": 16, "scratch_mib": scratch_mib}
    mean, mx = kernels.pooled_attention(q, k, ref.row_edges, ref.col_edges, causal, 32**-0.5, config)
    torch.testing.assert_close(mean.cpu(), ref.mean, rtol=2e-3, atol=1e-6)
    torch.testing.assert_close(mx.cpu(), ref.max, rtol=2e-3, atol=1e-6)


@pytest.mark.parametrize("budget", [1, 140, 300, 10**6])
def test_the_one_pass_groups_cover_every_query_bin_within_the_scratch(budget):
    """The one-pass kernels take the query bins in consecutive groups of at most `budget` rows (the scratch's rows),
    a bin alone where it is larger: every bin in exactly one group, in order. Needs no Triton."""
    from core.long_maps import triton_kernels as kernels

    edges = pa.bin_edges(1000, 7)  # bins of 142-143 rows
    groups = kernels._row_groups(edges, budget)
    assert groups[0][0] == 0 and groups[-1][1] == 7
    assert all(a1 == b0 for (_, a1), (b0, _) in zip(groups, groups[1:], strict=False))
    assert all(a1 > a0 and (edges[a1] - edges[a0] <= budget or a1 == a0 + 1) for a0, a1 in groups)
    # as few launches as the scratch allows: a group ends only where its next bin would not fit
    assert all(edges[a1 + 1] - edges[a0] > budget for a0, a1 in groups[:-1])
    assert (groups == [(0, 7)]) == (budget >= 1000)
