"""The kernel trick run backwards (core/linear_attention/exp_kernel.py psd_view): a feature map exists only for a
similarity whose Gram matrices are positive semi-definite. PSD ones against explicit feature maps; the others
against a vector whose quadratic form is negative."""

import math

import pytest
import torch

from core.linear_attention import exp_kernel as ek


def points(n=12, d=4, seed=0):
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_psd_similarities_are_grams_of_explicit_feature_maps():
    x = points()
    outer = torch.einsum("na,nb->nab", x, x).reshape(len(x), -1)  # phi(x) = all products x_a x_b
    torch.testing.assert_close(ek.similarity_matrix(x, "square"), outer @ outer.T)
    phi = torch.nn.functional.elu(x) + 1
    torch.testing.assert_close(ek.similarity_matrix(x, "elu"), phi @ phi.T)
    # exp(q·k/sqrt d) = sum_m (q·k/sqrt d)^m / m!: a sum of PSD Gram matrices (Schur product theorem)
    s = x @ x.T / math.sqrt(4)
    series = sum(s**m / float(math.factorial(m)) for m in range(60))
    torch.testing.assert_close(ek.similarity_matrix(x, "exp"), series)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_view_rules_out_tanh_and_relu_of_the_dot_product(seed):
    rows = {r.kind: r for r in ek.psd_view(seed=seed)}
    assert rows["exp"].psd and rows["elu"].psd and rows["square"].psd
    assert not rows["tanh"].psd and not rows["relu_dot"].psd
    x = points(seed=seed)
    for kind in ("tanh", "relu_dot"):
        k = ek.similarity_matrix(x, kind)
        v = torch.linalg.eigh(k).eigenvectors[:, 0]
        assert float(v @ k @ v) < 0  # if s = phi(q)·phi(k), v^T K v = |sum_i v_i phi(x_i)|^2 could not be < 0
        assert float(v @ k @ v) == pytest.approx(rows[kind].min_eigenvalue)
