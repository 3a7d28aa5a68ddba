"""What the /positions parts draw: each core view against an independent computation (loops, transformers'
apply_rotary_pos_emb, properties such as "the RoPE score depends only on m - n"), and one pair numbering
(i = 0 .. d/2 - 1) in code and words; the figures are tested in tests/viz/test_positions_*.py."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from app import i18n
from core.positions import alibi, learned, relative, rope, rope_bands, sinusoidal

DT = torch.float64


def t(key, **fmt):
    return i18n.text("en", "positions", key, **fmt)


# --- sinusoidal -------------------------------------------------------------------------------------------------


def spread_by_loop(matrix, side=None) -> float:
    """Largest max - min of matrix[i, j] over the cells of one offset i - j (side None), or, with side = clip, over
    the keys of one row beyond the clipping distance on one side (i - j > clip, then i - j < -clip)."""
    n = matrix.shape[0]
    groups = {}
    for i in range(n):
        for j in range(n):
            key = i - j if side is None else (i, 1) if i - j > side else (i, -1) if i - j < -side else None
            if key is not None:
                groups.setdefault(key, []).append(float(matrix[i, j]))
    return max(max(g) - min(g) for g in groups.values())


def test_the_base_sliders_move_over_log10_of_the_base():
    from core.positions.state import STATE, base_from_log10

    assert base_from_log10(STATE["base"].default) == base_from_log10(STATE["rope_base"].default) == 10_000.0
    assert base_from_log10(1.0) == 10.0 and base_from_log10(6.0) == 1e6


def test_encoding_view_dot_products_depend_on_distance_only():
    v = sinusoidal.encoding_view(40, 16, 100.0)
    assert v.pe.shape == (40, 16) and v.diagonal_spread < 1e-10 and v.pairs == 1600  # 40 x 40 (i, j) pairs
    for k in (-39, -3, 0, 5, 39):
        assert v.dot_by_distance[k + 39] == pytest.approx(np.diagonal(v.dots, offset=k)[0])
    assert sinusoidal.encoding_view(10, 7).pe.shape == (10, 6)  # odd width from a link: rounded down
    # the spread the page quotes is measured along the diagonals: rows scaled by 1 + i/40 (the dot products no longer
    # a function of i - j) must show the largest max - min along one diagonal, found here by a loop
    real = sinusoidal.sinusoidal_encoding
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            sinusoidal, "sinusoidal_encoding", lambda n, d, base: real(n, d, base) * (1 + np.arange(n)[:, None] / n)
        )
        bent = sinusoidal.encoding_view(40, 16, 100.0)
    assert spread_by_loop(bent.dots) > 1 and bent.diagonal_spread == pytest.approx(spread_by_loop(bent.dots))


def test_collision_view_pairs_count_from_zero():
    v = sinusoidal.collision_view(64, 16, 10000.0, 0)
    assert v.omega == 1.0  # pair 0 is the fastest: base^0
    w = sinusoidal.collision_view(64, 16, 10000.0, 3)
    assert w.omega == pytest.approx(10000.0 ** (-2 * 3 / 16))
    np.testing.assert_allclose(np.hypot(w.points[:, 0], w.points[:, 1]), 1.0)
    assert sinusoidal.collision_view(64, 16, 10000.0, 99).pair == 7  # clipped to d/2 - 1
    so = sinusoidal.sine_only_encoding(64, 16, 10000.0)
    steps = [float(so[p] @ so[p + 1]) for p in range(63)]
    assert (w.sine_only_lo, w.sine_only_hi) == pytest.approx((min(steps), max(steps)))


def test_sparsity_view():
    v = sinusoidal.sparsity_view(8192, 512, 10000.0, 0.01)
    assert v.slow == sinusoidal.slow_dimension_share(8192, 512, 10000.0, 0.01)
    assert v.least == pytest.approx(v.variation.min())


# --- learned, relative, ALiBi -------------------------------------------------------------------------------


def test_learned_table_view_pools_past_256_positions():
    table = torch.randn(600, 8, generator=torch.Generator().manual_seed(0))
    v = learned.table_view(table, 512)
    sim = learned.cosine_similarity_matrix(table[:512])
    assert v.factor == 2 and v.shown.shape == (256, 256)
    assert v.shown[3, 5] == pytest.approx(sim[6:8, 10:12].mean(), abs=1e-6)
    assert v.axis[:2].tolist() == [0.5, 2.5]
    small = learned.table_view(table, 64)
    assert small.factor == 1 and small.mean_at(1) == pytest.approx(np.mean([sim[i, i + 1] for i in range(63)]))
    assert small.mean_at(1000) == small.mean_at(63)
    assert (small.distance(100), small.distance(10)) == (63, 10)  # 64 positions: 63 apart at most


def test_shaw_view_against_a_loop():
    v = relative.shaw_view(9, 4, 2, 7)
    for i in range(9):
        for j in range(9):
            assert v.offsets[i, j] == max(-2, min(2, i - j))
    assert v.clipped_spread < 1e-6  # one shared vector beyond +-k
    # the spread the page quotes is measured over the keys beyond +-k: relative scores that grow by 0.01 per key
    # (no longer one shared vector there) must show the largest max - min of one row's side, found by a loop
    real = relative.shaw_attention

    def bent(q, k, table, clip):
        out = real(q, k, table, clip)
        return {**out, "relative": out["relative"] + 0.01 * torch.arange(q.shape[0])[None, :]}

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(relative, "shaw_attention", bent)
        moved = relative.shaw_view(9, 4, 2, 7)
    expected = spread_by_loop(moved.relative, side=2)
    assert expected > 0.01 and moved.clipped_spread == pytest.approx(expected, rel=1e-6)
    np.testing.assert_allclose(v.weights.sum(-1), 1.0, rtol=1e-6)
    assert v.change > 0


def test_alibi_view_bias_and_weights():
    v = alibi.alibi_view(8, 6, 99)
    assert v.head == 7
    m = v.slopes[7]
    for i in range(6):
        for j in range(6):
            assert v.future[i, j] == (j > i)
            assert v.bias[i, j] == pytest.approx(0.0 if j > i else -m * (i - j))
    np.testing.assert_allclose(v.weights.sum(-1), 1.0)
    assert v.slope_labels[0] == "2^-1"


# --- RoPE ---------------------------------------------------------------------------------------------------


def test_rope_pairs_count_from_zero_in_code_and_in_words():
    v = rope.rotation_view(8, 10000.0, 2)
    assert v.inv_freq.tolist() == pytest.approx([10000.0 ** (-2 * i / 8) for i in range(4)])  # i = 0 .. d/2 - 1
    ang = rope.angles_view(v.inv_freq, 10, 3)
    assert ang.theta == pytest.approx(10000.0 ** (-6 / 8))
    np.testing.assert_allclose(ang.angles[7], np.remainder(7 * v.inv_freq.numpy(), 2 * math.pi))
    for lang in i18n.languages():
        intro = i18n.text(lang, "positions", "rope_intro")
        assert "base^(−2i/d)" in intro and "i = 0 … d/2 − 1" in intro and "(i−1)" not in intro
        assert "i = 0 … d/2 − 1" in i18n.text(lang, "positions", "pair_axis")
        assert "i = 0 … d/2 − 1" in i18n.text(lang, "rope_scaling.figure", "pair")


def test_check_view_depends_on_offset_only_and_matches_transformers():
    d, n = 16, 24
    inv = rope.rope_inv_freq(d, 500.0)
    v = rope.check_view(inv, n, 5)
    assert v.max_spread < 1e-10 and v.score_range > 0.5 and v.pairs == 24 * 24
    assert rope.check_view(inv, 100, 5).pairs == 64 * 64  # checked up to 64 positions
    assert v.layout_diff < 1e-12 and v.layout_nodiff > 0.1
    # the spread the page quotes is measured over the pairs of one offset m - n: rotations that also scale position p
    # by 1 + p/100 (no longer a function of m - n) must show the largest max - min of one offset, found by a loop
    rotate = rope.apply_rope_adjacent
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rope, "apply_rope_adjacent", lambda x, p, f: rotate(x, p, f) * (1 + p[:, None] / 100))
        scaled = rope.check_view(inv, n, 5)
    assert spread_by_loop(scaled.scores) > 0.01 and scaled.max_spread == pytest.approx(spread_by_loop(scaled.scores))
    # the layout check the page quotes measures the two layouts apart: adjacent(x) moved by 2^-10 reads as 2^-10
    real, shift = rope.apply_rope_adjacent, 2.0**-10
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rope, "apply_rope_adjacent", lambda *a, **kw: real(*a, **kw) + shift)
        assert rope.check_view(inv, n, 5).layout_diff == pytest.approx(shift, rel=1e-9)
    # the same q and k rotated by transformers' Llama code (rotate_half layout: dimensions reordered by P)
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(d, generator=g, dtype=DT), torch.randn(d, generator=g, dtype=DT)
    perm = rope.half_permutation(d)
    angles = rope.rope_angles(torch.arange(n), inv)
    emb = torch.cat((angles, angles), -1)[None]  # (1, n, d)
    q_hf, k_hf = apply_rotary_pos_emb(
        q[perm].expand(1, 1, n, d), k[perm].expand(1, 1, n, d), torch.cos(emb), torch.sin(emb)
    )
    np.testing.assert_allclose(v.scores, (q_hf[0, 0] @ k_hf[0, 0].T).numpy(), atol=1e-12)
    assert v.permutation == perm.tolist()


def test_bands_view_on_a_fake_trace():
    g = torch.Generator().manual_seed(1)
    n, d = 7, 16
    q, k = torch.randn(2, 1, 3, n, d, generator=g), torch.randn(2, 1, 1, n, d, generator=g)
    mask = torch.ones(n, n, dtype=torch.bool).tril()
    trace = SimpleNamespace(
        n_layers=2,
        n_heads=3,
        queries=list(q),
        keys=list(k),
        scale=0.25,
        kv_head=lambda h: 0,
        mask=lambda i: mask,
        batch=SimpleNamespace(tokens=[[f"t{i}" for i in range(n)]]),
    )
    v = rope_bands.bands_view(trace, 5, 2, 3)  # layer clipped to 1
    assert v.layer == 1 and v.labels[0].startswith("0 ")
    full = (q[1, 0, 2].double() @ k[1, 0, 0].double().T) * 0.25
    np.testing.assert_allclose(v.band_scores.sum(0)[mask.numpy()], full[mask].numpy(), atol=1e-12)
    assert v.max_diff < 1e-12
    assert v.band_pairs == [(0, 2), (3, 4), (5, 7)]
    # the sum check the page quotes measures the bands apart from q.k * scale: each of the 3 bands moved by 2^-10
    # before the scale (0.25) must read as 3 x 2^-10 x 0.25
    real, shift = rope_bands.frequency_band_contributions, 2.0**-10
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rope_bands, "frequency_band_contributions", lambda *a, **kw: real(*a, **kw) + shift)
        assert rope_bands.bands_view(trace, 1, 2, 3).max_diff == pytest.approx(3 * shift * 0.25, rel=1e-6)
    assert v.pair_share.sum() == pytest.approx(1.0) and v.band_share.sum() == pytest.approx(1.0)
