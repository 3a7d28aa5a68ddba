"""viz/why_head.py: views built by core.why_head from the hand-worked two-pair example and a hand-made four-term
split, read back from the figures (values, which axis is the query and which the key, titles)."""

import numpy as np
import pytest
import torch

from app import i18n
from core import why_head as wh
from viz import why_head as figures


def t(key, **fmt):
    return i18n.text("en", "why_head.figure", key, **fmt)


def rope_parts():
    q = torch.tensor([[[1.0, 1, 0, 0], [0, 1, 1, 0]]])
    k = torch.tensor([[[1.0, 1, 0, 0], [0, 1, 3, 0]]])
    cos = torch.tensor([[1.0, 1, 1, 1], [0, 1, 0, 1]])
    sin = torch.tensor([[0.0, 0, 0, 0], [1, 0, 1, 0]])
    return wh.rope_layer_parts(q, k, 1.0, cos, sin, "half", [(0, 1), (1, 2)], ["a", "b"])


VIEW = wh.rope_view(rope_parts(), 0, 0, "position_only")
TERMS = torch.arange(4 * 4, dtype=torch.float64).reshape(1, 4, 2, 2) - 5
ABSOLUTE = wh.absolute_view(wh.AbsoluteLayerParts(["0 a", "1 b"], "after_norm", TERMS, TERMS.sum(1), TERMS.sum(1)),
                            0, "token_position")  # fmt: skip


def test_band_shares_are_stacked_bars_one_trace_per_band():
    fig = figures.band_shares_figure(VIEW, t)
    assert [tr.name for tr in fig.data] == [figures.band_name(VIEW, b, t) for b in (0, 1)]
    for b, trace in enumerate(fig.data):
        assert list(trace.x) == ["H0"] and list(trace.y) == pytest.approx([VIEW.shares[0, b]])
    assert fig.layout.barmode == "stack" and fig.layout.xaxis.title.text == t("head_axis")
    assert "4–4 tokens" in fig.data[0].name  # pair 0 turns a quarter per position: 4 tokens per turn


def test_band_heatmap_rows_are_queries_columns_keys_future_masked():
    fig = figures.band_figure(VIEW, t)
    z = np.array(fig.data[0].z, dtype=float)
    assert z[1, 0] == 0 and z[1, 1] == 3 and z[0, 0] == 1 and np.isnan(z[0, 1])  # band 0 by hand
    assert fig.layout.yaxis.title.text == t("query_axis") and fig.layout.xaxis.title.text == t("key_axis")
    assert fig.data[0].zmid == 0.0


def test_pattern_and_kept_figures_show_the_counterfactuals_weights():
    fig = figures.pattern_figure(VIEW, t)
    z = np.array(fig.data[0].z, dtype=float)
    # content removed: scores 1, 3 in row 1 (hand-worked) -> weights 1 / (1 + e^2), e^2 / (1 + e^2)
    assert z[1].tolist() == pytest.approx([1 / (1 + np.e**2), np.e**2 / (1 + np.e**2)], abs=1e-3)
    assert fig.layout.title.text == t("pattern_title_position_only", h=0)
    kept = figures.kept_figure(VIEW, t)
    assert [tr.name for tr in kept.data] == [t("kept_position_only"), t("kept_content_only"), t("kept_uniform")]
    assert kept.data[0].y[0] == pytest.approx(VIEW.kept["position_only"][0])


def test_term_figures():
    fig = figures.term_figure(ABSOLUTE, t)
    assert np.array(fig.data[0].z, dtype=float).tolist() == TERMS[0, 1].tolist()  # token.position, every key visible
    assert fig.layout.yaxis.title.text == t("query_axis") and fig.layout.xaxis.title.text == t("key_axis")
    shares = figures.term_shares_figure(ABSOLUTE, t)
    assert [tr.name for tr in shares.data] == [t(f"term_{k}") for k in wh.TERMS]
    assert sum(tr.y[0] for tr in shares.data) == pytest.approx(1.0)
