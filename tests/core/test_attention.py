"""/attention: its view data (core/attention.py) checked against plain loops over Trace.attention, the pooling
reference (tests/references.py) and hand-worked examples. Its figures: tests/viz/test_attention_figures.py and
test_grid.py; the page: tests/pages/test_attention_page.py."""

import math

import numpy as np
import pytest
import torch

from core import attention
from core.models.base import Trace
from core.sdpa import attention_weights, repeat_kv
from tests.fake_traces import fake_trace
from tests.references import numpy_rollout, pool_matrix


@pytest.fixture(params=[False, True], ids=["encoder", "decoder"])
def trace(request):
    return fake_trace(causal=request.param)


def tokens_of(trace, index=0, hide=False) -> attention.Tokens:
    return attention.select_tokens(trace, index, hide)


# --- exact weights ---------------------------------------------------------------------------------------------------


def test_layer_attention_equals_repeat_kv_sdpa_per_head(trace):
    """Trace.layer_attention (kv head by index) against the transformers way (repeat_kv, then softmax)."""
    for index in range(2):
        for layer in range(trace.n_layers):
            q = trace.queries[layer][index]  # (H, n, d)
            k = repeat_kv(trace.keys[layer][index][None], trace.n_heads // trace.n_kv_heads)[0]
            ref = attention_weights(q, k, trace.mask(index)[None], trace.scale)
            got = trace.layer_attention(layer, index)
            torch.testing.assert_close(got, ref)
            for h in range(trace.n_heads):
                torch.testing.assert_close(got[h], trace.attention(layer, h, index))
            rows = torch.tensor([1, 3])
            torch.testing.assert_close(trace.layer_attention(layer, index, rows=rows)[2], ref[2][rows])


def test_query_weights_are_one_row_of_every_head(trace):
    n = trace.length(1)
    got = attention.shown(attention.query_weights(trace, 3, index=1), tokens_of(trace, 1), rows=False)
    assert got.shape == (trace.n_layers, trace.n_heads, n)
    for layer in range(trace.n_layers):
        for h in range(trace.n_heads):
            torch.testing.assert_close(got[layer, h], trace.attention(layer, h, 1)[3, :n])


# --- hiding special tokens: rows and columns dropped, rows renormalised --------------------------------------------


def test_hiding_specials_drops_them_and_renormalises_by_hand(trace):
    tokens = tokens_of(trace, 0, hide=True)
    assert tokens.positions.tolist() == [1, 2, 3, 4, 5]  # 0 and the last real token (6) are special
    assert tokens.labels == ["1 t1", "2 t2", "3 t3", "4 t4", "5 t5"]
    w = attention.head_weights(trace, tokens, 1, 2)
    full = trace.attention(1, 2, 0)
    for a, i in enumerate(tokens.positions.tolist()):
        kept = full[i, tokens.positions]
        torch.testing.assert_close(w[a], kept / kept.sum())
    torch.testing.assert_close(w.sum(-1), torch.ones(tokens.m))
    assert torch.equal(tokens.allowed, trace.mask(0)[tokens.positions][:, tokens.positions])


def test_hide_special_by_hand():
    """Weights [[0.5, 0.25, 0.25], [0.2, 0, 0.8], [1, 0, 0]] with token 0 special: its row and column go, the
    other rows are divided by what they kept; a row that kept nothing stays 0 (formerly Trace.hide_special_keys,
    which kept the special row as zeros: hidden now means not on screen)."""
    w = torch.tensor([[0.5, 0.25, 0.25], [0.2, 0.0, 0.8], [1.0, 0.0, 0.0]])
    tokens = attention.Tokens(
        0, torch.tensor([1, 2]), ["1 a", "2 b"], torch.ones(2, 2, dtype=torch.bool), True, True, ()
    )
    torch.testing.assert_close(attention.shown(w, tokens), torch.tensor([[0.0, 1.0], [0.0, 0.0]]))


def test_layer_weights_with_hidden_specials(trace):
    """Formerly Trace.layer_attention(hide_special=True), which zeroed special columns and kept every row: now
    the special rows are gone too, and every shown row sums to 1 (a decoder's first shown row included)."""
    tokens = tokens_of(trace, 0, hide=True)
    w = attention.shown(trace.layer_attention(1, 0), tokens)
    special = trace.batch.special[0]
    keep = ~special[: trace.length(0)]
    full = trace.layer_attention(1, 0)[:, : trace.length(0), : trace.length(0)]
    kept = full[:, keep][:, :, keep]
    torch.testing.assert_close(w, kept / kept.sum(-1, keepdim=True))
    torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:2]))


def test_a_text_of_only_special_tokens_shows_them_anyway():
    t = fake_trace(lengths=(2,), special_at=(0,))
    tokens = tokens_of(t, 0, hide=True)
    assert tokens.m == 2 and tokens.has_special
    torch.testing.assert_close(attention.head_weights(t, tokens, 0, 0).sum(-1), torch.ones(2))


# --- aggregates --------------------------------------------------------------------------------------------------------


def test_mean_over_heads_is_the_plain_average(trace):
    n = trace.length(1)
    ref = sum(trace.attention(2, h, 1)[:n, :n] for h in range(trace.n_heads)) / trace.n_heads
    torch.testing.assert_close(attention.mean_over_heads(trace, tokens_of(trace, 1), 2), ref)


def test_rollout_matches_a_numpy_loop_and_stays_row_stochastic(trace):
    for index in range(2):
        tokens = tokens_of(trace, index)
        for last in range(trace.n_layers):
            got = attention.rollout(trace, tokens, last)
            np.testing.assert_allclose(got.numpy(), numpy_rollout(trace, index, last), atol=1e-5)
            torch.testing.assert_close(got.sum(-1), torch.ones(len(got)))
    if trace.is_causal:  # information cannot flow backwards in a decoder
        assert float(attention.rollout(trace, tokens_of(trace)).triu(1).abs().max()) == 0.0


def test_rollout_of_one_layer_hand_worked():
    """Two tokens, one layer, one head whose weights are [[1, 0], [0.5, 0.5]]:
    0.5 A + 0.5 I = [[1, 0], [0.25, 0.75]] (rows already sum to 1)."""
    t = fake_trace(lengths=(2,), n_layers=1, n_heads=1, n_kv_heads=1, d=1, causal=True, special_at=())
    t.queries[0].zero_()  # equal scores: row 1 splits 0.5 / 0.5; row 0 sees only itself
    torch.testing.assert_close(attention.rollout(t, tokens_of(t)), torch.tensor([[1.0, 0.0], [0.25, 0.75]]))


def test_rollout_multiplies_later_layers_on_the_left():
    """Two layers with different matrices: R = A1 @ A0, not A0 @ A1 (the note on the page says so)."""
    t = fake_trace(lengths=(3,), n_layers=2, n_heads=1, n_kv_heads=1, d=2, causal=True, special_at=(), seed=3)
    a = []
    for layer in range(2):
        w = t.attention(layer, 0).double()
        m = 0.5 * w + 0.5 * torch.eye(3, dtype=torch.float64)
        a.append(m / m.sum(-1, keepdim=True))
    got = attention.rollout(t, tokens_of(t)).double()
    torch.testing.assert_close(got, a[1] @ a[0], atol=1e-6, rtol=0)
    assert not torch.allclose(a[1] @ a[0], a[0] @ a[1], atol=1e-4)  # the order matters for these matrices


def test_rollout_with_hidden_specials_drops_them_after_the_product(trace):
    """Formerly Trace.rollout(hide_special=True) zeroed special columns and kept their rows; now the product runs
    over every real token (information flows through specials) and the special rows and columns are dropped
    afterwards, the rest renormalised."""
    full, hidden = attention.rollout(trace, tokens_of(trace)), attention.rollout(trace, tokens_of(trace, 0, True))
    keep = ~trace.batch.special[0, : trace.length(0)]
    kept = full[keep][:, keep]
    torch.testing.assert_close(hidden, kept / kept.sum(-1, keepdim=True))


def test_head_entropy_by_hand(trace):
    n = trace.length(0)
    got = attention.head_entropy(trace, tokens_of(trace))
    for layer in range(trace.n_layers):
        for h in range(trace.n_heads):
            w = trace.attention(layer, h, 0)[:n, :n].double()
            rows = [-sum(float(p) * math.log(float(p)) for p in row if p > 0) for row in w]
            assert got[layer, h].item() == pytest.approx(sum(rows) / n, abs=1e-5)
    # the reference: log of the number of keys each query may see
    allowed = trace.mask(0)[:n, :n].sum(-1).double()
    assert attention.uniform_entropy(tokens_of(trace)) == pytest.approx(float(torch.log(allowed).mean()))


def test_head_entropy_matches_a_loop_over_rows(trace):
    """With specials hidden: mean over the non-special rows of the entropy of each row over the non-special keys,
    renormalised (the same numbers as the former Trace.head_entropy: a zeroed column adds 0 to an entropy)."""
    for hide in (False, True):
        got = attention.head_entropy(trace, tokens_of(trace, 1, hide))
        m = trace.length(1)
        keep = [i for i in range(m) if not (hide and trace.batch.special[1, i])]
        for layer in range(trace.n_layers):
            for head in range(trace.n_heads):
                w = trace.attention(layer, head, 1)[:m, :m].double().numpy()[np.ix_(keep, keep)]
                w = w / w.sum(1, keepdims=True)
                ref = np.mean([-sum(p * math.log(p) for p in row if p > 0) for row in w])
                assert got[layer, head].item() == pytest.approx(ref, abs=1e-5)


def test_head_entropy_of_uniform_attention_is_log_of_the_keys_seen(trace):
    """q = 0 makes every score equal: each row spreads evenly over what it may see, so its entropy is
    log(m) in an encoder and log(i + 1) for query i in a decoder."""
    flat = Trace(trace.batch, [torch.zeros_like(q) for q in trace.queries], trace.keys, trace.scale, trace.is_causal)
    m = flat.length(0)
    seen = np.arange(1, m + 1) if flat.is_causal else np.full(m, m)
    torch.testing.assert_close(
        attention.head_entropy(flat, tokens_of(flat)),
        torch.full((flat.n_layers, flat.n_heads), float(np.log(seen).mean())),
    )
    peaked = Trace(trace.batch, trace.queries, [k * 1e4 for k in trace.keys], trace.scale, trace.is_causal)
    assert float(attention.head_entropy(peaked, tokens_of(peaked)).max()) < 0.05  # near one-hot rows


def test_entropy_view_names_the_extremes(trace):
    view = attention.entropy_view(trace, tokens_of(trace))
    e = attention.head_entropy(trace, tokens_of(trace)).numpy()
    l0, h0, e0 = view.focused
    l1, h1, e1 = view.spread
    assert e0 == pytest.approx(e.min()) and e[l0, h0] == e.min()
    assert e1 == pytest.approx(e.max()) and e[l1, h1] == e.max()


# --- thumbnails: block means, masked cells left out -------------------------------------------------------------------


def test_thumbnails_are_block_means_of_the_visible_cells(trace):
    for hide in (False, True):
        tokens = tokens_of(trace, 0, hide)
        thumbs = attention.thumbnails(trace, tokens, 4)
        assert thumbs.shape == (trace.n_layers, trace.n_heads, 4, 4)
        for layer in range(trace.n_layers):
            for h in range(trace.n_heads):
                w = attention.head_weights(trace, tokens, layer, h)
                ref, _, _ = pool_matrix(torch.where(tokens.allowed, w, float("nan")), 4)
                np.testing.assert_allclose(thumbs[layer, h].numpy(), ref, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("hide", [False, True])
def test_thumbnails_equal_the_loop_at_every_size(trace, hide):
    """Formerly Trace.pooled_attention, which counted masked cells as 0: the reference now marks them NaN (left
    out of the mean) and drops hidden special rows."""
    for index in range(2):
        tokens = tokens_of(trace, index, hide)
        for size in (3, 4, 50):
            got = attention.thumbnails(trace, tokens, size)
            s = min(size, tokens.m)
            assert got.shape == (trace.n_layers, trace.n_heads, s, s)
            for layer in range(trace.n_layers):
                for head in range(trace.n_heads):
                    full = attention.head_weights(trace, tokens, layer, head)
                    ref, _, _ = pool_matrix(full.masked_fill(~tokens.allowed, float("nan")), size)
                    np.testing.assert_allclose(got[layer, head].numpy(), ref, atol=1e-6, equal_nan=True)


def test_thumbnails_of_short_texts_are_the_exact_weights():
    t = fake_trace(lengths=(5,))
    thumbs = attention.thumbnails(t, tokens_of(t), 24)
    torch.testing.assert_close(thumbs[1, 3], t.attention(1, 3, 0))


# --- the default query ---------------------------------------------------------------------------------------------


def test_default_query_is_the_first_pronoun_else_the_middle():
    toks = [["[CLS]", "the", "cat", "sat", "because", "it", "was", "[SEP]"]]
    t = fake_trace(lengths=(8,), tokens=toks)
    assert attention.default_query(t, tokens_of(t)) == 5
    t = fake_trace(lengths=(5,))
    assert attention.default_query(t, tokens_of(t, 0, True)) == 2  # shown 1, 2, 3: the middle one
