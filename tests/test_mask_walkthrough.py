"""The masks page's engine: a padded batch, the three mask kinds, and the three kinds of attention."""

import numpy as np
import pytest
import torch

from core.mask_walkthrough import (
    PAD,
    embed,
    mask_of_kind,
    masked_batch_attention,
    pad_batch,
    random_attention,
    three_kinds,
)
from core.sinusoidal import sinusoidal_encoding

SENTS = [["the", "cat", "sat", "down"], ["dogs", "bark"], ["hi", "there", "!"]]


def test_pad_batch():
    b = pad_batch(SENTS)
    assert b.padded[1] == ["dogs", "bark", PAD, PAD]
    assert b.attention_mask.tolist() == [[1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 0]]
    assert b.lengths == [4, 2, 3]
    with pytest.raises(ValueError):
        pad_batch([["a"], []])


def test_mask_kinds_by_hand():
    am = torch.tensor([[1, 1, 0]])
    T, F = True, False
    assert mask_of_kind("padding", am)[0, 0].tolist() == [[T, T, F], [T, T, F], [T, T, F]]
    assert mask_of_kind("causal", am)[0, 0].tolist() == [[T, F, F], [T, T, F], [T, T, T]]
    assert mask_of_kind("both", am)[0, 0].tolist() == [[T, F, F], [T, T, F], [T, T, F]]
    with pytest.raises(ValueError):
        mask_of_kind("sideways", am)


@pytest.mark.parametrize("kind", ["padding", "causal", "both"])
def test_masked_batch_attention_properties(kind):
    r = masked_batch_attention(SENTS, kind, seed=0)
    B, H, n, _ = r.weights.shape
    assert (B, n) == (3, 4) and r.scores.shape == r.weights.shape and r.allowed.shape == (3, n, n)
    allowed = np.broadcast_to(r.allowed[:, None], r.weights.shape)
    assert np.all(r.weights[~allowed] == 0.0)  # exactly zero where masked
    np.testing.assert_allclose(r.weights.sum(-1), 1.0, atol=1e-6)  # no row is fully masked here
    assert np.isfinite(r.scores).all()  # scores before masking: every cell
    assert r.sdpa_diff < 1e-5
    # weights are the softmax of the shown scores over the allowed keys (independent numpy softmax)
    s = np.where(allowed, r.scores, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(r.weights, e / e.sum(-1, keepdims=True), atol=1e-6)


def test_embedding_is_token_vector_plus_position():
    x = embed([["a", "b", "a"]], d_model=8, seed=0)[0]
    x2 = embed([["b", "a", "c"]], d_model=8, seed=0)[0]
    pe = torch.as_tensor(sinusoidal_encoding(3, 8), dtype=torch.float32)
    # the token part of "a" is the same in both batches, whatever the position
    torch.testing.assert_close(x[0] - pe[0], x2[1] - pe[1])
    torch.testing.assert_close(x[2] - pe[2], x2[1] - pe[1])
    assert not torch.allclose(x[0], x[2])  # same word, different position -> different input
    assert not torch.allclose(x[0] - pe[0], x[1] - pe[1])


def test_random_attention_is_seeded():
    a, b, c = random_attention(seed=1), random_attention(seed=1), random_attention(seed=2)
    assert torch.equal(a.w_q.weight, b.w_q.weight) and not torch.equal(a.w_q.weight, c.w_q.weight)


def test_three_kinds_shapes_and_masks():
    enc, dec = ["le", "chat", "dort", "bien", "."], ["the", "cat", "sleeps"]
    kinds = {k.kind: k for k in three_kinds(enc, dec, seed=0)}
    H, dh = 4, 4
    e, d = kinds["encoder_self"], kinds["decoder_self"]
    c = kinds["cross"]
    assert e.shapes["Q"] == e.shapes["K"] == (1, H, 5, dh) and e.weights.shape == (H, 5, 5) and e.allowed.all()
    assert d.shapes["Q"] == d.shapes["K"] == (1, H, 3, dh) and d.weights.shape == (H, 3, 3)
    assert np.array_equal(d.allowed, np.tril(np.ones((3, 3), dtype=bool)))
    assert np.all(d.weights[:, ~d.allowed] == 0.0)
    # cross: Q from the decoder (3 rows), K and V from the encoder (5 rows)
    assert c.shapes["Q"] == (1, H, 3, dh) and c.shapes["K"] == c.shapes["V"] == (1, H, 5, dh)
    assert c.weights.shape == (H, 3, 5) and c.shapes["output"] == (1, 3, 16)
    assert c.query_tokens == dec and c.key_tokens == enc
    for k in kinds.values():
        np.testing.assert_allclose(k.weights.sum(-1), 1.0, atol=1e-6)
        assert k.sdpa_diff < 1e-5
