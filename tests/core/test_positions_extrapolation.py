"""core/positions/extrapolation.py: the task's answers by a hand loop, sinusoidal by its formula, ALiBi's slopes as
in the paper, RoPE against transformers' own apply_rotary_pos_emb, ALiBi attention against an explicit masked
softmax, learned positions failing past their table; the committed run's structure and a rerun of its first loss."""

import math

import numpy as np
import pytest
import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from core.positions.extrapolation import (
    KINDS,
    N_MARKERS,
    Attention,
    ExtrapolationConfig,
    PositionModel,
    accuracy_by_position,
    alibi_slopes,
    extrapolation_view,
    load_extrapolation,
    marker_batch,
    rope_rotate,
    sinusoidal_table,
    train,
)


def test_most_recent_marker_by_a_hand_loop():
    cfg = ExtrapolationConfig()
    tokens, targets = marker_batch(cfg, 50, 8, torch.Generator().manual_seed(0))
    for b in range(8):
        last = None
        for t in range(50):
            if 1 <= tokens[b, t] <= N_MARKERS:
                last = int(tokens[b, t])
            assert targets[b, t] == last
    assert (tokens >= 1).all() and (tokens < cfg.vocab).all() and (targets <= N_MARKERS).all()


def test_sinusoidal_formula_uses_the_pair_index():
    pe = sinusoidal_table(40, 8)
    for p in (0, 7, 39):
        for i in range(4):
            angle = p / 10000 ** (2 * i / 8)
            assert pe[p, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[p, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_alibi_slopes_are_the_papers():
    assert alibi_slopes(8).tolist() == [1 / 2**k for k in range(1, 9)]
    assert alibi_slopes(4).tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256]


def test_rope_matches_transformers_and_depends_on_distance_only():
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(1, 2, 20, 8, generator=g), torch.randn(1, 2, 20, 8, generator=g)
    theta = 10000 ** (-torch.arange(0, 8, 2).float() / 8)
    freqs = torch.arange(20).float()[:, None] * theta
    emb = torch.cat([freqs, freqs], dim=-1)[None]  # transformers' rotate_half layout
    q_ref, k_ref = apply_rotary_pos_emb(q, k, emb.cos(), emb.sin())
    torch.testing.assert_close(rope_rotate(q), q_ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(rope_rotate(k), k_ref, rtol=1e-5, atol=1e-5)
    # the same two vectors at positions (3, 1) and (15, 13): the same score
    same_q, same_k = q[:, :, :1].expand(1, 2, 20, 8), k[:, :, :1].expand(1, 2, 20, 8)
    s = rope_rotate(same_q) @ rope_rotate(same_k).transpose(-1, -2)
    torch.testing.assert_close(s[..., 3, 1], s[..., 15, 13], rtol=1e-5, atol=1e-5)


def test_alibi_attention_is_an_explicit_biased_causal_softmax():
    cfg = ExtrapolationConfig(d_model=16, n_heads=4)
    torch.manual_seed(0)
    attn = Attention(cfg, "alibi")
    x = torch.randn(2, 6, 16)
    q, k, v = attn.qkv(x).view(2, 6, 3, 4, 4).permute(2, 0, 3, 1, 4)
    slopes = [1 / 4, 1 / 16, 1 / 64, 1 / 256]
    scores = q @ k.transpose(-1, -2) / 2.0
    for h, m in enumerate(slopes):
        for i in range(6):
            for j in range(6):
                scores[:, h, i, j] = scores[:, h, i, j] - m * (i - j) if j <= i else float("-inf")
    y = torch.softmax(scores, -1) @ v
    torch.testing.assert_close(attn(x), attn.out(y.transpose(1, 2).reshape(2, 6, 16)), rtol=1e-5, atol=1e-6)


def test_learned_positions_have_no_vector_past_the_table():
    cfg = ExtrapolationConfig(train_length=8, d_model=16, n_heads=2)
    model = PositionModel(cfg, "learned")
    tokens, targets = marker_batch(cfg, 24, 4, torch.Generator().manual_seed(0))
    with pytest.raises(IndexError):
        model(tokens)
    acc = accuracy_by_position(model, tokens, targets)
    assert np.isnan(acc[8:]).all() and not np.isnan(acc[:8]).any()
    for kind in ("sinusoidal", "alibi", "rope"):  # computed at any position
        assert not np.isnan(accuracy_by_position(PositionModel(cfg, kind), tokens, targets)).any()
    # causal: the prefix run gives the same predictions as positions 0..7 of a full run (sinusoidal model)
    sin = PositionModel(cfg, "sinusoidal")
    with torch.no_grad():
        torch.testing.assert_close(sin(tokens)[:, :8], sin(tokens[:, :8]), rtol=1e-5, atol=1e-5)


COMMITTED = load_extrapolation()


@pytest.mark.skipif(COMMITTED is None, reason="results/position_extrapolation.json not committed yet")
def test_committed_run_structure_and_view():
    data = COMMITTED
    for key in ("command", "date", "loadavg_1min_before", "loadavg_1min_after", "seconds_cpu", "steps", "seeds"):
        assert key in data, key
    assert data["seconds_cpu"] <= 600 and data["command"].startswith("nice -n 5 python scripts/train_position")
    cfg = data["config"]
    assert cfg["train_length"] == 32 and cfg["test_factor"] == 4  # as the page's text says
    for run in data["runs"].values():
        for kind in KINDS:
            acc = run[kind]["accuracy_by_position"]
            assert len(acc) == 128 and all(a is None or 0 <= a <= 1 for a in acc)
            assert (run[kind]["accuracy_past"] is None) == (kind == "learned")
            inside = acc[:32]
            assert run[kind]["accuracy_inside"] == pytest.approx(float(np.mean(inside)), abs=1e-3)
    view = extrapolation_view(data)
    assert view.past["learned"] is None and view.best_past in ("sinusoidal", "alibi", "rope")
    assert np.isnan(view.accuracy["learned"][32:]).all()


@pytest.mark.skipif(COMMITTED is None, reason="results/position_extrapolation.json not committed yet")
def test_a_rerun_of_the_first_step_reproduces_the_committed_loss():
    seed = COMMITTED["seeds"][0]
    cfg = ExtrapolationConfig(**COMMITTED["config"], seed=seed)
    rerun = train(cfg, 1, eval_batch=2)
    for kind in KINDS:
        first = COMMITTED["runs"][str(seed)][kind]["loss_every_10_steps"][0]
        assert rerun[kind]["loss_every_10_steps"][0] == pytest.approx(first, rel=1e-3)
        assert first == pytest.approx(math.log(cfg.vocab), rel=0.25)  # an untrained model: near uniform
