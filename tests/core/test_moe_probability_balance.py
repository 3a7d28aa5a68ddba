"""The load-balancing loss on mean router probabilities, sum_e (mean P_e - 1/E)^2, beside the Switch loss: checked by
hand, and the router it calls balanced while top-k sends every token to the same experts."""

import numpy as np
import pytest
import torch

from core.moe import balance


def test_probability_loss_by_hand_and_zero_when_uniform():
    probs = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]])
    mean = np.array([0.4, 0.4, 0.2])
    assert float(balance.probability_balance_loss(probs)) == pytest.approx(((mean - 1 / 3) ** 2).sum(), rel=1e-6)
    assert float(balance.probability_balance_loss(torch.full((5, 4), 0.25))) == 0.0
    mask = torch.tensor([True, False])  # padding left out of the mean
    assert float(balance.probability_balance_loss(probs, mask)) == pytest.approx(
        ((np.array([0.7, 0.2, 0.1]) - 1 / 3) ** 2).sum(), rel=1e-6
    )


@pytest.mark.parametrize("n,k,eps", [(8, 2, 0.01), (4, 1, 0.05), (16, 4, 0.002)])
def test_a_router_the_probability_loss_calls_balanced_sends_everything_to_k_experts(n, k, eps):
    b = balance.dispatch_blind_example(n, k, eps)
    assert b.load == pytest.approx([1 / k] * k + [0.0] * (n - k))  # every assignment on the first k experts
    assert b.deviation == pytest.approx(n / k - 1)  # balance_bounds' largest deviation: as uneven as top-k allows
    assert b.probability_loss == pytest.approx(k * eps**2 + (n - k) * (k * eps / (n - k)) ** 2, rel=1e-4)
    assert b.switch_loss == pytest.approx(1 + n * eps, rel=1e-5)  # N * sum_i f_i P_i = N * k * (1/k) (1/N + eps)
    assert b.switch_grad == pytest.approx([n / k] * k + [0.0] * (n - k))  # N f_i
    assert b.probability_push == pytest.approx(2 * eps, rel=1e-4)  # 2 (P_e - 1/E): next to no push
    assert b.switch_push == pytest.approx(n / k)  # the page's largest push of each loss
    with pytest.raises(ValueError):
        balance.dispatch_blind_example(4, 1, 0.5)
