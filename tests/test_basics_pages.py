"""The two 'basics' pages driven through AppTest beyond 'no exception': what they compute is on screen."""

import numpy as np
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import open_view

SDPA, MASKS = "sdpa_steps.py", "masks.py"


def codes(at: AppTest) -> str:
    return "\n".join(c.value for c in at.code)


def test_sdpa_page_shows_the_classic_example_and_the_sdpa_check():
    at = open_view(SDPA)
    shown = codes(at)
    assert "q0 · k0 = 1×4 + 2×5 = 14" in shown  # step 1, built from the input
    assert "14 × 0.707107 = 9.89949" in shown  # step 2
    assert "0.000204, 0.014163, 0.985633" in shown  # step 3
    assert "= [15.9563, 16.9563, 17.9563]" in shown  # step 4
    assert any("SDPA agree" in s.value for s in at.success)
    editors, result = at.dataframe[:3], at.dataframe[3]  # the Q, K, V editors, then SDPA's output
    assert [e.key for e in editors] == ["sdpa-Q-0", "sdpa-K-0", "sdpa-V-0"]
    assert np.allclose(
        result.value.to_numpy(), [[15.95629, 16.95629, 17.95629], [15.99985, 16.99985, 17.99985]], atol=1e-5
    )


def test_sdpa_page_pads_a_wider_d_k_with_zeros():
    at = open_view(SDPA, {"dk": "3", "dv": "1"})
    assert "q0 · k0 = 1×4 + 2×5 + 0×0 = 14" in codes(at)
    assert any("SDPA agree" in s.value for s in at.success)


def test_sdpa_page_explains_mismatched_shapes():
    bad = {"gen": 7, "dims": (2, 3), "q": np.array([[1.0, 2.0]]), "k": np.ones((4, 2)), "v": np.ones((3, 3))}
    at = open_view(SDPA, state={"sdpa_editor": bad})
    errors = " ".join(e.value for e in at.error)
    assert "K has 4 rows but V has 3" in errors
    assert not at.success  # no result claimed for invalid input


def test_sdpa_page_saturation_numbers_follow_the_slider():
    at = open_view(SDPA, {"sdk": "1024", "keys": "8"})
    text = " ".join(m.value for m in at.markdown)
    assert "Measured at d_k = 1024" in text and "ln 8 = 2.08" in text


def test_masks_page_masked_weights_are_exactly_zero_on_screen():
    at = open_view(MASKS)
    facts = " ".join(m.value for m in at.markdown if "Measured now" in m.value)
    assert "largest weight on a masked cell 0;" in facts
    assert any("Random weights" in w.value for w in at.warning)
    padded = at.dataframe[0].value
    assert padded.shape == (3, 10) and padded.iloc[1].tolist()[:3] == ["Dogs", "bark", "."]
    assert padded.iloc[1].tolist()[3:] == ["[PAD]"] * 7


def test_masks_page_line_rules():
    at = open_view(MASKS, {"text": "a b\nc\nd e f\ng\nh"})
    assert any("first 4 lines" in i.value for i in at.info)
    assert at.dataframe[0].value.shape == (4, 3)
    at = open_view(MASKS, {"text": "only one line"})
    assert any("at least two sentences" in i.value for i in at.info)
    at = open_view(MASKS, {"text": "word " * 40 + "\nshort"})
    assert any("has 40 tokens; the first 12 are used" in i.value for i in at.info)


def test_masks_page_shows_user_text_as_text_only():
    at = open_view(MASKS, {"text": "<script>alert(1)</script>\n<b>bold</b> 猫 😴"})
    padded = at.dataframe[0].value
    assert padded.iloc[0].tolist()[:3] == ["<", "script", ">"] and "😴" in padded.iloc[1].tolist()
    assert not any("<script" in m.value or "<b>" in m.value for m in at.markdown)


def test_masks_page_cross_attention_shapes():
    at = open_view(MASKS, {"text": "a b c d e\nx y", "src": "0", "tgt": "1"})
    shapes = at.dataframe[1].value
    cross = shapes.iloc[2]
    assert cross["Q"] == "(1, 4, 2, 4)" and cross["K"] == "(1, 4, 5, 4)" and cross["softmax(QKᵀ/√d)"] == "(1, 4, 2, 5)"
