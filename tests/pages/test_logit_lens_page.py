"""/logit-lens headless: the figure has one row per stage and one column per token; empty text is a message."""

import pytest

from tests.apptest_helpers import figure_traces, open_view, plotted_values, shown_text


@pytest.mark.slow  # the page loads SmolLM2
def test_lens_figure_shape():
    at = open_view("logit-lens", {"text": "One, two, three, four"})
    z = plotted_values(figure_traces(at, 0)[0]["z"])
    assert z.shape[0] == 31  # embeddings + 30 layers of SmolLM2
    assert (z[-1] > 0).all() and (z <= 1).all()
    assert "get their final prediction as the top token only from layer 26 on" in shown_text(at)  # 30 - 4
    table = at.dataframe[0].value
    firsts = table.iloc[:, 3].tolist()  # 'top token from': a stage's name in words, or — when it never settles
    assert len(table) == z.shape[1] and all(f in ("embeddings", "—") or f.startswith("after layer ") for f in firsts)


def test_empty_text_is_a_message():
    at = open_view("logit-lens", {"text": ""})
    assert "Type a text" in shown_text(at)
