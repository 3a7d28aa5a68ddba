"""/positions, learned part: a position past MiniLM's table is looked up from a link and shown as missing, the table named."""

from tests.apptest_helpers import open_view, shown_text


def test_position_512_has_no_vector_and_511_has_one():
    at = open_view("positions", {"part": "learned", "pastpos": "512"})
    assert "position_embeddings[512]  # IndexError: index out of range in self" in [c.value for c in at.code]
    assert (
        "Position 512 has no vector: the table of MiniLM-L6 (all-MiniLM-L6-v2) stops at row 511 (512 positions)"
        in shown_text(at)
    )
    at = open_view("positions", {"part": "learned", "pastpos": "511"})
    assert any(c.value.startswith("position_embeddings[511] = [") for c in at.code)
    assert "Position 511 has a trained vector (row 511 of 512, 384 numbers)." in shown_text(at)
