"""RoPE: hand-worked frequencies, the rotation matrix, the relative-position property, the two layouts, and our
rotate_half application against transformers' Llama implementation."""

import math

import numpy as np
import pytest
import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

from core.positions import rope, rope_bands

DT = torch.float64


def test_inv_freq_hand_worked():
    torch.testing.assert_close(rope.rope_inv_freq(4, 10000.0), torch.tensor([1.0, 0.01], dtype=DT))
    torch.testing.assert_close(rope.rope_inv_freq(6, 1000.0), torch.tensor([1.0, 0.1, 0.01], dtype=DT))
    with pytest.raises(ValueError):
        rope.rope_inv_freq(5)


def test_angles_hand_worked():
    a = rope.rope_angles([0, 3], rope.rope_inv_freq(4))
    torch.testing.assert_close(a, torch.tensor([[0.0, 0.0], [3.0, 0.03]], dtype=DT))


def test_rotation_matrix_is_block_diagonal_rotation():
    inv = rope.rope_inv_freq(6, 100.0)
    R = rope.rotation_matrix(2.0, inv)
    torch.testing.assert_close(R @ R.T, torch.eye(6, dtype=DT))  # orthogonal
    assert torch.linalg.det(R).item() == pytest.approx(1.0)  # a rotation
    for i in range(3):
        block = R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2]
        a = 2.0 * inv[i].item()
        torch.testing.assert_close(
            block, torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=DT)
        )
    off = R.clone()
    for i in range(3):
        off[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = 0
    assert off.abs().max() == 0


@pytest.mark.parametrize("layout", ["adjacent", "rotate_half"])
def test_rotary_application_equals_rotation_matrix(layout):
    g = torch.Generator().manual_seed(0)
    d, inv = 8, rope.rope_inv_freq(8, 10000.0)
    x = torch.randn(5, d, generator=g, dtype=DT)
    positions = torch.tensor([0, 1, 7, 100, 4096])
    apply = rope.apply_rope_adjacent if layout == "adjacent" else rope.apply_rope_rotate_half
    out = apply(x, positions, inv)
    for r, m in enumerate(positions.tolist()):
        torch.testing.assert_close(out[r], rope.rotation_matrix(m, inv, layout) @ x[r])


def test_relative_property_rm_rn():
    inv = rope.rope_inv_freq(8, 10000.0)
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(8, generator=g, dtype=DT), torch.randn(8, generator=g, dtype=DT)
    for m, n in [(3, 1), (50, 48), (1000, 998), (5, 9)]:
        lhs = (rope.rotation_matrix(m, inv) @ q) @ (rope.rotation_matrix(n, inv) @ k)
        rhs = q @ (rope.rotation_matrix(n - m, inv) @ k)
        assert lhs.item() == pytest.approx(rhs.item(), abs=1e-10)


def test_score_check_depends_only_on_offset():
    g = torch.Generator().manual_seed(2)
    inv = rope.rope_inv_freq(16, 10000.0)
    q, k = torch.randn(16, generator=g, dtype=DT), torch.randn(16, generator=g, dtype=DT)
    r = rope.relative_score_check(q, k, 40, inv)
    assert r["max_spread"] < 1e-10
    assert r["score_range"] > 1.0  # the scores do change with the offset: the check is not vacuous
    # brute force for one offset
    s = r["scores"]
    assert s[10, 3].item() == pytest.approx(s[36, 29].item())
    # without RoPE, and with positions *added* instead (sinusoidal-style), the property fails
    added = (q + torch.arange(40, dtype=DT)[:, None] * 0.1) @ (k + torch.arange(40, dtype=DT)[:, None] * 0.1).T
    assert abs(added[10, 3] - added[36, 29]) > 1e-3


def test_layouts_equal_up_to_permutation():
    g = torch.Generator().manual_seed(3)
    d = 12
    inv = rope.rope_inv_freq(d, 500.0)
    x = torch.randn(3, 6, d, generator=g, dtype=DT)
    positions = torch.arange(6) * 37
    perm = rope.half_permutation(d)
    assert perm.tolist() == [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]
    torch.testing.assert_close(
        rope.apply_rope_rotate_half(x[..., perm], positions, inv),
        rope.apply_rope_adjacent(x, positions, inv)[..., perm],
    )
    # the permutation matters: without it the two layouts disagree
    assert not torch.allclose(
        rope.apply_rope_rotate_half(x, positions, inv), rope.apply_rope_adjacent(x, positions, inv)
    )
    # and the matrices: P R_adj P^T = R_half
    P = torch.eye(d, dtype=DT)[perm]
    torch.testing.assert_close(P @ rope.rotation_matrix(5.0, inv) @ P.T, rope.rotation_matrix(5.0, inv, "rotate_half"))


def test_rotate_half_equals_transformers_llama():
    d, theta = 64, 100000.0
    config = LlamaConfig(
        hidden_size=d * 2,
        num_attention_heads=2,
        head_dim=d,
        num_hidden_layers=1,
        intermediate_size=8,
        vocab_size=8,
        max_position_embeddings=8192,
        rope_parameters={"rope_type": "default", "rope_theta": theta},
    )
    rotary = LlamaRotaryEmbedding(config)
    g = torch.Generator().manual_seed(4)
    q, k = torch.randn(1, 2, 9, d, generator=g), torch.randn(1, 1, 9, d, generator=g)
    positions = torch.tensor([[0, 1, 2, 3, 100, 1000, 4000, 8000, 8191]])
    cos, sin = rotary(q, positions)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos, sin)
    inv = rope.rope_inv_freq(d, theta, dtype=torch.float32)
    torch.testing.assert_close(rotary.inv_freq, inv)
    ours_q = rope.apply_rope_rotate_half(q, positions[0], inv)
    ours_k = rope.apply_rope_rotate_half(k, positions[0], inv)
    # up to position 100 the float32 angles are exact enough for a tight match
    torch.testing.assert_close(ours_q[..., :5, :], q_ref[..., :5, :], atol=2e-6, rtol=1e-5)
    torch.testing.assert_close(ours_k[..., :5, :], k_ref[..., :5, :], atol=2e-6, rtol=1e-5)
    # at positions in the thousands a float32 angle has an ulp of ~5e-4 rad, and torch's vectorised and scalar
    # cos kernels round differently there; both are within that precision
    torch.testing.assert_close(ours_q, q_ref, atol=2e-3, rtol=0)
    torch.testing.assert_close(ours_k, k_ref, atol=2e-3, rtol=0)


def test_pair_trajectory_is_a_rotation():
    pts = rope.pair_trajectory([1.0, 0.0], 0.5, torch.arange(5))
    torch.testing.assert_close(pts[:, 0], torch.cos(torch.arange(5) * 0.5).double())
    torch.testing.assert_close(pts[:, 1], torch.sin(torch.arange(5) * 0.5).double())
    torch.testing.assert_close(pts.norm(dim=1), torch.ones(5, dtype=DT))


def test_frequency_bands_sum_to_scores():
    g = torch.Generator().manual_seed(5)
    q, k = torch.randn(6, 16, generator=g, dtype=DT), torch.randn(7, 16, generator=g, dtype=DT)
    bands = rope_bands.frequency_band_contributions(q, k, 3)
    torch.testing.assert_close(bands.sum(0), q @ k.T)
    assert rope_bands.band_edges(8, 3) == [(0, 3), (3, 5), (5, 8)]
    # band 0 = pairs 0..2 = dims (0,1,2) and (8,9,10) in the rotate_half layout
    idx = [0, 1, 2, 8, 9, 10]
    torch.testing.assert_close(bands[0], q[:, idx] @ k[:, idx].T)


def test_pooled_angles_are_block_circular_means_of_the_angles():
    """Against the angles built in full and averaged as complex numbers, block by block."""
    import math

    from core.pooling import bin_edges
    from core.positions import rope as rp

    n, d, cells = 300, 40, 7
    ang = rp.rope_angles(torch.arange(n), rp.rope_inv_freq(d)).numpy()
    rows, cols = bin_edges(n, cells), bin_edges(d // 2, cells)
    view = rp.pooled_angles(n, d, cells=cells)
    for i in range(len(rows) - 1):
        for j in range(len(cols) - 1):
            z = np.exp(1j * ang[rows[i] : rows[i + 1], cols[j] : cols[j + 1]]).mean()
            assert abs(view.coherence[i, j] - abs(z)) < 1e-12
            assert abs(np.angle(np.exp(1j * (view.angles[i, j] - np.angle(z) % (2 * math.pi))))) < 1e-9
    big = rp.pooled_angles(8192, 3072)
    assert big.angles.shape == (128, 128) and big.fastest_coherence < 0.05 and big.slowest_coherence > 0.99
