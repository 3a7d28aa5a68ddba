"""Linear attention: every form against an independent reference (explicitly normalised kernel weights written
out here with plain loops / einsum), the RNN form against the causal parallel form, and the generation loops
against one parallel pass."""

import pytest
import torch
import torch.nn.functional as F

from core.linear_attention import (
    EPS,
    LinearAttentionState,
    associativity_costs,
    causal_linear_attention,
    decoding,
    elu_feature_map,
    implied_linear_weights,
    linear_attention,
    linear_attention_rnn,
    linear_attention_step,
    prefill_state,
)

torch.manual_seed(0)


def qkv(b=2, h=3, n=37, d=8, d_v=5, dtype=torch.float64):
    g = torch.Generator().manual_seed(n * 131 + d)
    return (
        torch.randn(b, h, n, d, generator=g, dtype=dtype),
        torch.randn(b, h, n, d, generator=g, dtype=dtype),
        torch.randn(b, h, n, d_v, generator=g, dtype=dtype),
    )


def explicit_weights(q, k, causal):
    """Reference written independently of core: phi = elu + 1 by its definition, the n x n kernel matrix entry by
    entry, each row divided by its own sum."""

    def phi(x):
        return F.elu(x.double()) + 1.0  # the paper's definition, in float64 where it loses nothing here

    n_q, n_k = q.shape[-2], k.shape[-2]
    kernel = torch.einsum("bhid,bhjd->bhij", phi(q), phi(k))
    out = torch.zeros_like(kernel)
    for i in range(n_q):
        last = i + 1 if causal else n_k
        out[..., i, :last] = kernel[..., i, :last] / kernel[..., i, :last].sum(-1, keepdim=True)
    return out


def test_feature_map_is_elu_plus_one_and_stays_positive_in_float32():
    x = torch.linspace(-10, 10, 201, dtype=torch.float64)
    torch.testing.assert_close(elu_feature_map(x), F.elu(x) + 1.0, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(
        elu_feature_map(torch.tensor([-1.0, 0.0, 0.5, 3.0])), torch.tensor([0.36787944, 1.0, 1.5, 4.0])
    )
    far = torch.tensor([-30.0, -80.0])  # F.elu(x) + 1 is exactly 0 here in float32
    assert (F.elu(far) + 1.0 == 0).all()
    torch.testing.assert_close(elu_feature_map(far), torch.exp(far))
    assert (elu_feature_map(far) > 0).all()


def test_kernel_form_equals_explicitly_normalised_weights():
    q, k, v = qkv()
    torch.testing.assert_close(
        linear_attention(q, k, v, eps=0.0), explicit_weights(q, k, False) @ v, rtol=1e-9, atol=1e-9
    )
    # the default eps (underflow guard) moves the result by about eps / denominator only
    torch.testing.assert_close(linear_attention(q, k, v), explicit_weights(q, k, False) @ v, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("chunk", [1, 5, 16, 64])
def test_causal_prefix_sums_equal_explicit_causal_weights(chunk):
    q, k, v = qkv(n=37)  # 37: not a multiple of any chunk size tried
    torch.testing.assert_close(
        causal_linear_attention(q, k, v, chunk=chunk, eps=0.0), explicit_weights(q, k, True) @ v, rtol=1e-9, atol=1e-9
    )


def test_rnn_form_equals_causal_parallel_form():
    q, k, v = qkv(n=29)
    torch.testing.assert_close(
        linear_attention_rnn(q, k, v), causal_linear_attention(q, k, v, chunk=8), rtol=1e-9, atol=1e-9
    )


def test_rnn_state_has_fixed_size_and_step_does_not_mutate():
    q, k, v = qkv(b=1, h=2, n=10, d=4, d_v=3)
    state = LinearAttentionState.empty((1, 2), 4, 3, dtype=torch.float64)
    sizes = []
    for t in range(10):
        before = state.s.clone()
        _, new = linear_attention_step(state, q[..., t, :], k[..., t, :], v[..., t, :])
        torch.testing.assert_close(state.s, before)
        state = new
        sizes.append(state.numel())
    assert set(sizes) == {2 * (4 * 3 + 4)}


def test_prefill_then_steps_equals_one_pass():
    q, k, v = qkv(n=20)
    state = prefill_state(k[..., :12, :], v[..., :12, :])
    rest = linear_attention_rnn(q[..., 12:, :], k[..., 12:, :], v[..., 12:, :], state=state)
    torch.testing.assert_close(rest, causal_linear_attention(q, k, v)[..., 12:, :], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("causal", [False, True])
def test_implied_weights_rows_sum_to_one_and_reproduce_output(causal):
    q, k, v = qkv(n=16)
    w = implied_linear_weights(q, k, causal=causal, eps=0.0)
    torch.testing.assert_close(w, explicit_weights(q, k, causal), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(w.sum(-1), torch.ones_like(w.sum(-1)))
    expected = causal_linear_attention(q, k, v, eps=0.0) if causal else linear_attention(q, k, v, eps=0.0)
    torch.testing.assert_close(w @ v, expected, rtol=1e-9, atol=1e-9)
    assert (w[..., 0, 1:] == 0).all() if causal else (w > 0).all()


def test_associativity_costs_hand_worked():
    # n = 1000, d = d_v = 64: quadratic = 1000*1000*64 * 2 + 1000*1000 = 129,000,000;
    # linear = 2 * 1000 * 64 * 64 + 2 * 1000 * 64 = 8,320,000
    c = associativity_costs(1000, 64)
    assert c["quadratic"]["multiply_adds"] == 129_000_000
    assert c["linear"]["multiply_adds"] == 8_320_000
    assert c["quadratic"]["intermediate_shape"] == (1000, 1000) and c["linear"]["intermediate_shape"] == (64, 64)


def test_float32_long_sequence_stays_close_to_float64():
    q, k, v = qkv(b=1, h=1, n=2048, d=16, d_v=16)
    ref = causal_linear_attention(q, k, v)
    got = causal_linear_attention(q.float(), k.float(), v.float(), chunk=128)
    torch.testing.assert_close(got.double(), ref, rtol=1e-4, atol=1e-5)
    assert EPS < 1e-3


# --- generation loops ---------------------------------------------------------------------------------------


def _layer():
    return decoding.ToyAttentionLayer.random(d_model=32, n_heads=4, seed=1, dtype=torch.float64)


def test_kv_cache_decoding_equals_decoding_without_cache():
    layer = _layer()
    prompt = torch.randn(9, 32, dtype=torch.float64)
    cached = decoding.prefill(layer, prompt, "kv_cache", 9 + 6)
    plain = decoding.prefill(layer, prompt, "no_cache", 9 + 6)
    out_c, _ = decoding.decode(layer, cached, 6)
    out_p, _ = decoding.decode(layer, plain, 6)
    torch.testing.assert_close(out_c, out_p, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(cached.inputs, plain.inputs)  # the same autoregressive inputs were fed


def test_rnn_decoding_equals_parallel_causal_linear_attention():
    layer = _layer()
    prompt = torch.randn(7, 32, dtype=torch.float64)
    start = decoding.prefill(layer, prompt, "rnn", 7 + 5)
    outs, _ = decoding.decode(layer, start, 5)
    parallel = layer.forward(start.inputs, "linear")  # every position at once, on the same inputs
    torch.testing.assert_close(outs, parallel[7:], rtol=1e-10, atol=1e-10)
    again, _ = decoding.decode(layer, start, 5)  # start is reusable: timing reps decode it again
    torch.testing.assert_close(again, outs)


def test_tokens_per_second_reports_what_it_timed():
    layer = decoding.ToyAttentionLayer.random(d_model=64, n_heads=2)
    for mode in decoding.MODES:
        r = decoding.tokens_per_second(layer, 32, mode, steps=3)
        assert r["steps"] == 3 and r["tokens_per_s"] > 0 and r["context"] == 32
    with pytest.raises(ValueError):
        decoding.prefill(layer, torch.zeros(4, 64), "bogus", 8)
