"""/padded-batch headless (MiniLM): every padded key gets exactly 0 weight, and a link moves the padding left or
takes the mask away."""

from tests.apptest_helpers import open_view, shown_text


def test_padded_batch_page_reports_exact_zeros_and_equality():
    at = open_view("padded_batch")
    text = shown_text(at)
    assert "every padded key gets exactly 0 weight" in text, text


def test_a_link_moves_the_padding_left_or_takes_the_mask_away():
    """MiniLM numbers positions from the first slot: left padding moves its real tokens' positions (no weight on
    padding, yet not equal to the run alone); without the mask its real queries weigh the padding."""
    at = open_view("padded_batch", {"pad": "left"})
    assert at.radio(key="pad").value == "left" and "the model numbered them from the padding" in shown_text(at)
    at = open_view("padded_batch", {"nomask": "1", "row": "2"})
    assert at.checkbox(key="nomask").value and "padding leaks into this batch" in shown_text(at)
    assert "Without the mask the model got all ones: the 14 padding tokens" in shown_text(at)
