"""/why-head headless: the RoPE part draws every head's band shares and says which band carries the drawn head and
whether position or content shapes it; the absolute part states what LayerNorm does to the split, in the reader's
language; an empty text is a sentence."""

import numpy as np
import pytest

from core import why_head as wh
from tests.apptest_helpers import figure_traces, open_view, plotted_values, shown_text


@pytest.mark.slow  # the page loads SmolLM2
def test_rope_part_draws_the_band_shares_and_names_the_carrier(smollm2):
    at = open_view("why-head", {"layer": "1", "head": "2", "split": "equal", "bands": "4"})
    parts = wh.rope_parts_of(smollm2, wh.DEFAULT_TEXT, 1, "equal", 4, wh.MAX_TOKENS)
    view = wh.rope_view(parts, 2, 0, "own")
    bars = figure_traces(at, 0)
    assert len(bars) == 4 and all(len(plotted_values(b["y"])) == smollm2.n_heads for b in bars)
    np.testing.assert_allclose(np.stack([plotted_values(b["y"]) for b in bars], 1), view.shares, atol=1e-6)
    text = shown_text(at)
    assert f"Head 2 is carried mostly by **band {view.carrier}: pairs" in text
    assert f"{view.carrier_share:.0%} of its score magnitude" in text
    assert "The bands add back up to q·k × scale" in text
    assert f"Head 2: with content removed it keeps {view.kept_here['position_only']:.0%}" in text
    heatmap = figure_traces(at, 1)[0]
    assert heatmap["y"][0] == view.labels[0]  # rows: queries, top to bottom
    found = wh.committed_detector_heads("smollm2")  # the measurement over held-out texts, below
    assert [h.value for h in at.header][-1] == "The heads the detectors found, over many texts"
    table = at.dataframe[0].value
    assert table["layer.head"].tolist() == found.rows["head"] and table["detector"][0] == "previous token"
    assert ("This agrees with Barbero" in text) == (found.paper == "agrees")


@pytest.mark.slow  # MiniLM
def test_absolute_part_says_what_layernorm_does_in_japanese(minilm):
    at = open_view("why-head", {"part": "absolute", "where": "after_norm", "head": "3"}, state={"lang": "ja"})
    text = shown_text(at)
    assert "**LayerNorm を通して**" in text and "σᵢ" in text
    assert "4 つの項はモデル自身の第 1 層のスコアに" in text
    view = wh.absolute_view(
        wh.absolute_parts_of(minilm, wh.DEFAULT_TEXT, "after_norm", wh.MAX_TOKENS), 3, "token_token"
    )
    assert f"{view.largest_share:.0%}" in text


@pytest.mark.slow  # MiniLM
def test_empty_text_is_a_sentence(minilm):
    at = open_view("why-head", {"part": "absolute", "text": " "})
    assert "Type a text to take its scores apart." in shown_text(at) or at.text_area[0].value.strip()
