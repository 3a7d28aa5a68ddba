"""core.sdpa against independent references: a numpy softmax written out here, and torch's own
F.scaled_dot_product_attention called directly (never through core.sdpa.sdpa)."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.masks import causal_mask, lengths_to_attention_mask, padding_mask
from core.sdpa import (
    MultiHeadAttention,
    attention_scores,
    attention_weights,
    broadcast_shape,
    entropy,
    masked_softmax,
    repeat_kv,
    sdpa,
)

ATOL = 1e-5  # the fp32 tolerance


def numpy_attention_weights(q, k, allowed=None):
    """softmax(q k^T / sqrt(d) + mask) in float64 numpy, masked entries exactly 0."""
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def torch_reference_output(mha, x, context=None, allowed=None):
    """The attention output (before w_o) from torch's SDPA with enable_gqa, mask broadcast to (B, H, n_q, n_k)."""
    with torch.no_grad():
        q, k, v = mha.project(x, context)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, enable_gqa=mha.n_kv_heads != mha.n_heads)


def weights_times_v(mha, x, context=None, mask=None, is_causal=False):
    with torch.no_grad():
        _, _, v = mha.project(x, context)
        w = mha.weights(x, context, mask=mask, is_causal=is_causal)
        return w @ repeat_kv(v, mha.n_heads // mha.n_kv_heads)


def make(d_model=24, n_heads=6, n_kv_heads=None, d_context=None, seed=0):
    torch.manual_seed(seed)
    return MultiHeadAttention(d_model, n_heads, n_kv_heads, d_context).eval()


# --- the formula itself ----------------------------------------------------------------------------------------


def test_attention_weights_match_numpy_softmax():
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 3, 5, 8, generator=g), torch.randn(2, 3, 7, 8, generator=g)
    allowed = torch.rand(2, 3, 5, 7, generator=g) > 0.3
    allowed[..., 0] = True  # every row keeps a key
    np.testing.assert_allclose(attention_weights(q, k).numpy(), numpy_attention_weights(q, k), atol=1e-6)
    np.testing.assert_allclose(
        attention_weights(q, k, allowed).numpy(), numpy_attention_weights(q, k, allowed.numpy()), atol=1e-6
    )


def test_scores_are_scaled_dot_products():
    q = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    k = torch.tensor([[4.0, 5.0], [6.0, 7.0], [8.0, 9.0]])
    hand = torch.tensor([[14.0, 20.0, 26.0], [32.0, 46.0, 60.0]])  # 1*4 + 2*5 = 14, ..., 3*8 + 4*9 = 60
    torch.testing.assert_close(attention_scores(q, k, scale=1.0), hand)
    torch.testing.assert_close(attention_scores(q, k), hand / math.sqrt(2))


def test_entropy_of_uniform_and_one_hot_rows():
    uniform = torch.full((5,), 0.2)
    one_hot = torch.tensor([0.0, 1.0, 0.0])
    assert entropy(uniform).item() == pytest.approx(math.log(5), abs=1e-6)
    assert entropy(one_hot).item() == pytest.approx(0.0, abs=1e-12)


# --- weights @ V equals SDPA's output: the five cases of the issue (+ MQA and combinations) ----------------------


def test_self_attention_weights_times_v_equals_sdpa():
    mha = make()
    x = torch.randn(2, 7, 24)
    torch.testing.assert_close(weights_times_v(mha, x), torch_reference_output(mha, x), atol=ATOL, rtol=0)


def test_causal_weights_times_v_equals_sdpa():
    mha = make()
    x = torch.randn(2, 7, 24)
    ref = torch_reference_output(mha, x, allowed=torch.tril(torch.ones(7, 7, dtype=torch.bool)))
    torch.testing.assert_close(weights_times_v(mha, x, is_causal=True), ref, atol=ATOL, rtol=0)
    # and torch's own is_causal flag agrees (n_q == n_k, so top-left alignment is the same thing)
    with torch.no_grad():
        q, k, v = mha.project(x)
        torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, is_causal=True), ref, atol=ATOL, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
def test_padded_batch_weights_times_v_equals_sdpa(causal):
    mha = make()
    lengths = [7, 4, 1]
    x = torch.randn(3, 7, 24)
    am = lengths_to_attention_mask(lengths)
    mask = padding_mask(am)
    # reference mask built independently: key j visible iff j < length (and j <= i when causal)
    i, j = torch.arange(7)[:, None], torch.arange(7)[None, :]
    allowed = torch.stack([(j < n) & ((j <= i) if causal else True) for n in lengths])[:, None]
    got = weights_times_v(mha, x, mask=mask, is_causal=causal)
    torch.testing.assert_close(got, torch_reference_output(mha, x, allowed=allowed), atol=ATOL, rtol=0)
    # the layer's own output (core.sdpa inside forward) is made of exactly these weights
    with torch.no_grad():
        y = mha(x, mask=mask, is_causal=causal)
        y_from_weights = mha.w_o(got.transpose(1, 2).reshape(3, 7, 24))
    torch.testing.assert_close(y, y_from_weights, atol=ATOL, rtol=0)


def test_padded_keys_get_exactly_zero_weight():
    mha = make()
    x = torch.randn(2, 6, 24)
    mask = padding_mask(lengths_to_attention_mask([6, 2]))
    w = mha.weights(x, mask=mask)
    assert torch.all(w[1, :, :, 2:] == 0.0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 6, 6), atol=1e-6, rtol=0)


def test_cross_attention_weights_times_v_equals_sdpa():
    mha = make(d_context=10)
    x, context = torch.randn(2, 5, 24), torch.randn(2, 9, 10)  # 5 decoder queries, 9 encoder keys/values
    got = weights_times_v(mha, x, context)
    assert got.shape == (2, 6, 5, 4)
    assert mha.weights(x, context).shape == (2, 6, 5, 9)
    torch.testing.assert_close(got, torch_reference_output(mha, x, context), atol=ATOL, rtol=0)


def test_cross_attention_with_padded_encoder():
    mha = make()
    x, context = torch.randn(2, 4, 24), torch.randn(2, 6, 24)
    mask = padding_mask(lengths_to_attention_mask([6, 3]))
    allowed = (torch.arange(6)[None, :] < torch.tensor([6, 3])[:, None])[:, None, None, :]
    torch.testing.assert_close(
        weights_times_v(mha, x, context, mask=mask),
        torch_reference_output(mha, x, context, allowed=allowed),
        atol=ATOL,
        rtol=0,
    )


@pytest.mark.parametrize("n_kv_heads", [3, 2, 1])  # GQA with groups of 2 and 3, then MQA
def test_gqa_weights_times_v_equals_sdpa(n_kv_heads):
    mha = make(n_kv_heads=n_kv_heads)
    x = torch.randn(2, 7, 24)
    assert mha.w_k.out_features == n_kv_heads * 4
    allowed = torch.tril(torch.ones(7, 7, dtype=torch.bool))
    torch.testing.assert_close(
        weights_times_v(mha, x, is_causal=True), torch_reference_output(mha, x, allowed=allowed), atol=ATOL, rtol=0
    )


def test_gqa_heads_in_a_group_share_keys():
    """Query head h reads key/value head h // (n_heads / n_kv_heads), as in Llama's repeat_kv."""
    mha = make(n_kv_heads=2)
    x = torch.randn(1, 5, 24)
    with torch.no_grad():
        q, k, _ = mha.project(x)
    w = mha.weights(x)
    for h in range(6):
        np.testing.assert_allclose(w[0, h].numpy(), numpy_attention_weights(q[0, h], k[0, h // 3]), atol=1e-6)


def test_weights_for_selected_heads_and_rows_are_slices_of_all():
    mha = make(n_kv_heads=3)
    x = torch.randn(2, 8, 24)
    mask = padding_mask(lengths_to_attention_mask([8, 5]))
    full = mha.weights(x, mask=mask, is_causal=True)
    part = mha.weights(x, mask=mask, is_causal=True, heads=[5, 1], rows=[0, 6, 7])
    torch.testing.assert_close(part, full[:, [5, 1]][:, :, [0, 6, 7]], atol=0, rtol=0)


def test_causal_with_more_keys_than_queries_matches_full_sequence():
    """Decoding with a KV cache: the last 3 queries against all 8 keys give the last 3 rows of the full run."""
    mha = make()
    x = torch.randn(1, 8, 24)
    full = weights_times_v(mha, x, is_causal=True)
    with torch.no_grad():
        q, k, v = mha.project(x)
        last = sdpa(q[:, :, -3:], k, v, causal_mask(3, 8))
        w_last = attention_weights(q[:, :, -3:], k, causal_mask(3, 8))
    torch.testing.assert_close(last, full[:, :, -3:], atol=ATOL, rtol=0)
    torch.testing.assert_close(w_last @ v, full[:, :, -3:], atol=ATOL, rtol=0)


def test_fully_masked_row_gives_zeros_not_nan():
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 2, 4, 8, generator=g) for _ in range(3))
    allowed = torch.ones(4, 4, dtype=torch.bool)
    allowed[2] = False
    w = attention_weights(q, k, allowed)
    out = sdpa(q, k, v, allowed)
    assert not torch.isnan(w).any() and not torch.isnan(out).any()
    assert torch.all(w[:, :, 2] == 0) and torch.all(out[:, :, 2] == 0)
    # the other rows are untouched: they equal torch's SDPA on those rows alone
    rows = [0, 1, 3]
    ref = F.scaled_dot_product_attention(q[:, :, rows], k, v, attn_mask=allowed[rows])
    torch.testing.assert_close(out[:, :, rows], ref, atol=ATOL, rtol=0)


def test_masked_softmax_gradient_has_no_nan():
    scores = torch.randn(3, 4, requires_grad=True)
    allowed = torch.tensor([[1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 1]], dtype=torch.bool)
    (masked_softmax(scores, allowed) * torch.randn(3, 4)).sum().backward()
    assert not torch.isnan(scores.grad).any()


def test_bad_head_configuration_is_refused():
    with pytest.raises(ValueError):
        MultiHeadAttention(24, 5)
    with pytest.raises(ValueError):
        MultiHeadAttention(24, 6, n_kv_heads=4)


@pytest.mark.parametrize(
    "shapes",
    [((2, 4, 5, 7),), ((2, 4, 5, 7), (5, 7)), ((1, 4, 5, 7), (3, 1, 1, 1, 7)), ((4, 5, 7), (2, 1, 5, 1), (4, 1, 1))],
)
def test_broadcast_shape_is_torchs(shapes):
    assert tuple(broadcast_shape(*shapes)) == tuple(torch.broadcast_shapes(*shapes))


def test_shapes_that_do_not_broadcast_raise_torchs_error():
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes((2, 4, 5, 7), (3, 5, 7))
    with pytest.raises(RuntimeError):
        broadcast_shape((2, 4, 5, 7), (3, 5, 7))
