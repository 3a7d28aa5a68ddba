"""Scaled RoPE: our wrappers return exactly what transformers computes, the methods have the properties their
papers state, and the plotted curves equal a direct evaluation. (The long-context experiment: test_rope_scaling_experiment.py.)"""

import math

import numpy as np
import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from core import rope_scaling as rs
from core.positions import rope
from core.rope_scaling import formulas

L0, D, THETA = 8192, 64, 100000.0


def hf_config(params: dict, max_pos: int) -> LlamaConfig:
    return LlamaConfig(
        hidden_size=D,
        num_attention_heads=1,
        head_dim=D,
        num_hidden_layers=1,
        intermediate_size=8,
        vocab_size=8,
        max_position_embeddings=max_pos,
        rope_parameters=dict(params),
    )


def default_inv():
    return rs.scaled_inv_freq("default")[0]


@pytest.mark.parametrize("factor", [2.0, 4.0, 8.0])
def test_wrappers_equal_transformers_functions(factor):
    base = {"rope_theta": THETA, "factor": factor}
    cases = {
        "linear": ({**base, "rope_type": "linear"}, L0, None),
        "dynamic": ({**base, "rope_type": "dynamic"}, L0, 3 * L0),
        "yarn": ({**base, "rope_type": "yarn", "original_max_position_embeddings": L0}, int(L0 * factor), None),
        "llama3": (
            {
                **base,
                "rope_type": "llama3",
                "original_max_position_embeddings": L0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
            },
            int(L0 * factor),
            None,
        ),
    }
    for method, (params, max_pos, seq_len) in cases.items():
        ref_inv, ref_att = ROPE_INIT_FUNCTIONS[method](hf_config(params, max_pos), None, seq_len=seq_len)
        inv, att = rs.scaled_inv_freq(method, factor, seq_len=seq_len)
        torch.testing.assert_close(inv.float(), ref_inv)
        assert att == pytest.approx(ref_att)


def test_default_equals_llama_rotary_and_our_rope():
    inv, att = rs.scaled_inv_freq("default")
    rotary = LlamaRotaryEmbedding(hf_config({"rope_type": "default", "rope_theta": THETA}, L0))
    torch.testing.assert_close(inv.float(), rotary.inv_freq)
    torch.testing.assert_close(inv, rope.rope_inv_freq(D, THETA), rtol=1e-6, atol=0)
    assert att == 1.0


def test_linear_is_positions_divided_by_factor():
    inv, _ = rs.scaled_inv_freq("linear", 4.0)
    x = torch.randn(3, 5, D, dtype=torch.float64)
    positions = torch.tensor([0, 4, 40, 400, 40000])
    torch.testing.assert_close(
        rope.apply_rope_rotate_half(x, positions, inv),
        rope.apply_rope_rotate_half(x, positions / 4.0, default_inv()),
        rtol=1e-6,
        atol=1e-6,
    )


@pytest.mark.parametrize("factor", [2.0, 4.0, 16.0])
def test_yarn_attention_factor_and_ramp(factor):
    inv, att = rs.scaled_inv_freq("yarn", factor)
    assert att == pytest.approx(0.1 * math.log(factor) + 1)
    ratio = rs.interpolation_ratio(inv, default_inv())
    wl = rs.wavelengths(default_inv())
    # beta_fast = 32: pairs turning more than 32 times within L0 are untouched; beta_slow = 1: pairs turning less
    # than once are fully interpolated (transformers rounds the ramp ends to whole dimensions, hence the margin)
    np.testing.assert_allclose(ratio[L0 / wl > 40], 1.0, rtol=1e-6)
    np.testing.assert_allclose(ratio[L0 / wl < 0.7], factor, rtol=1e-6)
    assert np.all(np.diff(ratio) >= -1e-9)


def test_dynamic_is_plain_rope_within_training_context():
    for seq_len in (None, 100, L0):
        inv, _ = rs.scaled_inv_freq("dynamic", 4.0, seq_len=seq_len)
        torch.testing.assert_close(inv, default_inv(), rtol=1e-6, atol=0)
    longer, _ = rs.scaled_inv_freq("dynamic", 4.0, seq_len=4 * L0)
    assert longer[0] == pytest.approx(1.0) and longer[-1] < default_inv()[-1] / 4  # base raised


def test_llama3_bands():
    inv, att = rs.scaled_inv_freq("llama3", 8.0)
    ratio, wl = rs.interpolation_ratio(inv, default_inv()), rs.wavelengths(default_inv())
    np.testing.assert_allclose(ratio[wl < L0 / 4], 1.0, rtol=1e-6)
    np.testing.assert_allclose(ratio[wl > L0], 8.0, rtol=1e-6)
    assert att == 1.0


def test_longrope_uses_long_factors_beyond_context():
    inv_long, att = rs.scaled_inv_freq("longrope", 4.0, seq_len=2 * L0)
    inv_short, _ = rs.scaled_inv_freq("longrope", 4.0, seq_len=L0)
    factors = torch.tensor(rs.longrope_factors(4.0, D, THETA, L0), dtype=torch.float64)
    torch.testing.assert_close(inv_long, default_inv() / factors, rtol=1e-5, atol=0)
    torch.testing.assert_close(inv_short, default_inv(), rtol=1e-6, atol=0)
    assert att == pytest.approx(math.sqrt(1 + math.log(4.0) / math.log(L0)))


def test_bad_method_and_factor_rejected():
    with pytest.raises(ValueError):
        rs.rope_parameters("ntk-by-magic", 2.0)
    with pytest.raises(ValueError):
        rs.rope_parameters("linear", 0.5)
    with pytest.raises(ValueError):
        rs.rope_parameters("linear", float("nan"))


def test_qk_by_distance_equals_rotated_all_ones_and_expectation():
    inv, att = rs.scaled_inv_freq("yarn", 4.0)
    ones = torch.ones(1, D, dtype=torch.float64)
    for dist in (0, 1, 17, 9000):
        qm = rope.apply_rope_rotate_half(ones, [dist], inv, att)
        k0 = rope.apply_rope_rotate_half(ones, [0], inv, att)
        assert rs.qk_by_distance(inv, att, [dist])[0] == pytest.approx(float(qm @ k0.T) / D)
    # expectation over random content x (same at both positions): trace(R) / d
    g = torch.Generator().manual_seed(0)
    x = torch.randn(20000, D, generator=g, dtype=torch.float64)
    dist = 5
    est = (
        (
            rope.apply_rope_rotate_half(x, torch.full((20000,), dist), inv)
            * rope.apply_rope_rotate_half(x, torch.zeros(20000), inv)
        ).sum(-1)
        / D
    ).mean()
    assert float(est) == pytest.approx(rs.qk_by_distance(inv, 1.0, [dist])[0], abs=0.02)


def test_decay_envelope_bins_hold_every_distance():
    inv, att = rs.scaled_inv_freq("default")
    env = rs.qk_decay_envelope(inv, att, 131072, n_bins=500)
    assert len(env["mean"]) <= 500
    assert env["start"][0] == 0 and env["end"][-1] == 131072
    np.testing.assert_array_equal(env["start"][1:], env["end"][:-1] + 1)  # contiguous, nothing skipped
    full = rs.qk_by_distance(inv, att, np.arange(131073))
    for b in (0, 10, len(env["mean"]) // 2, len(env["mean"]) - 1):
        chunk = full[env["start"][b] : env["end"][b] + 1]
        assert env["mean"][b] == pytest.approx(chunk.mean())
        assert env["min"][b] == pytest.approx(chunk.min()) and env["max"][b] == pytest.approx(chunk.max())


def test_neighbour_angle():
    inv = default_inv()
    r = rs.neighbour_angle(inv)
    x = torch.ones(1, D, dtype=torch.float64)
    a, b = rope.apply_rope_adjacent(x, [10], inv)[0], rope.apply_rope_adjacent(x, [11], inv)[0]
    assert r["vector"] == pytest.approx(math.acos(float(a @ b / (a.norm() * b.norm()))))
    assert r["fastest_pair"] == pytest.approx(1.0)
    assert rs.neighbour_angle(rs.scaled_inv_freq("linear", 8.0)[0])["fastest_pair"] == pytest.approx(1 / 8)


def test_pair_classes_and_method_table():
    assert rs.pair_classes(np.array([1.0, 1.005, 2.0, 4.0, 4.02, 13.0]), 4.0) == {
        "kept": 2,
        "interpolated": 3,
        "between": 1,
    }
    rows = {r["method"]: r for r in rs.method_table(8.0, 8 * L0)}
    assert rows["default"]["kept"] == 32
    assert rows["linear"]["interpolated"] == 32
    for r in rows.values():
        assert r["kept"] + r["interpolated"] + r["between"] == 32
        np.testing.assert_allclose(r["wavelength"], 2 * np.pi / r["inv_freq"].numpy())


def test_resolution_by_factor():
    res = rs.resolution_by_factor([1.0, 2.0, 8.0])
    # linear divides every theta by s: every step shrinks by s
    assert res["linear"]["fastest_pair"] == pytest.approx([1.0, 0.5, 0.125])
    slow = rs.neighbour_angle(default_inv())["slowest_pair"]
    assert res["linear"]["slowest_pair"] == pytest.approx([slow, slow / 2, slow / 8])
    # YaRN keeps the fast pairs, so the finest step stays; its slowest pair is interpolated like linear's
    assert res["yarn"]["fastest_pair"] == pytest.approx([1.0, 1.0, 1.0])
    assert res["yarn"]["slowest_pair"][2] == pytest.approx(slow / 8)


def test_formula_views():
    freq = formulas.frequency_view(4.0, 4 * L0)
    assert freq.pairs.tolist() == list(range(D // 2))  # pair i = 0 .. d/2 - 1
    assert [r["method"] for r in freq.rows] == list(rs.METHODS)
    decay = formulas.decay_view(4.0, 20000)
    env = decay.envelopes["yarn"]
    inv, att = rs.scaled_inv_freq("yarn", 4.0, seq_len=20001)
    np.testing.assert_allclose(env["mean"], rs.qk_decay_envelope(inv, att, 20000, formulas.DECAY_BINS)["mean"])
    np.testing.assert_allclose(decay.centres["yarn"], (env["start"] + env["end"]) / 2 + 0.5)


def test_dynamic_ntk_is_not_static_ntk_aware():
    # static NTK-aware scaling raises the base once: base * s^(d / (d - 2)), whatever the length; transformers'
    # 'dynamic' type raises it by (s L / L0 - s + 1)^(d / (d - 2)): equal to the static one only at L = L0 (2s - 1) / s
    s, d, base = 4.0, 64, 100000.0
    static = 1.0 / (base * s ** (d / (d - 2))) ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    meets = int(L0 * (2 * s - 1) / s)  # 14,336 for L0 = 8,192
    at_meet, _ = rs.scaled_inv_freq("dynamic", s, seq_len=meets)
    torch.testing.assert_close(at_meet, static, rtol=1e-5, atol=0)
    at_l0, _ = rs.scaled_inv_freq("dynamic", s, seq_len=L0)
    assert at_l0[-1] > 1.5 * static[-1]  # within the training length dynamic NTK changes nothing, static does
