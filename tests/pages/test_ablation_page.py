"""/ablation headless: a committed claim card shows its numbers and the verdict computed from them; the live part
handles no head and every head with a message."""

import pytest

from core import ablation as ab
from tests.apptest_helpers import open_view, shown_text


def test_committed_card_shows_its_verdict():
    data = ab.load_results()
    if data is None:
        pytest.skip("results/ablation.json not written yet")
    card = data["cards"][0]
    at = open_view("ablation", {"part": "cards", "card": f"{card['claim']}-{card['mode']}"})
    text = shown_text(at)
    assert f"{card['clean']['value']:.3f}" in text or f"{card['clean']['value']:.1%}" in text
    words = {"far_more": "far more than removing random heads", "more": "more than removing random heads",
             "no_more": "no more than removing random heads", "no_placebo": "no placebo"}  # fmt: skip
    assert words[card["verdict"]] in text


def test_live_no_head_is_a_message():
    at = open_view("ablation", {"part": "live", "k": "0"})
    assert "No head is removed" in shown_text(at)


def test_live_every_head_is_a_message():
    at = open_view("ablation", {"part": "live", "k": "270", "draws": "1"}, timeout=300)
    assert "Every head of these layers is removed" in shown_text(at)
