"""/sdpa-steps driven through AppTest beyond 'no exception': what it computes is on screen."""

import numpy as np
from streamlit.testing.v1 import AppTest

from core.sdpa_steps import VAR_SAMPLES, dot_product_variance
from tests.apptest_helpers import open_view

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it

SDPA = "sdpa_steps"


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


def test_sdpa_page_states_the_assumption_and_measures_the_variance():
    at = open_view(SDPA, {"sdk": "256", "keys": "8"})
    text = " ".join(m.value for m in at.markdown)
    assert "independent random numbers with mean 0 and variance 1" in text
    measured = next(m.value for m in at.markdown if "random pairs (q, k) at d_k = 256" in m.value)
    raw = float(measured.split("var(q·k) = ")[1].split(" ")[0])
    scaled = float(measured.split("var(q·k / √d_k) = ")[1].split(" ")[0])
    assert abs(raw / 256 - 1) < 0.15 and abs(scaled - 1) < 0.15
    # the cosine analogy, on the same pairs (tests/core/test_sdpa_steps.py checks the numbers)
    v = dot_product_variance(256, VAR_SAMPLES, seed=0)
    assert (
        f"‖q‖ averages {v.mean_norm:.2f} (√d_k = 16.00) and ‖q‖‖k‖ averages {v.mean_norm_product:.1f} (d_k = 256)"
        in text
    )
    assert f"The cosine's variance is {v.var_cosine:.4f} (1/d_k = 0.0039)" in text


def test_the_worked_lines_wrap_instead_of_hiding_their_results():
    """Each step's worked line (and the soft lookup's sum) ends in its result, and stands in a block half the page
    wide: drawn unwrapped, '= [15.9563, ...' and 'softmax(...) = [0.000204, 0.' ran past the block's edge behind a
    scroll bar, at 1280 px in every language."""
    at = open_view(SDPA)
    worked = [c for c in at.code if " = " in c.value and "table" not in c.value]
    assert len(worked) == 5, [c.value for c in at.code]  # the soft lookup's sum and the four steps
    assert all(c.proto.wrap_lines for c in worked), [c.value for c in worked if not c.proto.wrap_lines]
