"""/positions, learned part: a position past MiniLM's table is looked up from a link and shown as missing, the table named."""

import pytest

from tests.apptest_helpers import open_view, shown_text


def test_position_512_has_no_vector_and_511_has_one():
    at = open_view("positions", {"part": "learned", "pastpos": "512"})
    assert "position_embeddings[512]  # IndexError" in [c.value for c in at.code]
    assert (
        "Position 512 has no vector: the table of MiniLM-L6 (all-MiniLM-L6-v2) stops at row 511 (512 positions)"
        in shown_text(at)
    )
    at = open_view("positions", {"part": "learned", "pastpos": "511"})
    assert any(c.value.startswith("position_embeddings[511] = [") for c in at.code)
    assert "Position 511 has a trained vector (row 511 of 512, 384 numbers)." in shown_text(at)


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_a_position_past_the_table_is_said_once_in_the_readers_words(lang):
    """torch's own message ('index out of range in self') stood in the code line under the reader's sentence: the
    page says it once, from the locales; the code line keeps only what is code (the lookup and the error's name)."""
    from app import i18n, models

    at = open_view("positions", {"lang": lang, "part": "learned", "pastpos": "512"})
    shown = "\n".join([c.value for c in at.code] + [shown_text(at)])
    assert "out of range" not in shown and "in self" not in shown, [c.value for c in at.code]
    said = i18n.text(lang, "positions", "past_missing", pos=512, n=512, last=511, name=models.name_in_text("minilm"))
    assert [e.value for e in at.error] == [said]
