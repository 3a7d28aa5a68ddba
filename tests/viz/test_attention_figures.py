"""viz/attention.py: the head, token and aggregate figures built from core.attention's views of fake traces
(tests/fake_traces.py), read back: query rows and key columns, escaped tokens, block means or a full-resolution
window for long texts, masked cells as gaps, every view under a megabyte at 512 tokens."""

import functools

import numpy as np
import pytest
import torch

from app import i18n
from core import attention
from tests.fake_traces import fake_trace
from viz import attention as figures
from viz.style import figure_bytes

english = functools.partial(i18n.text, "en", "attention.figure")


def head_figure(t, layer, head, hide=False, window=None):
    view = attention.head_view(t, attention.select_tokens(t, 0, hide), layer, head, window)
    return figures.figure(view, english), view


def test_head_figure_titles_axes_and_escapes_tokens():
    toks = [["<script>alert(1)</script>", "b", "c", "d", "e"]]
    t = fake_trace(lengths=(5,), tokens=toks)
    fig, view = head_figure(t, 0, 1)
    assert fig.layout.yaxis.title.text.startswith("query token") and "rows" in fig.layout.yaxis.title.text
    assert fig.layout.xaxis.title.text.startswith("key token") and "columns" in fig.layout.xaxis.title.text
    assert "query" in fig.data[0].hovertemplate and "key" in fig.data[0].hovertemplate
    assert "<script>" not in fig.to_json() and "&lt;script&gt;" in fig.data[0].y[0]
    torch.testing.assert_close(torch.as_tensor(view.weights), t.attention(0, 1, 0))


def test_long_head_view_is_block_means_or_a_full_resolution_window():
    t = fake_trace(lengths=(300,), n_layers=1, n_heads=1, n_kv_heads=1, causal=True)
    pooled, view = head_figure(t, 0, 0)
    assert np.asarray(pooled.data[0].z).shape == (attention.FULL_RES_MAX, attention.FULL_RES_MAX)
    assert view.pooled == attention.FULL_RES_MAX and "block means" in pooled.layout.title.text
    window, view = head_figure(t, 0, 0, window=10)
    assert view.window == (10, 10 + attention.FULL_RES_MAX - 1)
    z = np.asarray(window.data[0].z, dtype=float)
    exact = t.attention(0, 0, 0)[10 : 10 + attention.FULL_RES_MAX, 10 : 10 + attention.FULL_RES_MAX].numpy()
    ok = ~np.isnan(z)
    np.testing.assert_allclose(z[ok], np.round(exact, 3)[ok], atol=1e-6)
    assert np.isnan(z[~(t.mask(0)[10:266, 10:266].numpy())]).all()  # masked = grey gaps, not zeros
    assert attention.last_window_start(attention.select_tokens(t)) == 300 - attention.FULL_RES_MAX


@pytest.mark.parametrize("shape", [(6, 12, 12), (30, 9, 3)], ids=["minilm-shape", "smollm2-shape"])
def test_every_view_stays_under_one_megabyte_at_512_tokens(shape):
    L, H, K = shape
    t = fake_trace(lengths=(512,), n_layers=L, n_heads=H, n_kv_heads=K, d=4, causal=K < H)
    tokens = attention.select_tokens(t)
    views = {
        "grid": attention.grid_view(t, tokens),
        "head": attention.head_view(t, tokens, 1, 1),
        "window": attention.head_view(t, tokens, 1, 1, window=100),
        "token": attention.token_view(t, tokens, 200),
        "mean": attention.mean_view(t, tokens, 1),
        "rollout": attention.rollout_view(t, tokens, 1),
        "entropy": attention.entropy_view(t, tokens),
    }
    sizes = {name: figure_bytes(figures.figure(v, english)) for name, v in views.items()}
    assert max(sizes.values()) <= 1_000_000, sizes


def test_token_figure_rows_are_every_head_and_masks_the_future():
    t = fake_trace(lengths=(6,), n_layers=2, n_heads=3, n_kv_heads=3, causal=True)
    view = attention.token_view(t, attention.select_tokens(t), 2)
    fig = figures.figure(view, english)
    assert view.head_labels == [f"L{l} H{h}" for l in range(2) for h in range(3)]
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[:, 3:]).all()  # keys after the query: masked in a decoder
    np.testing.assert_allclose(z[:, :3], np.round(view.weights[:, :3], 3), atol=1e-6)


def test_figure_text_accepts_a_format_field_named_key(monkeypatch):
    """Catalog keys are positional, so a string may use {key} as a field (ui.tr had this bug)."""
    monkeypatch.setitem(i18n.section("en", "attention.figure"), "probe", "head {key} of {text}")
    assert english("probe", key="3.7", text="it") == "head 3.7 of it"
