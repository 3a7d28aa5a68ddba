"""Long attention maps (core/long_maps/, HFAttentionModel.layer_qk, viz/long_maps.py; the page headless is
tests/pages/test_long_maps_page.py).

References are independent of the code under test: the full n x n softmax (float64) pooled with numpy's reduceat
or tests.references.pool_matrix, the Trace of a normal forward pass (itself checked against transformers' eager
attention in tests/core/test_models.py), and brute-force loops.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from core import long_maps as lm
from core.long_maps import pooled as pa
from core.long_maps import views
from core.models.hf import HFAttentionModel
from core.pooling import block_mean
from tests.references import pool_matrix

WORDS = ["the", "cat", "sat", "on", "mat", "because", "it", "was", "tired", "a", "dog", "ran"]


def tiny_llama(n_layers: int = 4) -> HFAttentionModel:
    """Random Llama with GQA (6 query heads, 2 key/value heads) and RoPE, word-level tokenizer."""
    torch.manual_seed(3)
    vocab = {t: i for i, t in enumerate(["[UNK]", "[EOS]", *WORDS])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", eos_token="[EOS]")
    cfg = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=48,
        intermediate_size=64,
        num_hidden_layers=n_layers,
        num_attention_heads=6,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    return HFAttentionModel(LlamaForCausalLM(cfg), tokenizer, "tiny Llama", "rope", True, random_init=True)


def full_weights(q, k, scale, causal=True) -> np.ndarray:
    """(H, n, n) float64 softmax of one sequence, K repeated for GQA, future keys exactly 0."""
    q, k = q[0].double(), k[0].double()
    k = k.repeat_interleave(q.shape[0] // k.shape[0], dim=0)
    s = q @ k.transpose(-2, -1) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(s, -1).numpy()


def block_pool(w: np.ndarray, row_edges, col_edges):
    """Mean and max of each block of (..., n, n) by numpy's reduceat: a second, loop-free pooling."""
    sums = np.add.reduceat(np.add.reduceat(w, row_edges[:-1], axis=-2), col_edges[:-1], axis=-1)
    mean = sums / np.outer(np.diff(row_edges), np.diff(col_edges))
    mx = np.maximum.reduceat(np.maximum.reduceat(w, row_edges[:-1], axis=-2), col_edges[:-1], axis=-1)
    return mean, mx


# --- one layer's q/k without the others ----------------------------------------------------------------------


def test_layer_qk_equals_the_full_runs_layer_and_skips_the_layers_above():
    model = tiny_llama()
    batch = model.tokenize(["the cat sat on the mat because it was tired a dog ran on the mat"])
    trace = model.run(batch, logits=False, hidden_states=False)
    ran = []
    hooks = [
        layer.register_forward_hook(lambda *_, i=i: ran.append(i)) for i, layer in enumerate(model.model.model.layers)
    ]
    try:
        for layer in range(model.n_layers):
            ran.clear()
            q, k, scale = model.layer_qk(batch, layer)
            assert torch.equal(q, trace.queries[layer]) and torch.equal(k, trace.keys[layer])
            assert scale == trace.scale
            assert ran == list(range(layer))  # the layers below ran; the chosen one stopped; none above
    finally:
        for h in hooks:
            h.remove()
    with pytest.raises(ValueError):
        model.layer_qk(batch, model.n_layers)
    # the recorder left nothing behind: a normal run afterwards still records every layer
    again = model.run(batch, logits=False, hidden_states=False)
    assert again.n_layers == model.n_layers


def test_document_batch_takes_the_first_n_tokens_past_the_trained_context():
    model = tiny_llama()
    text = " ".join(WORDS * 10)  # 120 tokens, max_positions is 64
    batch = lm.document_batch(model, text, 80)
    ids = model.tokenizer(text)["input_ids"]
    assert batch.input_ids[0].tolist() == ids[:80] and batch.truncated == [True]
    assert batch.tokens[0][:3] == ["the", "cat", "sat"] and batch.attention_mask.sum() == 80
    assert lm.document_batch(model, "the cat", 80).truncated == [False]
    with pytest.raises(ValueError, match="no tokens"):
        lm.document_batch(model, "", 10)


# --- pooled maps and what is read off them ------------------------------------------------------------------


def test_layer_maps_equal_pooling_the_full_matrix():
    q, k, scale = lm.random_qk(45, seed=1, spread=2.0, heads=4, kv_heads=2, head_dim=8)
    maps = lm.layer_maps(q, k, scale, causal=True, out_size=7)
    w = full_weights(q, k, scale)
    for h in range(4):
        np.testing.assert_allclose(maps.mean[h], pool_matrix(w[h], 7, "mean")[0], rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(maps.max[h], pool_matrix(w[h], 7, "max")[0], rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("n,size,side", [(50, 12, 5), (64, 16, 8), (37, 37, 10), (30, 8, 8)])
def test_coarsen_is_exact(n, size, side):
    q, k, scale = lm.random_qk(n, seed=n, spread=2.0, heads=2, kv_heads=1, head_dim=8)
    maps = lm.layer_maps(q, k, scale, causal=True, out_size=size)
    mean, mx, r_edges, c_edges = lm.coarsen(maps.mean, maps.max, maps.row_edges, maps.col_edges, side)
    assert mean.shape[-1] <= side and r_edges[0] == 0 and r_edges[-1] == n
    assert set(r_edges) <= set(maps.row_edges)  # merged bins: unions of the finer ones
    ref_mean, ref_max = block_pool(full_weights(q, k, scale), r_edges, c_edges)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(mx, ref_max, rtol=1e-5, atol=1e-8)


def test_future_cells_are_the_blocks_the_causal_mask_hides_entirely():
    n = 41
    edges = pa.bin_edges(n, 9)
    allowed = np.tril(np.ones((n, n), dtype=bool))
    brute = np.array(
        [
            [not allowed[a0:a1, b0:b1].any() for b0, b1 in zip(edges[:-1], edges[1:])]
            for a0, a1 in zip(edges[:-1], edges[1:])
        ]
    )
    assert np.array_equal(lm.future_cells(edges, edges), brute) and brute.any()


def test_head_summary_matches_direct_sums_over_the_full_matrix():
    q, k, scale = lm.random_qk(60, seed=2, spread=2.5, heads=3, kv_heads=3, head_dim=8)
    maps = lm.layer_maps(q, k, scale, causal=True, out_size=8)
    w = full_weights(q, k, scale)
    e = maps.row_edges
    got = lm.head_summary(maps)
    first = w[:, :, e[0] : e[1]].sum(-1).mean(-1)  # weight on the first key bin
    own = np.array([sum(w[h, a0:a1, a0:a1].sum() for a0, a1 in zip(e[:-1], e[1:])) / 60 for h in range(3)])
    np.testing.assert_allclose(got["first_share"], first, rtol=1e-5)
    np.testing.assert_allclose(got["own_bin_share"], own, rtol=1e-5)
    assert got["row_sum_error"].max() < 1e-5
    # the row-sum check the page quotes reads the rows: means 1.5 times too large make every row sum to 1.5
    too_large = lm.head_summary(dataclasses.replace(maps, mean=maps.mean * 1.5))
    np.testing.assert_allclose(too_large["row_sum_error"], 0.5, atol=1e-5)


def test_zoom_window_is_the_full_matrix_window_and_fits_at_the_end():
    q, k, scale = lm.random_qk(70, seed=4, spread=2.0, heads=6, kv_heads=2, head_dim=8)
    w = full_weights(q, k, scale)
    got, masked, rows, cols = lm.zoom_window(q, k, scale, True, head=4, q0=10, k0=3, size=20)
    np.testing.assert_allclose(got, w[4, 10:30, 3:23], rtol=1e-5, atol=1e-8)
    assert np.array_equal(masked, np.arange(3, 23)[None, :] > np.arange(10, 30)[:, None])
    assert np.all(got[masked] == 0)
    _, _, rows, cols = lm.zoom_window(q, k, scale, True, head=0, q0=65, k0=69, size=20)
    assert (rows.start, rows.stop, cols.start, cols.stop) == (50, 70, 50, 70)


# --- the page's view objects (core/long_maps/views.py) --------------------------------------------------------


def test_views_carry_what_the_parts_draw():
    q, k, scale = lm.random_qk(60, seed=5, spread=2.0, heads=6, kv_heads=2, head_dim=8)
    maps = lm.layer_maps(q, k, scale, causal=True, out_size=12)
    shares = views.head_shares(maps, head=4)
    summary = lm.head_summary(maps)
    np.testing.assert_array_equal(shares.first_share, summary["first_share"])
    assert (shares.first_width, shares.own_width, shares.n, shares.head) == (5, 5, 60, 4)  # 60 tokens in 12 bins
    view = views.map_view(maps, head=4, stat="max", side=6, n_kv_heads=2)
    # head 4 of 6 reads key/value head 4 // 3 = 1; 12 bins merged in pairs -> 6 cells of 10 tokens
    assert (view.kv_head, view.cell_rows, view.cell_cols, view.values.shape) == (1, 10, 10, (6, 6))
    ref_mean, ref_max = block_pool(full_weights(q, k, scale)[4], view.row_edges, view.col_edges)
    np.testing.assert_allclose(view.values, ref_max, rtol=1e-5, atol=1e-8)
    assert np.array_equal(view.masked, lm.future_cells(view.row_edges, view.col_edges))
    shown = ref_max[~view.masked]
    assert view.log_low == pytest.approx(max(np.log10(shown[shown > 0].min()), np.log10(shown.max()) - 8), abs=1e-5)
    tokens = [f"t{i}" for i in range(60)]
    zoom = views.zoom_view(q, k, scale, tokens, head=2, q0=50, k0=0, size=20)
    assert (zoom.rows.start, zoom.rows.stop) == (40, 60)  # moved back to fit
    assert zoom.row_labels[0] == "40 t40" and zoom.col_labels[-1] == "19 t19" and zoom.text == "".join(tokens[40:60])
    assert zoom.inside == pytest.approx(float(full_weights(q, k, scale)[2, 40:60, 0:20].sum(-1).mean()), rel=1e-5)
    assert zoom.keys == 20 and zoom.outside == pytest.approx(
        float(full_weights(q, k, scale)[2, 40:60, 20:].sum(-1).mean()), abs=1e-5
    )  # the page's "the other x% goes to keys outside the window", summed outside it
    assert views.zoom_view(q, k, scale, None, 0, 0, 0, 8).text is None
    assert views.SentBytes(bars=3, pooled_map=400, zoom=50).total == 453


def test_log_colour_range_spans_at_most_eight_decades_below_the_top():
    values = np.array([[1e-12, 1e-3], [0.5, 0.0]])
    low, top = lm.log_colour_range(values)
    assert top == pytest.approx(np.log10(0.5)) and low == pytest.approx(np.log10(0.5) - 8)
    low, top = lm.log_colour_range(values, masked=np.array([[True, False], [False, True]]))
    assert low == pytest.approx(-3.0)
    assert lm.log_colour_range(np.zeros((2, 2))) == pytest.approx((-1.0, 0.0))  # nothing positive: one decade


def test_measured_smollm2_rows_come_from_the_committed_results():
    import json

    from core.results import results_path

    path = results_path("bench_pooled")
    committed = json.loads(path.read_text(encoding="utf-8"))["cpu"]["smollm2"]["rows"] if path.exists() else []
    assert views.measured_smollm2(4096) == [r for r in committed if r["n_tokens"] >= 4096]
    assert len(views.measured_smollm2()) == len(committed)


# --- SmolLM2's layers, the page's path ------------------------------------------------------------------------


@pytest.mark.slow
def test_smollm2_layer_path_equals_pooling_the_models_full_attention(smollm2):
    """The page's path (document_batch -> layer_qk -> pooled maps) against the normal full run's Trace: its
    block means (core.pooling.block_mean, masked cells as 0) and pool_matrix of Trace.attention per head, at n = 96."""
    from core.rope_scaling.long_context import load_long_text

    model = smollm2
    batch = lm.document_batch(model, load_long_text(), 96)
    trace = model.run(batch, logits=False, hidden_states=False)
    thumbs = [block_mean(trace.layer_attention(layer), None, 12)[0] for layer in range(trace.n_layers)]  # (H, 12, 12)
    for layer in (0, 12, 29):
        q, k, scale = model.layer_qk(batch, layer)
        maps = lm.layer_maps(q, k, scale, causal=True, out_size=12)
        np.testing.assert_allclose(maps.mean, thumbs[layer].numpy(), rtol=1e-4, atol=1e-6)
        for head in (0, 4, 8):
            full = trace.attention(layer, head).numpy()
            np.testing.assert_allclose(maps.max[head], pool_matrix(full, 12, "max")[0], rtol=1e-4, atol=1e-6)
        window, _, _, _ = lm.zoom_window(q, k, scale, True, head=4, q0=40, k0=20, size=30)
        np.testing.assert_allclose(window, trace.attention(layer, 4)[40:70, 20:50].numpy(), rtol=1e-4, atol=1e-6)
