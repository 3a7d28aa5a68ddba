"""/sdpa-steps, the lookup part, through AppTest: the dict and attention side by side, driven by a link."""

from core.sdpa_steps import lookup_view
from tests.apptest_helpers import open_view, shown_text

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it


def codes(at) -> str:
    return "\n".join(c.value for c in at.code)


def test_lookup_part_shows_the_dict_and_the_soft_result_from_a_link():
    at = open_view("sdpa_steps", {"lq": "3", "tau": "0.05"})
    shown = codes(at)
    assert 'table["bus"]  # → 40' in shown and "softmax(q·K / 0.05) · V = " in shown
    text = shown_text(at)
    soft = lookup_view(3, 0.05, ["cat", "dog", "car", "bus"]).soft
    assert f"The dict returns 40; attention returns {soft:.4f}" in text and 38 < soft < 40
    assert at.query_params["lq"] == "3" and at.query_params["tau"] == "0.05"


def test_lookup_part_query_in_no_key_is_a_key_error():
    at = open_view("sdpa_steps", {"lq": "other"}, state={"lang": "ja"})
    assert "table[q]  # KeyError" in codes(at)
    assert "KeyError" in shown_text(at) and "猫" in codes(at)
