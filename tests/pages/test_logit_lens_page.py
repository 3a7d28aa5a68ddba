"""/logit-lens headless: the figure has one row per stage and one column per token; empty text is a message."""

from tests.apptest_helpers import figure_traces, open_view, plotted_values, shown_text


def test_lens_figure_shape():
    at = open_view("logit-lens", {"text": "One, two, three, four"})
    z = plotted_values(figure_traces(at, 0)[0]["z"])
    assert z.shape[0] == 31  # embeddings + 30 layers of SmolLM2
    assert (z[-1] > 0).all() and (z <= 1).all()


def test_empty_text_is_a_message():
    at = open_view("logit-lens", {"text": ""})
    assert "Type a text" in shown_text(at)
