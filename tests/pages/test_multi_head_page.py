"""/multi-head headless: every part renders, the chain is checked on screen, bad input is a message."""

import pytest

from tests.apptest_helpers import figure_traces, open_view, shown_text

pytestmark = pytest.mark.slow  # loads MiniLM


def test_layer_part_draws_the_chain_and_says_it_matches_transformers():
    at = open_view("multi_head", {"layer": "3", "head": "7"})
    text = shown_text(at)
    assert "reproduces transformers' own output of layer 3" in text
    traces = figure_traces(at, 0)
    assert len(traces) == 8  # X, Q_i, K_i, V_i, A_i, Z_i, Concat, output
    assert "X →" in text and "384" in text


def test_heads_part_shows_the_papers_split():
    at = open_view("multi_head", {"part": "heads", "n": "100"})
    assert "d_k = 512 / 8 = 64" in shown_text(at)
    table = at.dataframe[0].value
    assert list(table.iloc[:, 0]) == [1, 2, 4, 8, 16, 32]
    assert len(set(table.iloc[:, 2])) == 1  # parameters do not depend on h
    # ... but the h score matrices of n x n do: h * 100^2 entries, from 10,000 (h = 1) to 320,000 (h = 32)
    assert list(table.iloc[:, 5]) == [f"{h * 100 * 100:,}" for h in (1, 2, 4, 8, 16, 32)]


def test_order_part_shows_the_permutation_check():
    at = open_view("multi_head", {"part": "order"})
    assert "Without positions" in shown_text(at) and "With positions added" in shown_text(at)


@pytest.mark.parametrize("text", ["", "<script>alert(1)</script>", "猫がいた 😺 고양이", "word " * 5000])
def test_bad_text_is_a_message_not_an_exception(text):
    for part in ("layer", "order"):
        at = open_view("multi_head", {"part": part, "text": text})
        if not text:
            assert "Type a sentence" in shown_text(at)
    if len(text) > 1000:
        assert "first 64 tokens" in shown_text(open_view("multi_head", {"text": text}))
