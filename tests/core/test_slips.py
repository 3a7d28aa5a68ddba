"""core/slips.py: the numbers of the "common slip" notes, each against an independent reference (hand-worked
products, the encoding built both ways, transformers' own Mixtral on the meta device, the committed runs)."""

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from core import slips
from core.moe import catalog
from core.positions.sinusoidal import sinusoidal_encoding

ROOT = Path(__file__).resolve().parents[2]


def test_qkt_second_row_by_hand():
    # Q row 2 = [3, 4]; K rows [4, 5], [6, 7], [8, 9]
    assert slips.qkt_second_row() == [3 * 4 + 4 * 5, 3 * 6 + 4 * 7, 3 * 8 + 4 * 9] == [32, 46, 60]
    assert tuple(slips.qkt_second_row()) != slips.WRONG_QKT_SECOND_ROW


def test_the_longest_key_wins_not_the_closest_in_direction_by_hand():
    q, keys = (3, 4), [(4, 5), (6, 7), (8, 9)]
    dots = [3 * a + 4 * b for a, b in keys]
    cosines = [d / (5 * math.hypot(a, b)) for d, (a, b) in zip(dots, keys)]
    got = slips.longest_key_wins()
    assert got.dots == dots == [32, 46, 60]
    assert got.cosines == pytest.approx(cosines, abs=1e-12)
    assert [round(c, 5) for c in got.cosines] == [0.99951, 0.99788, 0.99655]  # the audit's hand-worked figures
    assert (got.by_score, got.by_direction) == (2, 0)
    assert q == tuple(slips.CLASSIC_Q[1])


def test_sinusoidal_pair_index_against_the_encoding_built_both_ways():
    d, base, n = 64, 10000.0, 50
    pe = sinusoidal_encoding(n, d, base)
    # the paper's pairs share one frequency: every (sin, cos) pair lies on the unit circle at every position
    np.testing.assert_allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, 1.0, atol=1e-12)
    # the typo: column j at base^(-2j/d); its pairs do not (sin of one frequency, cos of another)
    p = np.arange(n)[:, None]
    j = np.arange(d)[None, :]
    typo = np.where(j % 2 == 0, np.sin(p / base ** (2 * j / d)), np.cos(p / base ** (2 * j / d)))
    assert np.abs(typo[:, 0::2] ** 2 + typo[:, 1::2] ** 2 - 1).max() > 1e-3
    s = slips.sinusoidal_exponent(d, base)
    assert s["right_beyond"] == 0.0 and s["typo_beyond"] == pytest.approx((d // 2 - 1) / d)  # j > d/2 only
    assert s["right_longest"] == pytest.approx(2 * np.pi * base ** ((d - 2) / d))
    assert s["typo_longest"] == pytest.approx(2 * np.pi * base ** (2 * (d - 1) / d))
    assert s["pair_ratio"] == pytest.approx(base ** (2 / d))


def test_mixtral_8x22b_total_is_transformers_parameter_count():
    from transformers import MixtralConfig, MixtralForCausalLM

    config = MixtralConfig(**catalog.MIXTRAL_8X22B_CONFIG)
    with torch.device("meta"):
        model = MixtralForCausalLM(config)
    counted = sum(p.numel() for p in model.parameters())
    total, active = catalog.mixtral_parameters(catalog.MIXTRAL_8X22B_CONFIG)
    assert total == counted
    assert round(total / 1e9) == 141 and round(active / 1e9) == 39  # Mistral AI's published 141B and 39B
    idle = 56 * (8 - 2) * 3 * 6144 * 16384  # six experts per layer not run for a token
    assert total - active == idle


def test_gqa_and_moe_shares():
    assert slips.gqa_ratios()["Llama-3-8B"] == "32:8 = 4:1"
    low, high = slips.moe_active_shares()
    assert low == pytest.approx(37 / 671) and high == pytest.approx(39 / 141)  # DeepSeek-V3, Mixtral 8x22B
    assert f"{low:.1%}–{high:.1%}" == "5.5%–27.7%"


def test_rope_unscaled_from_the_committed_runs_against_the_buckets():
    runs = json.loads((ROOT / "results" / "long_context.json").read_text())["runs"]
    got = slips.rope_unscaled(runs, 8192)
    plain = next(r for r in runs if r["method"] == "default")
    beyond = [loss for s, loss in zip(plain["start"], plain["mean_loss"]) if s >= 8192]
    assert got["beyond"] == pytest.approx(np.mean(beyond), rel=1e-3)
    assert got["beyond"] > got["within"] + 1.0  # more than a nat worse past the training length
    assert got["l0"] == 8192
    assert slips.rope_unscaled([], 8192) is None


def test_qkv_differ_is_zero_only_for_equal_matrices():
    x = torch.randn(1, 5, 4)
    same = SimpleNamespace(q=x, k=x.clone(), v=x.clone())
    assert slips.qkv_differ(same, 0) == {"qk": 0.0, "qv": 0.0, "kv": 0.0}
    other = SimpleNamespace(q=x, k=2 * x, v=-x)
    got = slips.qkv_differ(other, 0)
    assert got["qk"] == pytest.approx(1.0) and got["qv"] == pytest.approx(2.0) and got["kv"] == pytest.approx(1.5)


def test_qkv_differ_at_initialisation_is_about_root_two():
    """Independent random projections of one X: E|Q - K|^2 = 2 E|Q|^2, so each ratio is near sqrt(2)."""
    g = torch.Generator().manual_seed(1)
    walk = SimpleNamespace(x=torch.randn(40, 384, generator=g), q=torch.zeros(12, 40, 32))
    got = slips.qkv_differ_at_init(walk)
    assert set(got) == {"qk", "qv", "kv"}
    assert all(abs(v - math.sqrt(2)) < 0.15 for v in got.values()), got
    assert slips.qkv_differ_at_init(walk) == got  # seeded
