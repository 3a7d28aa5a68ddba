"""The attention views (core/views.py, app/attention_figures.py): every number checked against a plain loop over
Trace.attention, core.downsample.pool_matrix, or a hand-worked example; payloads within 1 MB per view."""

import math

import numpy as np
import pytest
import torch

from app import attention_figures as figs
from app import i18n
from core import views
from core.downsample import pool_matrix
from core.models.base import Batch, Trace


def fake_trace(
    lengths=(7, 5), n_layers=3, n_heads=4, n_kv_heads=2, d=8, causal=False, special_at=(0,), seed=0, tokens=None
) -> Trace:
    """A Trace with random q/k: right-padded batch, GQA, specials at `special_at` (and the last real token)."""
    g = torch.Generator().manual_seed(seed)
    B, n = len(lengths), max(lengths)
    mask = torch.tensor([[1] * m + [0] * (n - m) for m in lengths])
    special = mask == 0
    for b, m in enumerate(lengths):
        for s in special_at:
            special[b, s] = True
        special[b, m - 1] = True
    toks = tokens or [[f"t{j}" if mask[b, j] else "[PAD]" for j in range(n)] for b in range(B)]
    batch = Batch(torch.zeros(B, n, dtype=torch.long), mask, toks, special, [False] * B, ["x"] * B)
    q = [torch.randn(B, n_heads, n, d, generator=g) * 1.5 for _ in range(n_layers)]
    k = [torch.randn(B, n_kv_heads, n, d, generator=g) * 1.5 for _ in range(n_layers)]
    return Trace(batch=batch, queries=q, keys=k, scale=d**-0.5, is_causal=causal)


@pytest.fixture(params=[False, True], ids=["encoder", "decoder"])
def trace(request):
    return fake_trace(causal=request.param)


def test_layer_weights_equal_trace_attention_per_head(trace):
    for index in range(2):
        for layer in range(trace.n_layers):
            got = views.layer_weights(trace, layer, index)
            for h in range(trace.n_heads):
                torch.testing.assert_close(got[h], trace.attention(layer, h, index))
            rows = torch.tensor([1, 3])
            torch.testing.assert_close(
                views.layer_weights(trace, layer, index, rows)[2], trace.attention(layer, 2, index)[rows]
            )


def test_token_weights_are_one_row_of_every_head(trace):
    n = views.real_length(trace, 1)
    got = views.token_weights(trace, 3, index=1)
    assert got.shape == (trace.n_layers, trace.n_heads, n)
    for layer in range(trace.n_layers):
        for h in range(trace.n_heads):
            torch.testing.assert_close(got[layer, h], trace.attention(layer, h, 1)[3, :n])


def test_hiding_specials_drops_them_and_renormalises_by_hand(trace):
    shown = views.shown_tokens(trace, 0, hide_special=True)
    assert shown.tolist() == [1, 2, 3, 4, 5]  # 0 and the last real token (6) are special
    w, masked = views.head_weights(trace, 1, 2, 0, hide_special=True)
    full = trace.attention(1, 2, 0)
    for a, i in enumerate(shown.tolist()):
        kept = full[i, shown]
        torch.testing.assert_close(w[a], kept / kept.sum())
    torch.testing.assert_close(w.sum(-1), torch.ones(len(shown)))
    assert torch.equal(masked, ~trace.mask(0)[shown][:, shown])


def test_mean_over_heads_is_the_plain_average(trace):
    n = views.real_length(trace, 1)
    ref = sum(trace.attention(2, h, 1)[:n, :n] for h in range(trace.n_heads)) / trace.n_heads
    torch.testing.assert_close(views.mean_over_heads(trace, 2, 1), ref)


def test_rollout_matches_a_numpy_loop_and_stays_row_stochastic(trace):
    n = views.real_length(trace, 0)
    ref = np.eye(n)
    for layer in range(trace.n_layers):
        a = np.mean([trace.attention(layer, h, 0)[:n, :n].double().numpy() for h in range(trace.n_heads)], axis=0)
        a = 0.5 * a + 0.5 * np.eye(n)
        a = a / a.sum(1, keepdims=True)
        ref = a @ ref
    got = views.rollout(trace, 0)
    np.testing.assert_allclose(got.numpy(), ref, atol=1e-5)
    torch.testing.assert_close(got.sum(-1), torch.ones(n))
    if trace.is_causal:  # information cannot flow backwards in a decoder
        assert float(got.triu(1).abs().max()) == 0.0


def test_rollout_of_one_layer_hand_worked():
    """Two tokens, one layer, one head whose weights are [[1, 0], [0.5, 0.5]]:
    0.5 A + 0.5 I = [[1, 0], [0.25, 0.75]] (rows already sum to 1)."""
    t = fake_trace(lengths=(2,), n_layers=1, n_heads=1, n_kv_heads=1, d=1, causal=True, special_at=())
    t.queries[0].zero_()  # equal scores: row 1 splits 0.5 / 0.5; row 0 sees only itself
    torch.testing.assert_close(views.rollout(t), torch.tensor([[1.0, 0.0], [0.25, 0.75]]))


def test_head_entropy_by_hand(trace):
    n = views.real_length(trace, 0)
    got = views.head_entropy(trace, 0)
    for layer in range(trace.n_layers):
        for h in range(trace.n_heads):
            w = trace.attention(layer, h, 0)[:n, :n].double()
            rows = [-sum(float(p) * math.log(float(p)) for p in row if p > 0) for row in w]
            assert got[layer, h].item() == pytest.approx(sum(rows) / n, abs=1e-5)
    # the reference: log of the number of keys each query may see
    allowed = trace.mask(0)[:n, :n].sum(-1).double()
    assert views.uniform_entropy(trace, 0) == pytest.approx(float(torch.log(allowed).mean()))


@pytest.mark.parametrize("size", [3, 4, 7, 24])
def test_block_pool_equals_pool_matrix_with_masked_cells_as_nan(trace, size):
    n = views.real_length(trace, 0)
    w = trace.attention(0, 1, 0)[:n, :n]
    masked = ~trace.mask(0)[:n, :n]
    got, r_edges, c_edges = views.block_pool(w, masked, size)
    ref, r_ref, c_ref = pool_matrix(torch.where(masked, float("nan"), w), size)
    np.testing.assert_allclose(got.numpy(), ref, atol=1e-6, equal_nan=True)
    assert list(r_edges) == list(r_ref) and list(c_edges) == list(c_ref)


def test_thumbnails_are_avg_pooled_heads(trace):
    thumbs = views.thumbnails(trace, 4, index=0)
    n = views.real_length(trace, 0)
    assert thumbs.shape == (trace.n_layers, trace.n_heads, 4, 4)
    for layer in range(trace.n_layers):
        for h in range(trace.n_heads):
            w = trace.attention(layer, h, 0)[:n, :n]
            ref, _, _ = pool_matrix(torch.where(trace.mask(0)[:n, :n], w, float("nan")), 4)
            np.testing.assert_allclose(thumbs[layer, h].numpy(), ref, atol=1e-6, equal_nan=True)


def test_thumbnails_of_short_texts_are_the_exact_weights():
    t = fake_trace(lengths=(5,))
    thumbs = views.thumbnails(t, 24)
    torch.testing.assert_close(thumbs[1, 3], t.attention(1, 3, 0))


# --- figures and payload ---------------------------------------------------------------------------------------------


def test_grid_figure_carries_the_thumbnails_and_names_each_tile():
    t = fake_trace(lengths=(30,), n_layers=2, n_heads=3, n_kv_heads=1)
    fig = figs.grid_figure(t)
    assert len(fig.data) == 6
    thumbs = views.thumbnails(t, figs.TILE)
    tile = fig.data[4]  # layer 1, head 1
    assert "layer 1, head 1" in tile.hovertemplate
    np.testing.assert_allclose(np.asarray(tile.z, dtype=float), np.round(thumbs[1, 1].numpy(), 3), atol=1e-6)
    assert "kv0" in fig.layout.xaxis.ticktext[2]  # GQA: which key/value head each query head reads


def test_head_figure_titles_axes_and_escapes_tokens():
    toks = [["<script>alert(1)</script>", "b", "c", "d", "e"]]
    t = fake_trace(lengths=(5,), tokens=toks)
    fig, (w, labels) = figs.head_figure(t, 0, 1)
    assert fig.layout.yaxis.title.text.startswith("query token") and "rows" in fig.layout.yaxis.title.text
    assert fig.layout.xaxis.title.text.startswith("key token") and "columns" in fig.layout.xaxis.title.text
    assert "query" in fig.data[0].hovertemplate and "key" in fig.data[0].hovertemplate
    assert "<script>" not in fig.to_json() and "&lt;script&gt;" in fig.data[0].y[0]
    torch.testing.assert_close(torch.as_tensor(w), t.attention(0, 1, 0))


def test_long_head_view_is_block_means_or_a_full_resolution_window():
    t = fake_trace(lengths=(300,), n_layers=1, n_heads=1, n_kv_heads=1, causal=True)
    pooled, _ = figs.head_figure(t, 0, 0)
    assert np.asarray(pooled.data[0].z).shape == (figs.FULL_RES_MAX, figs.FULL_RES_MAX)
    window, _ = figs.head_figure(t, 0, 0, window=10)
    z = np.asarray(window.data[0].z, dtype=float)
    exact = t.attention(0, 0, 0)[10 : 10 + figs.FULL_RES_MAX, 10 : 10 + figs.FULL_RES_MAX].numpy()
    ok = ~np.isnan(z)
    np.testing.assert_allclose(z[ok], np.round(exact, 3)[ok], atol=1e-6)
    assert np.isnan(z[~(t.mask(0)[10:266, 10:266].numpy())]).all()  # masked = grey gaps, not zeros


@pytest.mark.parametrize("shape", [(6, 12, 12), (30, 9, 3)], ids=["minilm-shape", "smollm2-shape"])
def test_every_view_stays_under_one_megabyte_at_512_tokens(shape):
    L, H, K = shape
    t = fake_trace(lengths=(512,), n_layers=L, n_heads=H, n_kv_heads=K, d=4, causal=K < H)
    sizes = {
        "grid": figs.figure_bytes(figs.grid_figure(t)),
        "head": figs.figure_bytes(figs.head_figure(t, 1, 1)[0]),
        "window": figs.figure_bytes(figs.head_figure(t, 1, 1, window=100)[0]),
        "token": figs.figure_bytes(figs.token_figure(t, 200)[0]),
        "mean": figs.figure_bytes(figs.aggregate_figure(t, "mean", 1)[0]),
        "rollout": figs.figure_bytes(figs.aggregate_figure(t, "rollout", 1)[0]),
        "entropy": figs.figure_bytes(figs.aggregate_figure(t, "entropy", 0)[0]),
    }
    assert max(sizes.values()) <= 1_000_000, sizes


def test_token_figure_rows_are_every_head_and_masks_the_future():
    t = fake_trace(lengths=(6,), n_layers=2, n_heads=3, n_kv_heads=3, causal=True)
    fig, (w, rows, cols) = figs.token_figure(t, 2)
    assert rows == [f"L{l} H{h}" for l in range(2) for h in range(3)]
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[:, 3:]).all()  # keys after the query: masked in a decoder
    np.testing.assert_allclose(z[:, :3], np.round(w[:, :3], 3), atol=1e-6)


def test_padding_report_on_a_consistent_fake_model():
    """padding_report compares each batch row with a run alone: a fake model whose single runs reproduce the
    batch rows exactly reports 0 difference and 0 weight on padding."""
    full = fake_trace(lengths=(6, 4), causal=False, special_at=())

    class Fake:
        def tokenize(self, texts, max_tokens=None):
            i = int(texts[0])
            n = views.real_length(full, i)
            b = full.batch
            return Batch(
                b.input_ids[i : i + 1, :n],
                b.attention_mask[i : i + 1, :n],
                [b.tokens[i][:n]],
                b.special[i : i + 1, :n],
                [False],
                texts,
            )

        def run(self, batch):
            i = int(batch.texts[0])
            n = batch.input_ids.shape[1]
            return Trace(
                batch,
                [q[i : i + 1, :, :n] for q in full.queries],
                [k[i : i + 1, :, :n] for k in full.keys],
                full.scale,
                False,
            )

    full.batch.texts[:] = ["0", "1"]
    report = views.padding_report(Fake(), full)
    assert [r["padding"] for r in report] == [0, 2]
    assert all(r["max_pad_weight"] == 0.0 for r in report)
    assert all(r["max_diff_alone"] < 1e-6 for r in report)


def test_figure_text_accepts_a_format_field_named_key(monkeypatch):
    """english() takes its table key positionally, so a string may use {key} as a field (ui.tr had this bug)."""
    monkeypatch.setitem(i18n.section("en", "attention.figure"), "probe", "head {key} of {text}")
    assert figs.english("probe", key="3.7", text="it") == "head 3.7 of it"
