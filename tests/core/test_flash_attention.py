"""FlashAttention's tiled online softmax against torch's SDPA, its step-by-step statistics against a direct softmax
over the keys seen so far, and the memory-traffic counts against hand-worked loops and Theorem 2's orders."""

import dataclasses
import math

import pytest
import torch

from core import flash_attention as fa


def qkv(n_q, n_k, d, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(n, d, generator=gen, dtype=torch.float64) for n in (n_q, n_k, n_k))


def test_tile_ranges_cover_n_with_a_short_last_tile():
    assert fa.tile_ranges(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert fa.tile_ranges(10, 5) == [(0, 5), (5, 10)]
    assert fa.tile_ranges(3, 8) == [(0, 3)]  # a block larger than n: one tile
    assert fa.tile_ranges(4, 1) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    with pytest.raises(ValueError):
        fa.tile_ranges(4, 0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("br,bc", [(1, 1), (3, 5), (7, 4), (4, 3), (10, 10), (32, 64)])
def test_tiled_output_equals_sdpa(causal, br, bc):
    q, k, v = qkv(10, 10, 6)
    allowed = fa.allowed_mask(10, 10, causal)
    out, _, _ = fa.tiled_attention(q, k, v, br, bc, allowed)
    ref = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]
    torch.testing.assert_close(out, ref, rtol=1e-10, atol=1e-12)


def test_tiled_output_equals_sdpa_with_more_keys_than_queries_in_float32():
    q, k, v = (x.float() for x in qkv(5, 13, 8, seed=3))
    out, _, _ = fa.tiled_attention(q, k, v, 2, 4)
    ref = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None])[0]
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-6)


def test_fully_masked_rows_give_zeros_like_sdpa_where_a_naive_softmax_gives_nan():
    q, k, v = qkv(8, 8, 4, seed=1)
    allowed = fa.allowed_mask(8, 8, causal=True, padded_keys=3)  # queries 0, 1, 2 see no key at all
    assert (~allowed.any(dim=-1)).nonzero().flatten().tolist() == [0, 1, 2]
    out, m, l = fa.tiled_attention(q, k, v, 3, 2, allowed)
    assert torch.all(out[:3] == 0) and torch.all(l[:3] == 0) and torch.all(m[:3] == float("-inf"))
    ref = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=allowed)[0]
    torch.testing.assert_close(out, ref, rtol=1e-10, atol=1e-12)  # torch's SDPA also returns zeros there
    naive = torch.softmax((q @ k.T / 2.0).masked_fill(~allowed, float("-inf")), dim=-1) @ v
    assert torch.isnan(naive[:3]).all() and not torch.isnan(naive[3:]).any()


def test_recomputed_weights_from_m_and_l_equal_the_softmax():
    q, k, v = qkv(9, 9, 4, seed=2)
    allowed = fa.allowed_mask(9, 9, causal=True, padded_keys=2)
    _, m, l = fa.tiled_attention(q, k, v, 4, 3, allowed)
    p = fa.recompute_weights(q, k, m, l, allowed)
    scores = (q @ k.T / 2.0).masked_fill(~allowed, float("-inf"))
    rows = allowed.any(dim=-1)
    torch.testing.assert_close(p[rows], torch.softmax(scores[rows], dim=-1))
    assert torch.all(p[~rows] == 0) and torch.all(p[~allowed] == 0)


@pytest.mark.parametrize("causal,padded", [(False, 0), (True, 0), (True, 5)])
def test_each_step_holds_the_softmax_over_the_keys_seen_so_far(causal, padded):
    view = fa.walk(n=11, d=3, br=4, bc=3, q_tile=1, causal=causal, padded_keys=padded, seed=4)
    gen = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(11, 3, generator=gen, dtype=torch.float64) for _ in range(3))
    s, e = view.queries
    assert (s, e) == (4, 8) and len(view.steps) == 4  # key tiles [0,3) [3,6) [6,9) [9,11)
    allowed = torch.from_numpy(view.allowed)
    scores = (q[s:e] @ k.T / math.sqrt(3)).masked_fill(~allowed[s:e], float("-inf"))
    for step in view.steps:
        seen = scores[:, : step.keys[1]]
        m = seen.max(dim=-1).values
        has = m > float("-inf")
        torch.testing.assert_close(torch.from_numpy(step.m), m)
        l = torch.where(has, torch.exp(seen - torch.where(has, m, 0)[:, None]).sum(-1), 0.0)
        torch.testing.assert_close(torch.from_numpy(step.l), l)
        out = torch.zeros(e - s, 3, dtype=torch.float64)
        out[has] = torch.softmax(seen[has], dim=-1) @ v[: step.keys[1]]
        torch.testing.assert_close(torch.from_numpy(step.output), out)
        # the rescaling is exactly exp(m_before - m) wherever something had been seen before
        before = torch.from_numpy(step.m_before) > float("-inf")
        m_before, m_after = torch.from_numpy(step.m_before)[before], torch.from_numpy(step.m)[before]
        torch.testing.assert_close(torch.from_numpy(step.rescale)[before], torch.exp(m_before - m_after))
    assert view.steps[-1].output.tolist() == view.output[s:e].tolist()
    assert view.max_abs_diff < 1e-12


def test_causal_tiles_above_the_diagonal_are_marked_skipped():
    view = fa.walk(n=8, d=2, br=2, bc=2, q_tile=0, causal=True)
    assert [st.skipped for st in view.steps] == [False, True, True, True]


def test_walk_clamps_the_query_tile_and_handles_blocks_larger_than_n():
    view = fa.walk(n=5, d=2, br=9, bc=12, q_tile=7)
    assert view.query_tiles == [(0, 5)] and view.key_tiles == [(0, 5)] and view.q_tile == 0
    assert len(view.steps) == 1 and view.max_abs_diff < 1e-12 and view.matches_sdpa
    assert not dataclasses.replace(view, max_abs_diff=1e-6).matches_sdpa  # the page's check then says it differs
    assert view.block_notes == [("Br", "larger", 9, 5), ("Bc", "larger", 12, 5)]


@pytest.mark.parametrize("causal", [False, True])
def test_the_pages_sdpa_check_reads_torchs_own_sdpa(monkeypatch, causal):
    """The page's check (tiled output against torch's SDPA) must compare with torch's call, not with the tiled result
    again: the two agree to 1e-12, so only moving torch's result can tell. Moved by 2^-20 ~ 9.5e-7, it must come
    back as the reference and as the difference, and the check must then say it differs; the tiles are unmoved."""
    real = torch.nn.functional.scaled_dot_product_attention
    shift = 2.0**-20
    view = fa.walk(n=9, d=3, br=4, bc=2, causal=causal, padded_keys=2)
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", lambda *a, **kw: real(*a, **kw) + shift)
    moved = fa.walk(n=9, d=3, br=4, bc=2, causal=causal, padded_keys=2)
    assert moved.output.tolist() == view.output.tolist()
    torch.testing.assert_close(torch.from_numpy(moved.reference), torch.from_numpy(view.reference) + shift)
    assert moved.max_abs_diff == pytest.approx(shift, rel=1e-6) and not moved.matches_sdpa
    assert view.matches_sdpa
    # n = 10 in tiles of 4: 4 + 4 + 2 rows, the last one short; 5 divides 10
    assert fa.walk(n=10, d=2, br=4, bc=5).block_notes == [("Br", "uneven", 4, 2)]
    assert fa.walk(n=8, d=2, br=4, bc=8).block_notes == []


# --- memory traffic ------------------------------------------------------------------------------------------


def test_naive_traffic_hand_worked():
    # n = 2, d = 1: read Q (2) K (2), write S (4); read S (4), write P (4); read P (4) V (2), write O (2)
    assert fa.naive_traffic(2, 1) == fa.Traffic(reads=14, writes=10)


def test_flash1_traffic_hand_worked():
    # n = 3, d = 2, Br = Bc = 2: init writes O (6), l (3), m (3) = 12.
    # key tile 0 (2 rows): K, V 8; query tile 0 (2 rows): Q 4 + O 4 + l, m 4 read, O 4 + l, m 4 written;
    # query tile 1 (1 row): 2 + 2 + 2 read, 2 + 2 written -> reads 26, writes 12.
    # key tile 1 (1 row): K, V 4, the same query loop -> reads 22, writes 12.
    assert fa.flash1_traffic(3, 2, 2, 2) == fa.Traffic(reads=48, writes=36)
    assert fa.flash1_traffic_closed(3, 2, 2) == fa.Traffic(reads=48, writes=36)


def test_flash2_traffic_hand_worked():
    # n = 3, d = 2, Br = Bc = 2: query tile 0: Q 4 + all K, V 12, writes O 4 + lse 2;
    # query tile 1: Q 2 + 12, writes 2 + 1
    assert fa.flash2_traffic(3, 2, 2, 2) == fa.Traffic(reads=30, writes=9)
    assert fa.flash2_traffic_closed(3, 2, 2) == fa.Traffic(reads=30, writes=9)


@pytest.mark.parametrize("n,d,br,bc", [(1, 1, 1, 1), (10, 3, 4, 3), (37, 8, 5, 16), (64, 16, 64, 200)])
def test_closed_forms_equal_the_loop_counts(n, d, br, bc):
    assert fa.flash1_traffic_closed(n, d, bc) == fa.flash1_traffic(n, d, br, bc)
    assert fa.flash2_traffic_closed(n, d, br) == fa.flash2_traffic(n, d, br, bc)


def test_paper_block_sizes():
    assert fa.paper_block_sizes(98_304, 64) == (64, 384)  # 192 KiB of fp16: Bc = ceil(M / 4d), Br = min(Bc, d)
    assert fa.paper_block_sizes(100, 64) == (1, 1)


def test_asymptotic_ratios_against_theorem_2():
    d, m_sram = 64, 4 * 64 * 128  # Bc = 128 exactly
    for n in (2**16, 2**20):
        naive = fa.naive_traffic(n, d).total
        assert naive == 4 * fa.theta_naive(n, d)  # exactly 4 (n d + n^2)
    n = 2**20
    ratio = fa.flash1_traffic_closed(n, d, 128).total / fa.theta_flash(n, d, m_sram)
    assert ratio == pytest.approx(12 + 16 / d, rel=1e-3)  # 3 n d Tc + 4 n Tc with Tc = 4 n d / M


def test_flash_moves_fewer_elements_than_standard_attention_at_typical_sizes():
    view = fa.traffic_view(4096, 64, 98_304)
    assert (view.br, view.bc) == (64, 384)
    assert view.naive.total / view.flash1.total > 5
    assert view.curves["naive"][view.sizes.index(4096)] == view.naive.total


def test_backward_memory_hand_worked():
    mem = fa.backward_memory(1024, heads=1, bytes_per_element=2)
    assert mem.stored_p_bytes == 2 * 1024 * 1024  # 1024^2 weights of 2 bytes
    assert mem.statistics_bytes == 2 * 1024 * 4  # m and l in float32
    assert mem.logsumexp_bytes == 1024 * 4


def test_theorem_2_bound_only_inside_its_range():
    n, d = 1024, 64
    assert fa.theta_flash(n, d, d - 1) is None and fa.theta_flash(n, d, n * d + 1) is None
    assert fa.theta_flash(n, d, d) == n * n * d  # M = d: one row on chip
    assert fa.theta_flash(n, d, n * d) == n * d  # M = nd: the bound meets reading the inputs once
    # inside the range the order never falls below n d; outside (M > nd) it would, which is why it is not printed
    assert all(fa.theta_flash(n, d, m) >= n * d for m in (d, 4096, 32_768, n * d))
    assert n * n * d * d / (4 * n * d) < n * d
    view = fa.traffic_view(16, 64, 2_097_152)  # 4 MiB of fp16 on chip, 16 tokens: M > nd everywhere up to n = 32k
    assert all(math.isnan(v) for s, v in zip(view.sizes, view.curves["theta_flash"]) if 2_097_152 > s * 64)
    assert all(not math.isnan(v) for s, v in zip(view.sizes, view.curves["theta_flash"]) if 2_097_152 <= s * 64)


def test_algorithm_1_reads_q_and_writes_only_o_l_m():
    # per key tile: reads K_j, V_j (2 Bc d) and, for every query row, Q_i, O_i (2 d) and l_i, m_i (2); writes back
    # O_i, l_i, m_i (d + 2) per row: Q is never written
    n, d, br, bc = 10, 3, 4, 5
    one_tile = fa.flash1_traffic(n, d, br, n)  # Tc = 1
    two_tiles = fa.flash1_traffic(n, d, br, bc)  # Tc = 2
    assert two_tiles.writes - one_tile.writes == n * (d + 2)
    assert two_tiles.reads - one_tile.reads == n * (2 * d + 2)


def test_the_views_derived_numbers_from_its_counts():
    """What /flash-attention prints beside the table, from the view: M in elements for KiB of SRAM, bytes, the
    ratio and the constant of FlashAttention's count against the closed form at a large n."""
    assert fa.sram_elements(192, 2) == 98_304 and fa.sram_elements(1, 8) == 128 and fa.sram_elements(0, 2) == 1
    view = fa.traffic_view(4096, 64, fa.sram_elements(192, 2), 2)
    assert view.bytes_of(view.flash1) == 2 * view.flash1.total
    assert view.ratio == view.naive.total / view.flash1.total
    assert (view.theta_naive, view.theta_flash, view.nd) == (4096 * 64 + 4096**2, 4096**2 * 64**2 / 98_304, 4096 * 64)
    n, d, m = 1 << 20, 64, 4 * 64 * 128  # Bc = M / 4d = 128 divides n: the closed form is exactly c n^2 d^2 / M + O(nd)
    big = fa.traffic_view(n, d, m)
    assert big.flash1.total / big.theta_flash == pytest.approx(big.theta_constant, rel=1e-3)
    assert fa.backward_memory(1024, 1, 2).ratio == 2 * 1024 * 1024 / (2 * 1024 * 4)
