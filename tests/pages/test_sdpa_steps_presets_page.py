"""/sdpa-steps, the preloaded walkthroughs through AppTest: chosen from a link or the selector, at real width."""

from tests.apptest_helpers import open_view, shown_text

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it


def codes(at) -> str:
    return "\n".join(c.value for c in at.code)


def test_i_am_a_student_from_a_link():
    at = open_view("sdpa_steps", {"preset": "student"})
    shown = codes(at)
    assert "(64 products) … + 2×1 + 2×1 = 128" in shown and "128 × 0.125000 = 16" in shown
    assert "softmax([16, 12, 8, 14]) = [0.866561, 0.015872, 0.000291, 0.117276]" in shown
    assert "Shapes here: Q Kᵀ = (4 × 64)(64 × 4) = (4 × 4), that is 16 scores" in shown_text(at)
    assert at.session_state["dk"] == 64 and at.session_state["dv"] == 64 and at.query_params["preset"] == "student"
    assert any("SDPA agree" in s.value for s in at.success)


def test_nine_tokens_81_scores_and_the_all_ones_embedding():
    at = open_view("sdpa_steps", {"preset": "nine"})
    assert "(9 × 64)(64 × 9) = (9 × 9), that is 81 scores" in shown_text(at)
    assert "(1 × 64)(64 × 9)" in shown_text(at)
    at = open_view("sdpa_steps", {"preset": "ones"})
    shown = codes(at)
    assert "1×1 + 1×1 + 1×1 + 1×1 = 4" in shown and "4 × 0.500000 = 2" in shown
    assert "softmax([2, 2, 2, 2]) = [0.250000, 0.250000, 0.250000, 0.250000]" in shown


def test_choosing_a_walkthrough_loads_it_at_its_width_and_a_link_width_wins_on_arrival():
    at = open_view("sdpa_steps")
    assert "1×4 + 2×5 = 14" in codes(at) and at.session_state["dk"] == 2
    at.selectbox(key="preset").set_value("student").run()
    assert not at.exception and at.session_state["dk"] == 64 and "= 128" in codes(at)
    # a shared link with its own d_k: the walkthrough cut to 8 dimensions, 8 products 2×1
    at = open_view("sdpa_steps", {"preset": "student", "dk": "8", "dv": "2"})
    assert "q0 · k0 = " + " + ".join(["2×1"] * 8) + " = 16" in codes(at)
