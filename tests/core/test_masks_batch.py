"""core/masks/batch.py and core/masks/layers.py, the engine of /masks: the sentences read from the text box, a
padded batch, the three mask kinds and the masked weights; the random embeddings and layers behind them."""

import numpy as np
import pytest
import torch

from core.masks.batch import (
    EXAMPLES,
    MASK_KINDS,
    PAD,
    mask_of_kind,
    mask_steps_view,
    masked_batch_attention,
    pad_batch,
    read_sentences,
)
from core.masks.layers import embed, random_attention
from core.positions.sinusoidal import sinusoidal_encoding

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


@pytest.mark.parametrize("kind", ["padding", "causal", "both"])
def test_the_pages_sdpa_check_reads_torchs_own_sdpa(monkeypatch, kind):
    """The check the page shows (weights @ V against the layer's SDPA output) must compare with torch's call: the
    two agree to ~1e-7, so only moving torch's result can tell. Moved by 2^-10 (no row here is fully masked, so
    every output row moves), the check must report the shift; the weights shown stay as they were."""
    before = masked_batch_attention(SENTS, kind, seed=0)
    real = torch.nn.functional.scaled_dot_product_attention
    shift = 2.0**-10
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", lambda *a, **kw: real(*a, **kw) + shift)
    moved = masked_batch_attention(SENTS, kind, seed=0)
    np.testing.assert_array_equal(moved.weights, before.weights)
    assert moved.sdpa_diff == pytest.approx(shift, abs=1e-5)


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


def test_padded_batch_real_tokens():
    assert pad_batch(SENTS).real.tolist() == [[True] * 4, [True, True, False, False], [True, True, True, False]]


def test_read_sentences_rules():
    r = read_sentences("a b\nc\nd e f\ng\nh", max_sentences=4)
    assert r.too_many and not r.fell_back and r.token_lists == [["a", "b"], ["c"], ["d", "e", "f"], ["g"]]
    r = read_sentences("only one line")
    assert r.fell_back and not r.empty and len(r.token_lists) == len(EXAMPLES)
    r = read_sentences("\n  \n")
    assert r.fell_back and r.empty and not r.too_many
    r = read_sentences("word " * 40 + "\nshort", max_tokens=12)
    assert r.cut == [(0, 40)] and len(r.token_lists[0]) == 12
    r = read_sentences("<script>alert(1)</script>\n猫 😴 고양이")
    assert r.token_lists[0][:3] == ["<", "script", ">"] and "😴" in r.token_lists[1]


@pytest.mark.parametrize("kind", MASK_KINDS)
def test_mask_steps_view_is_one_sentence_and_head_of_the_batch(kind):
    full = masked_batch_attention(SENTS, kind, seed=0)
    v = mask_steps_view(SENTS, sentence=1, head=2, kind=kind, seed=0)
    assert v.tokens == ["dogs", "bark", PAD, PAD] and v.n_real == 2 and (v.n_sentences, v.n_heads) == (3, 4)
    assert v.has_padding and not mask_steps_view(SENTS, sentence=0, head=2, kind=kind, seed=0).has_padding
    np.testing.assert_array_equal(v.weights, full.weights[1, 2])
    np.testing.assert_array_equal(v.scores, full.scores[1, 2])
    np.testing.assert_array_equal(v.allowed, full.allowed[1])
    assert set(v.masks) == set(MASK_KINDS)
    for k in MASK_KINDS:
        np.testing.assert_array_equal(v.masks[k], mask_of_kind(k, pad_batch(SENTS).attention_mask)[1, 0].numpy())
    np.testing.assert_array_equal(v.masks[kind], v.allowed)
    assert v.masked_max == 0.0  # exactly: masked cells are set to 0, not merely small
    assert abs(v.row_sum_min - 1) < 1e-6 and abs(v.row_sum_max - 1) < 1e-6 and v.sdpa_diff < 1e-5


def test_padding_to_a_fixed_maximum_changes_the_cost_not_the_real_weights():
    from core.masks import batch as mb

    lists = [["the", "cat", "sat"], ["dogs", "bark"], ["it", "was", "tired", "because", "it", "ran"]]
    padded = mb.pad_batch(lists, 41)
    assert [len(p) for p in padded.padded] == [41, 41, 41] and padded.attention_mask.sum().item() == 11
    assert mb.pad_batch(lists, 3).real.shape[1] == 6  # never shorter than the longest
    c = mb.padding_comparison(lists, 41)
    heads = mb.N_HEADS
    assert (c.longest.length, c.longest.padding, c.longest.positions) == (6, 3 * 6 - 11, 18)
    assert (c.fixed.length, c.fixed.padding, c.fixed.positions) == (41, 3 * 41 - 11, 123)
    assert c.fixed.scores == 3 * heads * 41 * 41 and c.longest.scores == 3 * heads * 36
    assert c.fixed.real_scores == c.longest.real_scores == heads * (9 + 4 + 36)
    assert c.score_ratio == pytest.approx(41 * 41 / 36)  # B H n^2 over B H n^2: (41 / 6)^2, about 46.7 times
    # the real tokens' attention is the same however much padding the mask hides (float32 rounding)
    assert c.real_weights_diff < 1e-5
    # ... and the difference the page quotes compares the two paddings: with the fixed-length batch run through
    # another random layer (seed 41), the real tokens' weights differ, and the difference must be theirs
    real = mb.masked_batch_attention
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            mb,
            "masked_batch_attention",
            lambda t, kind, seed=0, length=None: real(t, kind, seed=length or seed, length=length),
        )
        other = mb.padding_comparison(lists, 41)
    longest, fixed = real(lists, "padding").weights, real(lists, "padding", seed=41, length=41).weights
    expected = max(float(np.abs(longest[i, :, :n, :n] - fixed[i, :, :n, :n]).max()) for i, n in enumerate((3, 2, 6)))
    assert expected > 0.05 and other.real_weights_diff == pytest.approx(expected)
