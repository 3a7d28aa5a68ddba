"""core/sdpa_steps.py, the engine of /sdpa-steps: every intermediate of the classic example worked out by hand here, the
result against torch's SDPA, input validation, and the sqrt(d_k) saturation demo against theory."""

import dataclasses
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.sdpa_steps import (
    CLASSIC_K,
    CLASSIC_Q,
    CLASSIC_V,
    MAX_ABS_INPUT,
    SAT_DKS,
    dot_product_variance,
    example_row,
    input_problems,
    random_scores,
    resize,
    saturation_view,
    sdpa_steps,
    softmax_entropy_vs_dk,
    steps_view,
)
from tests.references import assert_close_in_scale


def test_classic_example_every_intermediate_by_hand():
    s = sdpa_steps(CLASSIC_Q, CLASSIC_K, CLASSIC_V)
    # Q K^T: each entry a dot product, e.g. [1, 2] . [4, 5] = 1*4 + 2*5 = 14
    qk = np.array(
        [[1 * 4 + 2 * 5, 1 * 6 + 2 * 7, 1 * 8 + 2 * 9], [3 * 4 + 4 * 5, 3 * 6 + 4 * 7, 3 * 8 + 4 * 9]], dtype=float
    )
    assert qk.tolist() == [[14, 20, 26], [32, 46, 60]]
    np.testing.assert_array_equal(s.scores, qk)
    # scaling by 1 / sqrt(d_k), d_k = 2
    assert s.scale == pytest.approx(1 / math.sqrt(2), rel=1e-15)
    np.testing.assert_allclose(s.scaled, qk / math.sqrt(2), rtol=1e-14)
    np.testing.assert_allclose(s.scaled[0], [9.899494936611665, 14.142135623730951, 18.384776310850235], rtol=1e-12)
    # softmax row by row: exp(x_j) / sum_j exp(x_j), written out with math.exp
    for i in range(2):
        e = [math.exp(x) for x in (qk[i] / math.sqrt(2))]
        np.testing.assert_allclose(s.weights[i], [v / sum(e) for v in e], rtol=1e-12)
    # in closed form: neighbouring scores differ by a = 6/sqrt(2) (row 0) and 14/sqrt(2) (row 1), so each row
    # is [e^(-2a), e^(-a), 1] / (e^(-2a) + e^(-a) + 1)
    for i, gap in enumerate((6, 14)):
        a = gap / math.sqrt(2)
        z = math.exp(-2 * a) + math.exp(-a) + 1
        np.testing.assert_allclose(s.weights[i], [math.exp(-2 * a) / z, math.exp(-a) / z, 1 / z], rtol=1e-12)
    np.testing.assert_allclose(s.weights[0], [0.00020352, 0.0141632, 0.985633], atol=1e-6)
    # weighted sum of V rows: output[i] = sum_j w[i, j] * V[j]
    v = np.array(CLASSIC_V)
    for i in range(2):
        np.testing.assert_allclose(s.output[i], sum(s.weights[i, j] * v[j] for j in range(3)), rtol=1e-13)
    # V's rows step by 3, so output[i] = V[0] + 3 w[i,1] + 6 w[i,2]: 10 + 0.04249 + 5.91380 = 15.95629
    np.testing.assert_allclose(s.output[0], [15.95629, 16.95629, 17.95629], atol=1e-5)
    np.testing.assert_allclose(s.output[1], [15.99985, 16.99985, 17.99985], atol=1e-5)


def test_classic_example_matches_torch_sdpa_in_float32_and_float64():
    s = sdpa_steps(CLASSIC_Q, CLASSIC_K, CLASSIC_V)
    assert s.max_abs_diff < 1e-10 and s.matches_sdpa
    assert not dataclasses.replace(s, output=s.output + 1e-6).matches_sdpa  # the page's check then warns
    q, k, v = (torch.tensor(m, dtype=torch.float32)[None, None] for m in (CLASSIC_Q, CLASSIC_K, CLASSIC_V))
    ref32 = F.scaled_dot_product_attention(q, k, v)[0, 0].numpy()
    assert_close_in_scale(s.output, ref32, what="output (values near 18)")


def test_the_pages_sdpa_check_reads_torchs_own_sdpa(monkeypatch):
    """The page says the four steps are exactly what torch's SDPA computes: its reference must be torch's call, not
    the steps again (both give the same numbers, so only moving torch's result can tell). torch's output moved by
    2^-20 ~ 9.5e-7 must come back as sdpa_output and as the difference, and the check must then warn."""
    real = F.scaled_dot_product_attention
    shift = 2.0**-20
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **kw: real(*a, **kw) + shift)
    s = sdpa_steps(CLASSIC_Q, CLASSIC_K, CLASSIC_V)
    np.testing.assert_allclose(s.output[0], [15.95629, 16.95629, 17.95629], atol=1e-5)  # the steps: unmoved
    assert s.max_abs_diff == pytest.approx(shift, rel=1e-6) and not s.matches_sdpa


def test_random_shapes_match_sdpa():
    g = np.random.default_rng(0)
    for n_q, n_k, d_k, d_v in [(1, 1, 1, 1), (4, 6, 3, 5), (5, 2, 7, 1)]:
        q, k, v = g.normal(size=(n_q, d_k)), g.normal(size=(n_k, d_k)), g.normal(size=(n_k, d_v))
        s = sdpa_steps(q, k, v)
        assert s.scores.shape == s.weights.shape == (n_q, n_k) and s.output.shape == (n_q, d_v)
        np.testing.assert_allclose(s.weights.sum(1), 1.0, atol=1e-12)
        assert s.max_abs_diff < 1e-10


@pytest.mark.parametrize(
    "q,k,v,expected",
    [
        ([[1, 2]], [[1, 2, 3]], [[1]], ["qk_width"]),
        ([[1, 2]], [[1, 2], [3, 4]], [[1]], ["kv_rows"]),
        ([[1, 2]], [[1, 2, 3], [3, 4, 5]], [[1]], ["qk_width", "kv_rows"]),
        ([[1, None]], [[1, 2]], [[1]], ["not_numeric"]),
        ([[1, "x"]], [[1, 2]], [[1]], ["not_numeric"]),
        ([[1, float("inf")]], [[1, 2]], [[1]], ["not_finite"]),
        ([[1, 2 * MAX_ABS_INPUT]], [[1, 2]], [[1]], ["not_finite"]),
        (np.zeros((0, 2)), [[1, 2]], [[1]], ["empty"]),
        (CLASSIC_Q, CLASSIC_K, CLASSIC_V, []),
    ],
)
def test_input_problems(q, k, v, expected):
    assert input_problems(q, k, v) == expected
    if expected:
        with pytest.raises(ValueError):
            sdpa_steps(q, k, v)


def test_resize_keeps_numbers_and_pads_with_zeros():
    assert resize(CLASSIC_Q, 3, 1).tolist() == [[1.0], [3.0], [0.0]]
    assert resize(CLASSIC_V, 2, 4).tolist() == [[10, 11, 12, 0], [13, 14, 15, 0]]


def test_steps_view_of_the_classic_example_writes_out_query_0():
    view = steps_view(CLASSIC_Q, CLASSIC_K, CLASSIC_V)
    assert view.problems == [] and not view.truncated and view.d_k == 2
    assert (
        view.q_labels == ["q0", "q1"] and view.k_labels == ["k0", "k1", "k2"] and view.v_labels == ["V·0", "V·1", "V·2"]
    )
    assert view.lines["dot"] == "score[q0, k0] = q0 · k0 = 1×4 + 2×5 = 14"
    assert view.lines["scale"] == "14 × 0.707107 = 9.89949"
    assert view.lines["softmax"] == "softmax([9.89949, 14.1421, 18.3848]) = [0.000204, 0.014163, 0.985633]"
    assert view.lines["mix"].endswith("= [15.9563, 16.9563, 17.9563]")
    np.testing.assert_allclose(view.row_sums, 1.0, atol=1e-15)
    assert view.steps.sqrt_d_k == pytest.approx(math.sqrt(2))


def test_steps_view_reports_problems_with_the_sizes_that_disagree_and_never_raises():
    view = steps_view([[1.0, 2.0]], np.ones((4, 2)), np.ones((3, 3)))
    assert view.problems == [("kv_rows", 4, 3)] and view.steps is None
    view = steps_view([[1.0, 2.0, 3.0]], np.ones((3, 2)), np.ones((3, 3)))
    assert view.problems == [("qk_width", 3, 2)]
    view = steps_view(np.zeros((0, 2)), np.ones((2, 2)), np.ones((2, 1)))
    assert [p[0] for p in view.problems] == ["empty"] and view.steps is None
    view = steps_view(np.ones((20, 2)), np.ones((15, 2)), np.ones((15, 1)), max_rows=12)
    assert view.truncated and view.steps.scores.shape == (12, 12)


# --- sqrt(d_k) ------------------------------------------------------------------------------------------------


def test_random_scores_have_variance_d_k():
    gen = torch.Generator().manual_seed(0)
    for d_k in (1, 16, 256):
        raw = random_scores(d_k, 64, 400, gen)
        assert raw.var().item() == pytest.approx(d_k, rel=0.1)


def test_shortcut_scores_match_brute_force_dot_products():
    """random_scores draws |q| z instead of n_keys full key vectors; check it against explicit q.k_j with
    numpy's generator: same entropy (scaled and unscaled) up to sampling error."""
    d_k, n, samples = 64, 16, 3000
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((samples, 1, d_k)), rng.standard_normal((samples, n, d_k))
    raw = (q * k).sum(-1)

    def mean_entropy(s):
        p = np.exp(s - s.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        return float(-(p * np.log(np.clip(p, 1e-300, None))).sum(1).mean())

    sat = softmax_entropy_vs_dk([d_k], n_keys=n, seed=1, n_samples=samples)
    assert sat.entropy_unscaled[0] == pytest.approx(mean_entropy(raw), abs=0.03)
    assert sat.entropy_scaled[0] == pytest.approx(mean_entropy(raw / math.sqrt(d_k)), abs=0.02)


def test_saturation_without_scaling_and_stability_with_it():
    n = 16
    sat = softmax_entropy_vs_dk([1, 4, 16, 64, 256, 1024], n_keys=n, seed=0, n_samples=400)
    assert sat.max_entropy == pytest.approx(math.log(n))
    assert np.all(sat.entropy_scaled <= math.log(n)) and np.all(sat.entropy_unscaled >= 0)
    # d_k = 1: scaling by 1/sqrt(1) changes nothing
    assert sat.entropy_scaled[0] == pytest.approx(sat.entropy_unscaled[0], abs=1e-12)
    # without scaling the rows collapse towards one-hot as d_k grows
    assert np.all(np.diff(sat.entropy_unscaled) < 0)
    assert sat.entropy_unscaled[-1] < 0.15 and sat.max_weight_unscaled[-1] > 0.95
    # with scaling the scores are ~N(0, 1) whatever d_k: entropy stays within a narrow band
    assert np.ptp(sat.entropy_scaled[1:]) < 0.08


def test_scaled_entropy_matches_gaussian_logits_reference():
    """Independent reference: for large d_k the scaled scores are (by the CLT) i.i.d. N(0, 1), so the entropy
    should match softmax of Gaussian logits, estimated here with numpy's own generator."""
    n = 12
    rng = np.random.default_rng(123)
    z = rng.standard_normal((20000, n))
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    reference = float(-(p * np.log(p)).sum(1).mean())
    sat = softmax_entropy_vs_dk([256], n_keys=n, seed=5, n_samples=2000)
    assert sat.entropy_scaled[0] == pytest.approx(reference, abs=0.03)


def test_saturation_is_reproducible_and_validated():
    a = softmax_entropy_vs_dk([8, 32], n_keys=5, seed=3, n_samples=50)
    b = softmax_entropy_vs_dk([8, 32], n_keys=5, seed=3, n_samples=50)
    np.testing.assert_array_equal(a.entropy_unscaled, b.entropy_unscaled)
    with pytest.raises(ValueError):
        softmax_entropy_vs_dk([0], n_keys=5)
    with pytest.raises(ValueError):
        softmax_entropy_vs_dk([4], n_keys=0)


def test_example_row_softmaxes():
    row = example_row(64, 8, seed=1)
    np.testing.assert_allclose(
        row["weights_scaled"], np.exp(row["scores"] / 8) / np.exp(row["scores"] / 8).sum(), rtol=1e-12
    )
    s = row["scores"] - row["scores"].max()
    np.testing.assert_allclose(row["weights_unscaled"], np.exp(s) / np.exp(s).sum(), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("d_k", [1, 16, 256])
def test_dot_product_variance_is_d_k_and_one_after_scaling(d_k):
    """The claim on the page, under its stated assumption (entries of q and k independent, mean 0, variance 1):
    var(q·k) = d_k and var(q·k / sqrt(d_k)) = 1, on explicit vectors (not the |q| z shortcut)."""
    v = dot_product_variance(d_k, n_samples=20000, seed=3)
    assert v.var_raw == pytest.approx(d_k, rel=0.08)
    assert v.var_scaled == pytest.approx(1.0, rel=0.08)
    assert v.var_scaled == pytest.approx(v.var_raw / d_k, rel=1e-12)


@pytest.mark.parametrize("d_k", [1, 16, 256])
def test_the_cosine_analogy_against_the_chi_and_sphere_references(d_k):
    """|q| of d_k independent N(0, 1) entries follows the chi distribution, E|q| = sqrt(2) G((d+1)/2) / G(d/2)
    (about sqrt(d_k)); |q| |k| of two independent vectors averages (E|q|)^2 (about d_k, not sqrt(d_k)); the cosine
    of two independent isotropic directions has mean 0 and E cos^2 = 1 / d_k."""
    v = dot_product_variance(d_k, n_samples=20000, seed=3)
    chi_mean = math.sqrt(2) * math.exp(math.lgamma((d_k + 1) / 2) - math.lgamma(d_k / 2))
    assert v.mean_norm == pytest.approx(chi_mean, rel=0.02)
    assert v.mean_norm_product == pytest.approx(chi_mean**2, rel=0.03)
    assert v.var_cosine == pytest.approx(1 / d_k, rel=0.05)
    if d_k >= 16:  # sqrt(d_k) is one vector's length, and |q| |k| is about d_k: a factor sqrt(d_k) apart
        assert v.mean_norm == pytest.approx(math.sqrt(d_k), rel=0.05)
        assert v.mean_norm_product == pytest.approx(d_k, rel=0.05)


def test_the_assumption_matters():
    """Other entry distributions give other variances, as var(q·k) = d_k (s^4 + 2 s^2 m^2) predicts: dividing by
    sqrt(d_k) gives unit variance only for mean 0, variance 1."""
    d_k = 64
    wide = dot_product_variance(d_k, n_samples=20000, seed=4, std=2.0)
    assert wide.var_scaled == pytest.approx(16.0, rel=0.08)
    shifted = dot_product_variance(d_k, n_samples=20000, seed=5, mean=1.0)
    assert shifted.var_scaled == pytest.approx(3.0, rel=0.08)
    with pytest.raises(ValueError):
        dot_product_variance(0)


def test_saturation_view_puts_the_chosen_d_k_on_the_curve():
    view = saturation_view(100, 8, seed=0)
    assert 100 in view.curve.d_k.tolist() and set(SAT_DKS) <= set(view.curve.d_k.tolist())
    assert view.curve.d_k[view.index] == 100 and list(view.curve.d_k) == sorted(view.curve.d_k)
    assert view.key_labels == [f"k{j}" for j in range(8)] and view.row["scores"].shape == (8,)
    assert view.variance.d_k == 100 and view.variance.var_scaled == pytest.approx(1.0, rel=0.15)
    assert (view.root_d_k, view.inv_d_k) == (10.0, 0.01)  # the page's √d_k and 1/d_k at d_k = 100, by hand
