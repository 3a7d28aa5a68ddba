"""A map's marks (/masks' cross on a masked cell, /kv-cache's on an evicted one) are set no wider than their cells as
chromium draws them (scripts/phone_layout_check.py: results/phone_layout_no_long.json), or left out where a cell is
too narrow for a mark in CELL_TEXT_AT_LEAST px type: the cell's grey says masked (or evicted) still."""

import functools

import numpy as np
import pytest

from app import i18n
from core.masks import batch as masks_core
from viz.heatmap import attention_heatmap
from viz.labels import CELL_TEXT_AT_LEAST, MARK_EM, PHONE_FIGURE_PX, for_page, indexed_labels, mark_px
from viz.masks import KIND_FIGURE_PX, mask_steps_figures


@pytest.mark.parametrize(("size", "drawn"), [(9, 8), (10, 8), (12, 10), (14, 12)])
def test_a_cross_is_no_wider_than_mark_em_of_its_type(size, drawn):
    """The cross's width in chromium (px) in each type it was measured in."""
    assert MARK_EM * size >= drawn


def test_a_mark_is_as_large_as_its_cell_holds_and_left_out_under_9_px():
    assert mark_px(30, 14) == 14  # as the figure sets it, where it fits
    assert mark_px(11, 14) == 11 and MARK_EM * 11 <= 11
    assert mark_px(9.4, 10) == CELL_TEXT_AT_LEAST
    assert mark_px(6.4, 12) == 0


def marks(fig: dict) -> list[tuple[int, float | None]]:
    """(columns, type px) of each map that carries marks as the page sends it; None for plotly's own size."""
    out = []
    for trace in fig["data"]:
        text = trace.get("text") if trace.get("texttemplate") == "%{text}" else None
        if trace.get("type") == "heatmap" and text and any(len(str(c)) == 1 for row in text for c in row):
            out.append((max(len(row) for row in text), (trace.get("textfont") or {}).get("size")))
    return out


def fits(fig: dict, cell_px: float) -> bool:
    """Every mark no wider than the cell chromium drew (its box measured with 1 px to spare, as the check does)."""
    return all(MARK_EM * (size or 12) <= cell_px + 1 for _, size in marks(fig))


def masks_figures(lang: str) -> dict:
    """/masks' default: its three sentences, the first, head 0, padding and look-ahead (as the page opens)."""
    tokens = [["The", "cat", "sat", "on", "the", "mat", "."], ["Dogs", "bark", "."],
              ["It", "was", "tired", "because", "it", "had", "chased", "a", "mouse", "."]]  # fmt: skip
    view = masks_core.mask_steps_view(tokens, 0, 0, "both", seed=0)
    t = functools.partial(i18n.text, lang, "masks.figure")
    return {k: f.to_dict() for k, f in mask_steps_figures(view, t, indexed_labels(view.tokens)).items()}


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_masks_crosses_fit_their_cells_beside_each_other(lang):
    """At 256 px (three beside one another) chromium drew the weights map's cells 6.4 px wide (en), its crosses 8:
    neighbours touched. They are left out there; the three masks' (13.2 px cells in en, 15 in ko) keep theirs."""
    figs = masks_figures(lang)
    weights = for_page(dict(figs["weights"]), KIND_FIGURE_PX)
    assert marks(weights) == [] and fits(weights, 6.4)
    for kind in ("padding", "causal", "both"):
        fitted = for_page(dict(figs[kind]), KIND_FIGURE_PX)
        [(columns, size)] = marks(fitted)
        assert columns == 10 and size >= CELL_TEXT_AT_LEAST and fits(fitted, 13.2)


def test_a_27_token_map_on_a_phone_leaves_its_crosses_to_the_grey():
    """/why-head's maps: 27 tokens, 6 px cells on a phone (chromium), crosses 8 px wide in them."""
    n = 27
    labels = indexed_labels(["tok"] * n)
    fig = attention_heatmap(np.full((n, n), 1 / n), labels, labels, masked=np.triu(np.ones((n, n), bool), 1),
                            x_title="keys", y_title="queries", value_name="weight", zmax=1.0).to_dict()  # fmt: skip
    phone = for_page(dict(fig), PHONE_FIGURE_PX)
    assert marks(phone) == [] and fits(phone, 6.0)
    # a 1,280 px window's column: 22.8 px cells, the crosses in plotly's own size
    assert marks(for_page(dict(fig), 820)) == [(n, None)]


@pytest.mark.parametrize(("lang", "cell_px"), [("en", 8.4), ("ja", 8.7), ("ko", 9.4)])
def test_kv_cache_history_crosses_fit_a_phones_cells(lang, cell_px):
    """/kv-cache's history: 6 steps' queries over 18 positions; chromium drew its cells `cell_px` wide on a phone,
    its crosses 10 px in plotly's own size: neighbours touched."""
    from core.kv_cache.views import History
    from viz import kv_cache as kv

    steps, n = 6, 18
    tokens = "The cat sat on the mat . Then it was tired because it had chased a mouse all".split()[:n]
    masked = np.arange(n)[None, :] > np.arange(n - steps, n)[:, None]
    hist = History(0, None, np.where(masked, np.nan, 1 / n), masked, [f"{i} x" for i in range(n - steps, n)],
                   indexed_labels(tokens))  # fmt: skip
    fig = kv.history_figure(hist, functools.partial(i18n.text, lang, "kv_cache.figure")).to_dict()
    phone = for_page(dict(fig), PHONE_FIGURE_PX)
    assert fits(phone, cell_px)
