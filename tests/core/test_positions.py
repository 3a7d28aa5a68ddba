"""Sinusoidal, learned, relative (Shaw) and ALiBi positions: hand-worked values, brute-force loops and the
mathematical properties the pages claim."""

import math

import numpy as np
import pytest
import torch

from core import pooling
from core.positions import alibi, learned, relative, sinusoidal
from core.sdpa import masked_softmax

# --- sinusoidal ---------------------------------------------------------------------------------------------


def test_sinusoidal_hand_worked_d4():
    # d = 4, base 10000: omega = (1, 10000^(-2/4)) = (1, 0.01)
    pe = sinusoidal.sinusoidal_encoding(3, 4)
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1])
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)])
    np.testing.assert_allclose(pe[2], [0.9092974268, -0.4161468365, 0.0199986667, 0.9998000067], atol=1e-9)


def test_sinusoidal_formula_loop():
    d, base = 10, 500.0
    pe = sinusoidal.sinusoidal_encoding(7, d, base)
    for p in range(7):
        for i in range(d // 2):
            assert pe[p, 2 * i] == pytest.approx(math.sin(p / base ** (2 * i / d)))
            assert pe[p, 2 * i + 1] == pytest.approx(math.cos(p / base ** (2 * i / d)))


def test_pe_dot_depends_only_on_distance():
    pe = sinusoidal.sinusoidal_encoding(64, 32)
    dots = pe @ pe.T
    for k in range(-63, 64):
        diag = np.diagonal(dots, offset=k)
        np.testing.assert_allclose(diag, diag[0], atol=1e-10)
        # and equals the closed form (offset k means j - i = k)
        assert diag[0] == pytest.approx(float(sinusoidal.pe_dot_by_distance(k, 32)))


def test_sine_only_dot_is_not_a_function_of_distance():
    pe = sinusoidal.sine_only_encoding(64, 32)
    dots = pe @ pe.T
    spread = max(np.ptp(np.diagonal(dots, offset=k)) for k in range(1, 10))
    assert spread > 1.0


def test_sine_collision_found_and_resolved_by_cosine():
    c = sinusoidal.sine_collision(1.0, 64)
    brute = min(abs(math.sin(p) - math.sin(q)) for p in range(64) for q in range(p + 1, 64))
    assert c["sine_gap"] == pytest.approx(brute)
    assert math.sin(c["p"]) == pytest.approx(c["sin_p"]) and math.sin(c["q"]) == pytest.approx(c["sin_q"])
    assert c["pair_distance"] > 10 * c["sine_gap"]


@pytest.mark.parametrize("n,d,base", [(100, 16, 10000.0), (2048, 64, 10000.0), (300, 32, 50.0)])
def test_dimension_variation_matches_brute_force_on_slow_columns(n, d, base):
    pe = sinusoidal.sinusoidal_encoding(n, d, base)
    brute = (pe.max(0) - pe.min(0)) / 2
    closed = sinusoidal.dimension_variation(n, d, base)
    assert np.all(closed >= brute - 1e-12)  # continuous arc range bounds the integer-position range
    # exact for every column sweeping less than a quarter turn (all columns near a small threshold)
    slow = np.repeat((n - 1) * sinusoidal.sinusoidal_frequencies(d, base) < math.pi / 2, 2)
    np.testing.assert_allclose(closed[slow], brute[slow], atol=1e-12)


def test_slow_dimension_share_counts_columns():
    r = sinusoidal.slow_dimension_share(128, 256, threshold=0.01)
    pe = sinusoidal.sinusoidal_encoding(128, 256)
    brute = ((pe.max(0) - pe.min(0)) / 2 < 0.01).mean()
    assert r["share"] == pytest.approx(brute)
    assert 0 < r["share"] < 1


def test_sparsity_at_3072_dims_and_8192_positions():
    # The setting, measured: the slowest column (omega ~ 1e-4) still turns 0.82 rad over 8,192 positions,
    # so no column stays within 1% of its range; for the cosine columns that is the whole story.
    r = sinusoidal.slow_dimension_share(8192, 3072, threshold=0.01)
    omega_min = 10000 ** (-3070 / 3072)
    assert r["share"] == 0.0
    assert sinusoidal.dimension_variation(8192, 3072).min() == pytest.approx((1 - math.cos(8191 * omega_min)) / 2)


# --- learned ------------------------------------------------------------------------------------------------


def test_cosine_similarity_and_by_distance():
    g = torch.Generator().manual_seed(0)
    v = torch.randn(9, 5, generator=g)
    sim = learned.cosine_similarity_matrix(v)
    for i in range(9):
        for j in range(9):
            assert sim[i, j] == pytest.approx(float(torch.nn.functional.cosine_similarity(v[i], v[j], dim=0)), abs=1e-6)
    by = learned.similarity_by_distance(sim)
    assert by["mean"][0] == pytest.approx(1.0)
    assert by["mean"][3] == pytest.approx(np.mean([sim[i, i + 3] for i in range(6)]))
    assert by["max"][3] == pytest.approx(max(sim[i, i + 3] for i in range(6)))


def test_block_mean():
    m = np.arange(16.0).reshape(4, 4)
    # the one block-pooling implementation (core.pooling), as the learned part's 512-position view uses it
    np.testing.assert_allclose(pooling.block_mean(torch.from_numpy(m), None, 2)[0], [[2.5, 4.5], [10.5, 12.5]])


# --- relative (Shaw et al. 2018) ----------------------------------------------------------------------------


@pytest.mark.parametrize("clip", [0, 1, 3, 10])
def test_shaw_relative_scores_against_a_loop(clip):
    g = torch.Generator().manual_seed(clip)
    n, d = 7, 4
    q = torch.randn(n, d, generator=g, dtype=torch.float64)
    table = torch.randn(2 * clip + 1, d, generator=g, dtype=torch.float64)
    s = relative.shaw_relative_scores(q, table, clip)
    for i in range(n):
        for j in range(n):
            r = max(-clip, min(clip, i - j))
            assert s[i, j] == pytest.approx(float(q[i] @ table[r + clip]))


def test_shaw_attention_weights_and_batch_shapes():
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 3, 5, 4, generator=g), torch.randn(2, 3, 5, 4, generator=g)
    table = torch.randn(5, 4, generator=g)
    out = relative.shaw_attention(q, k, table, clip=2)
    rel = relative.shaw_relative_scores(q, table, 2)
    expected = torch.softmax((q @ k.transpose(-2, -1) + rel) / 2.0, dim=-1)
    torch.testing.assert_close(out["weights"], expected)
    # beyond the clipping distance every offset shares one vector
    torch.testing.assert_close(rel[0, 0, 4, 0], rel[0, 0, 4, 1])  # offsets 4 and 3, both clipped to 2


def test_the_gathered_order_equals_shaws_pairwise_tensor_and_is_smaller():
    """The Music Transformer point: the (n, n, d) tensor of every pair's E_clip(i-j), built here by brute force,
    gives the same S as Q E^T gathered into place, which holds n (2k + 1) numbers instead of n^2 d."""
    n, d, clip = 10, 8, 2
    g = torch.Generator().manual_seed(0)
    q, _, table = (
        torch.randn(n, d, generator=g),
        torch.randn(n, d, generator=g),
        torch.randn(2 * clip + 1, d, generator=g),
    )
    pairwise = torch.stack(
        [torch.stack([table[max(-clip, min(clip, i - j)) + clip] for j in range(n)]) for i in range(n)]
    )
    assert pairwise.shape == (n, n, d)
    torch.testing.assert_close(relative.shaw_relative_scores(q, table, clip), torch.einsum("id,ijd->ij", q, pairwise))
    view = relative.shaw_view(n, d, clip, seed=0)
    assert (view.pairwise_numbers, view.gathered_numbers) == (pairwise.numel(), n * table.shape[0]) == (800, 50)
    assert view.offsets_used == table.shape[0] == 5  # offsets -2 .. 2


def test_shaw_rejects_wrong_table():
    with pytest.raises(ValueError):
        relative.shaw_relative_scores(torch.zeros(3, 2), torch.zeros(4, 2), clip=2)


# --- ALiBi --------------------------------------------------------------------------------------------------


def test_alibi_slopes_8_heads_from_the_paper():
    assert alibi.alibi_slopes(8).tolist() == pytest.approx([1 / 2**k for k in range(1, 9)])


def test_alibi_slopes_12_heads():
    # closest power of two is 8 (1/2 .. 1/256); the other 4 are every other slope of the 16-head sequence
    # 2^(-0.5 k): k = 1, 3, 5, 7
    expected = [2.0**-k for k in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
    assert alibi.alibi_slopes(12).tolist() == pytest.approx(expected)


def test_alibi_slopes_16_and_1_heads():
    assert alibi.alibi_slopes(16).tolist() == pytest.approx([2.0 ** (-0.5 * k) for k in range(1, 17)])
    assert alibi.alibi_slopes(1).tolist() == pytest.approx([2.0**-8])


def test_alibi_bias_loop_and_causal():
    b = alibi.alibi_bias(4, 5)
    m = alibi.alibi_slopes(4)
    for h in range(4):
        for i in range(5):
            for j in range(5):
                if j > i:
                    assert b[h, i, j] == float("-inf")
                else:
                    assert b[h, i, j] == pytest.approx(-float(m[h]) * (i - j))


def test_alibi_weights_from_bias_alone():
    w = alibi.alibi_weights(2, 40)
    mask = torch.ones(40, 40, dtype=torch.bool).tril()
    torch.testing.assert_close(w, masked_softmax(alibi.alibi_bias(2, 40).masked_fill(~mask, 0.0), mask))


def test_effective_span_against_cumulative_weights():
    slopes = alibi.alibi_slopes(8)
    span = alibi.effective_span(slopes, mass=0.9)
    for m, s in zip(slopes.tolist(), span.tolist()):
        # weights on distances 0..N-1 with a long history: softmax of -m * distance
        w = torch.softmax(-m * torch.arange(20000, dtype=torch.float64), 0)
        cum = torch.cumsum(w, 0)
        assert int(torch.searchsorted(cum, torch.tensor(0.9, dtype=torch.float64))) + 1 == int(s)


def test_neighbour_step_share_bounds_every_step():
    d, base, thr = 64, 10000.0, 0.01
    pe = sinusoidal.sinusoidal_encoding(5000, d, base)
    step = np.abs(np.diff(pe, axis=0)).max(0) / 2
    omega = np.repeat(sinusoidal.sinusoidal_frequencies(d, base), 2)
    assert np.all(step <= omega / 2 + 1e-12)
    share = sinusoidal.neighbour_step_share(d, base, thr)
    assert share == pytest.approx((omega / 2 < thr).mean())
    assert share == pytest.approx(np.mean(step < thr), abs=2 / d)  # brute force agrees (up to one pair at the edge)


@pytest.mark.parametrize("n,d,cells", [(512, 96, 16), (100, 30, 7), (8192, 3072, 256)])
def test_pooled_encoding_equals_block_means_of_the_full_matrix(n, d, cells):
    """The closed-form block sums against core.pooling.block_mean over the whole encoding (float32 there)."""
    from core import pooling

    ref, rows, cols = pooling.block_mean(torch.from_numpy(sinusoidal.sinusoidal_encoding(n, d)), None, cells)
    got = sinusoidal.pooled_encoding(n, d, cells=cells)
    np.testing.assert_allclose(got.pe, ref.numpy(), atol=1e-6)
    assert np.array_equal(got.row_edges, rows) and np.array_equal(got.col_edges, cols)


def test_subspace_view_against_numpy_on_a_made_up_model():
    """Positions in the first 3 of 16 directions, words spread over the others (and a little everywhere): the view
    finds k = 3 directions and a word share that numpy's own SVD and projection give."""
    from types import SimpleNamespace

    g = torch.Generator().manual_seed(0)
    pos = torch.zeros(64, 16, dtype=torch.float64)
    pos[:, :3] = torch.randn(64, 3, generator=g, dtype=torch.float64) * 5
    pos += torch.randn(64, 16, generator=g, dtype=torch.float64) * 0.01
    words = torch.randn(500, 16, generator=g, dtype=torch.float64)
    words[:, :3] *= 0.1
    model = SimpleNamespace(capabilities=SimpleNamespace(vocab_size=500), token_embeddings=lambda ids: words[ids])
    from unittest import mock

    with mock.patch.object(learned, "minilm_position_embeddings", lambda m: pos):
        view = learned.subspace_view(model)
    p = pos.numpy() - pos.numpy().mean(0)
    _, s, vt = np.linalg.svd(p, full_matrices=False)
    k = int(np.searchsorted(np.cumsum(s**2) / (s**2).sum(), 0.9)) + 1
    w = words.numpy() - words.numpy().mean(0)
    share = ((w @ vt[:k].T) ** 2).sum() / (w**2).sum()
    assert view.k == k == 3 and view.d == 16
    assert view.word_share == pytest.approx(share, rel=1e-9) and view.random_share == 3 / 16
    assert view.kept_apart and view.below_chance == pytest.approx((3 / 16) / share)


@pytest.mark.parametrize(
    "word_share, apart, times",
    # chance puts k / d = 4 / 16 = 0.25 of the words' variance in 4 of 16 directions; "kept apart" is strictly
    # less than half of that (0.125): 0.1 is 2.5x below chance, 0.125 exactly half, 0.2 only 1.25x below
    [(0.1, True, 2.5), (0.124, True, 0.25 / 0.124), (0.125, False, 2.0), (0.2, False, 1.25), (0.3, False, 0.25 / 0.3)],
)
def test_the_words_are_kept_apart_only_below_half_of_chance(word_share, apart, times):
    """The page's verdict (hyp_apart or hyp_shared) at its threshold: the made-up model above is ~80x below chance,
    where any threshold between 0.002 and 1 of chance would pass."""
    view = learned.SubspaceView(d=16, energy=0.9, k=4, word_share=word_share, random_share=4 / 16)
    assert view.kept_apart is apart
    assert view.below_chance == pytest.approx(times, rel=1e-12)
