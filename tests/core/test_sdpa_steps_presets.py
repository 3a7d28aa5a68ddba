"""core/sdpa_steps.py, the preloaded walkthroughs of /sdpa-steps at real width: every number of "i am a student"
(q·k = 128, / √64 → 16, softmax, reweighting) and of the all-ones embedding worked by hand; the 9-token sentence's
81 scores as 9 products (1 × 64)(64 × 9), against torch's SDPA."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.sdpa_steps import NINE_TOKENS, PRESETS, STUDENT_TOKENS, sdpa_steps, steps_view
from tests.references import assert_close_in_scale


def test_presets_are_named_and_sized():
    assert list(PRESETS) == ["classic", "student", "nine", "ones"]
    dims = {name: make().dims for name, make in PRESETS.items()}
    assert dims == {"classic": (2, 3), "student": (64, 64), "nine": (64, 64), "ones": (4, 4)}


def test_i_am_a_student_by_hand():
    p = PRESETS["student"]()
    assert p.tokens == STUDENT_TOKENS == ("i", "am", "a", "student") and p.q.shape == p.k.shape == (4, 64)
    s = sdpa_steps(p.q, p.k, p.v)
    # q_i · k_i: 64 products 2 × 1 = 128; divided by √64 = 8: 16
    assert s.scores[0, 0] == 128.0 and s.sqrt_d_k == 8.0 and s.scaled[0, 0] == 16.0
    # keys have 64, 48, 32, 56 leading ones and every query is twice its key: q_i · k_j = 2 × min(ones_i, ones_j)
    ones = [64, 48, 32, 56]
    np.testing.assert_array_equal(s.scores, [[2 * min(a, b) for b in ones] for a in ones])
    assert s.scaled[0].tolist() == [16.0, 12.0, 8.0, 14.0]
    # softmax of [16, 12, 8, 14] = [1, e^-4, e^-8, e^-2] / (1 + e^-4 + e^-8 + e^-2)
    z = 1 + math.exp(-4) + math.exp(-8) + math.exp(-2)
    expected = [1 / z, math.exp(-4) / z, math.exp(-8) / z, math.exp(-2) / z]
    np.testing.assert_allclose(s.weights[0], expected, rtol=1e-13)
    np.testing.assert_allclose(s.weights[0], [0.866561, 0.015872, 0.000291, 0.117276], atol=1e-6)
    # reweighting: value t is t + 1 everywhere, so every output entry of "i" is 1 w0 + 2 w1 + 3 w2 + 4 w3
    mix = sum((t + 1) * w for t, w in enumerate(expected))
    assert mix == pytest.approx(1.368282, abs=1e-6)
    np.testing.assert_allclose(s.output[0], np.full(64, mix), rtol=1e-13)
    assert s.max_abs_diff < 1e-12


def test_i_am_a_student_worked_lines_write_64_products_briefly():
    p = PRESETS["student"]()
    view = steps_view(p.q, p.k, p.v, tokens=p.tokens)
    assert view.lines["dot"] == "score[q0, k0] = q0 · k0 = 2×1 + 2×1 + 2×1 + … (64 products) … + 2×1 + 2×1 = 128"
    assert view.lines["scale"] == "128 × 0.125000 = 16"
    assert view.lines["softmax"] == "softmax([16, 12, 8, 14]) = [0.866561, 0.015872, 0.000291, 0.117276]"
    assert view.lines["mix"].endswith("= [1.36828, 1.36828, 1.36828, … (64 numbers) …, 1.36828, 1.36828]")
    assert view.q_labels == ["q0 i", "q1 am", "q2 a", "q3 student"] and view.k_labels[3] == "k3 student"
    assert view.d_k == 64 and view.n_scores == 16


def test_nine_tokens_make_81_scores_one_row_per_query():
    p = PRESETS["nine"]()
    assert p.tokens == NINE_TOKENS and len(NINE_TOKENS) == 9 and p.q.shape == (9, 64)
    assert np.array_equal(np.round(p.q * 10), p.q * 10)  # one decimal: typeable
    view = steps_view(p.q, p.k, p.v, tokens=p.tokens)
    s = view.steps
    assert s.scores.shape == (9, 9) and view.n_scores == 81
    for i in range(9):  # query i's row: one product (1 × 64)(64 × 9)
        row = p.q[i : i + 1] @ p.k.T
        assert row.shape == (1, 9)
        np.testing.assert_allclose(s.scores[i], row[0], rtol=1e-12)
    assert s.scores[0, 0] == pytest.approx(math.fsum(a * b for a, b in zip(p.q[0], p.k[0])), rel=1e-12)
    assert s.scale == 1 / 8
    q, k, v = (torch.tensor(m, dtype=torch.float32)[None, None] for m in (p.q, p.k, p.v))
    assert_close_in_scale(s.output, F.scaled_dot_product_attention(q, k, v)[0, 0].numpy(), what="9-token output")
    assert PRESETS["nine"]().q.tolist() == p.q.tolist()  # the fixed seed: the same sentence every time


def test_all_ones_embedding_by_hand():
    p = PRESETS["ones"]()
    s = sdpa_steps(p.q, p.k, p.v)
    assert (s.scores == 4.0).all()  # 1×1 + 1×1 + 1×1 + 1×1
    assert (s.scaled == 2.0).all()  # 4 / √4
    np.testing.assert_allclose(s.weights, 0.25, rtol=1e-15)  # e² / (4 e²): identical tokens, uniform weights
    np.testing.assert_allclose(s.output, 1.0, rtol=1e-15)
    assert s.max_abs_diff < 1e-15
