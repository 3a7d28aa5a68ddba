"""exp(q·k) factors through an infinite feature map: the explicit Taylor features against the scalar series and a
hand-written sum, convergence to exp within the Lagrange remainder bound, the coordinate count, Performer's positive
random features as an unbiased estimate, and the page's view (errors fall to 0 as the order grows)."""

import math

import pytest
import torch

from core.linear_attention import exp_kernel as ek


def pair(d=3, scale=0.7, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(5, d, generator=g, dtype=torch.float64) * scale for _ in range(2))


@pytest.mark.parametrize("d,order", [(1, 6), (2, 5), (3, 4)])
def test_taylor_features_dot_product_is_the_truncated_series(d, order):
    q, k = pair(d)
    phi_q, phi_k = ek.taylor_features(q, order), ek.taylor_features(k, order)
    assert phi_q.shape == (5, ek.taylor_feature_count(d, order))
    torch.testing.assert_close(phi_q @ phi_k.T, ek.taylor_kernel(q, k, order), rtol=1e-12, atol=1e-12)
    x = float(q[0] @ k[1])  # hand-written series for one pair
    assert float(phi_q[0] @ phi_k[1]) == pytest.approx(sum(x**m / math.factorial(m) for m in range(order + 1)))


def test_feature_count_is_a_geometric_sum():
    assert ek.taylor_feature_count(4, 0) == 1
    assert ek.taylor_feature_count(4, 3) == 1 + 4 + 16 + 64
    assert ek.taylor_feature_count(1, 7) == 8
    with pytest.raises(ValueError):
        ek.taylor_features(torch.zeros(2, 3), -1)


def test_truncated_series_converges_to_exp_within_the_remainder_bound():
    q, k = pair(4, scale=1.0)
    x = q @ k.T
    exact = torch.exp(x)
    previous = None
    for order in range(0, 25):
        err = (ek.taylor_kernel(q, k, order) - exact).abs()
        bound = x.abs() ** (order + 1) * torch.exp(x.abs()) / float(math.factorial(order + 1))  # Lagrange
        assert (err <= bound * (1 + 1e-9) + 1e-14 * exact).all(), order  # + float64 rounding of the sum
        worst = float(err.max())
        if order >= 8:  # past |x|, every further term shrinks the error
            assert worst < previous
        previous = worst
    # the alternating series for negative x loses a few digits to cancellation: absolute tolerance
    torch.testing.assert_close(ek.taylor_kernel(q, k, 30), exact, rtol=1e-13, atol=1e-12)


def test_random_features_are_positive_and_unbiased():
    q, k = pair(3, scale=0.4)
    w = torch.randn(7, 3, dtype=torch.float64)
    assert (ek.random_features(q, w) > 0).all()
    estimate = ek.random_feature_kernel(q, k, 200_000, seed=3)
    torch.testing.assert_close(estimate, torch.exp(q @ k.T), rtol=0.02, atol=0)
    torch.testing.assert_close(estimate, ek.random_feature_kernel(q, k, 200_000, seed=3))  # seeded: reproducible


def test_attention_weights_of_exp_are_softmax():
    s = torch.randn(4, 6, dtype=torch.float64)
    torch.testing.assert_close(ek.attention_weights(torch.exp(s)), torch.softmax(s, dim=-1))


@pytest.mark.parametrize("d,spread", [(2, 0.25), (4, 1.0), (16, 1.5), (64, 1.5)])
def test_view_errors_fall_with_the_order(d, spread):
    v = ek.exp_kernel_view(d, spread)
    assert v.taylor_counts == [ek.taylor_feature_count(d, m) for m in v.orders]
    assert len(v.random_error) == len(v.random_counts)
    tail = [e if e is not None else 0.0 for e in v.taylor_error[-6:]]
    assert all(b <= a for a, b in zip(tail, tail[1:]))  # high orders: monotone towards softmax
    assert tail[-1] < 1e-5
    m = v.order_needed
    assert m is not None and all((e or 0.0) < v.target for e in v.taylor_error[m:])
    assert m == 0 or v.taylor_error[m - 1] >= v.target
    assert v.largest_score > 0


def test_view_says_when_the_target_is_not_reached():
    v = ek.exp_kernel_view(16, 1.5, max_order=3)
    assert v.order_needed is None
