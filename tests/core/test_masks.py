"""core.masks: hand-written masks, and the properties the issue asks for (exact zeros, rows summing to 1, no
NaN for a fully masked row, additive form == boolean form)."""

import torch

from core.masks import batch_mask, causal_mask, combine_masks, lengths_to_attention_mask, padding_mask, to_additive
from core.sdpa import attention_weights, masked_softmax

T, F_ = True, False


def test_causal_mask_by_hand():
    assert torch.equal(causal_mask(3), torch.tensor([[T, F_, F_], [T, T, F_], [T, T, T]]))


def test_causal_mask_offset_when_keys_outnumber_queries():
    # 2 queries that are the last 2 of 4 positions: query 0 is position 2, query 1 position 3
    assert torch.equal(causal_mask(2, 4), torch.tensor([[T, T, T, F_], [T, T, T, T]]))
    # in general: the last n_q rows of the square mask
    for n_q, n_k in [(1, 1), (1, 6), (3, 7), (7, 7)]:
        assert torch.equal(causal_mask(n_q, n_k), causal_mask(n_k)[n_k - n_q :])


def test_lengths_to_attention_mask_by_hand():
    assert torch.equal(lengths_to_attention_mask([3, 1, 2]), torch.tensor([[1, 1, 1], [1, 0, 0], [1, 1, 0]]))
    assert lengths_to_attention_mask([2], max_len=4).tolist() == [[1, 1, 0, 0]]


def test_padding_mask_hides_keys_not_queries():
    m = padding_mask(torch.tensor([[1, 1, 0], [1, 0, 0]]))
    assert m.shape == (2, 1, 1, 3) and m.dtype == torch.bool
    assert m[:, 0, 0].tolist() == [[T, T, F_], [T, F_, F_]]


def test_combine_masks_is_logical_and_and_skips_none():
    a = torch.tensor([[T, T], [F_, T]])
    b = torch.tensor([[T, F_], [T, T]])
    assert torch.equal(combine_masks(a, None, b), torch.tensor([[T, F_], [F_, T]]))
    assert combine_masks(None, None) is None
    assert combine_masks(a) is a


def test_batch_mask_by_hand():
    am = torch.tensor([[1, 1, 1], [1, 1, 0]])
    enc = batch_mask(am, causal=False)
    dec = batch_mask(am, causal=True)
    assert enc.shape == dec.shape == (2, 1, 3, 3)
    assert enc[1, 0].tolist() == [[T, T, F_], [T, T, F_], [T, T, F_]]
    assert dec[0, 0].tolist() == [[T, F_, F_], [T, T, F_], [T, T, T]]
    assert dec[1, 0].tolist() == [[T, F_, F_], [T, T, F_], [T, T, F_]]


def test_to_additive_values():
    add = to_additive(torch.tensor([[T, F_]]))
    assert add.tolist() == [[0.0, float("-inf")]]
    assert to_additive(None) is None


def _random_case(seed=0):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(2, 3, 5, 5, generator=g) * 4
    mask = batch_mask(lengths_to_attention_mask([5, 3]), causal=True)
    return scores, mask


def test_masked_positions_get_exactly_zero_and_rows_sum_to_one():
    scores, mask = _random_case()
    w = masked_softmax(scores, mask)
    assert torch.all(w[~mask.expand_as(w)] == 0.0)  # exactly zero, not merely small
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5), atol=1e-6, rtol=0)
    assert torch.all(w[mask.expand_as(w)] > 0)


def test_additive_form_gives_the_same_weights_as_boolean_form():
    scores, mask = _random_case(1)
    via_additive = torch.softmax(scores + to_additive(mask), dim=-1)
    torch.testing.assert_close(via_additive, masked_softmax(scores, mask), atol=1e-7, rtol=0)
    # and torch's SDPA treats the two forms alike
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=g) for _ in range(3))
    torch.testing.assert_close(
        torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask),
        torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=to_additive(mask)),
        atol=1e-6,
        rtol=0,
    )


def test_fully_masked_row_is_all_zero_and_finite():
    scores = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = torch.tensor([[T, F_, T], [F_, F_, F_]])
    w = masked_softmax(scores, mask)
    assert torch.isfinite(w).all()
    assert w[1].tolist() == [0.0, 0.0, 0.0]
    e1, e3 = torch.exp(torch.tensor(1.0)), torch.exp(torch.tensor(3.0))
    torch.testing.assert_close(w[0], torch.stack([e1 / (e1 + e3), torch.tensor(0.0), e3 / (e1 + e3)]))


def test_masked_weights_follow_mask_broadcast_over_heads():
    g = torch.Generator().manual_seed(4)
    q, k = torch.randn(2, 4, 6, 8, generator=g), torch.randn(2, 4, 6, 8, generator=g)
    mask = batch_mask(lengths_to_attention_mask([6, 2]), causal=False)
    w = attention_weights(q, k, mask)
    assert w.shape == (2, 4, 6, 6)
    assert torch.all(w[1, :, :, 2:] == 0)
