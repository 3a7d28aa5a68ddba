"""core/sdpa_steps.py, Q, K, V as a lookup: a dict's hard lookup beside attention's soft one. The soft weights
against a hand computation and torch's SDPA; as the temperature goes to 0 the soft result tends to the dict's."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.sdpa_steps import LOOKUP_KEYS, LOOKUP_OTHER, LOOKUP_VALUES, hard_lookup, lookup_view, soft_lookup

NAMES = ["cat", "dog", "car", "bus"]


def unit(row):
    return [x / math.sqrt(sum(y * y for y in row)) for x in row]


def test_weights_are_softmax_by_hand_and_match_torch_sdpa():
    for qi in (0, 2, None):
        for tau in (0.05, 0.5, 2.0, 4.0):
            view = lookup_view(qi, tau, NAMES)
            keys = [unit(k) for k in LOOKUP_KEYS]
            q = keys[qi] if qi is not None else unit(LOOKUP_OTHER)
            scores = [sum(a * b for a, b in zip(q, k)) for k in keys]
            e = [math.exp((s - max(scores)) / tau) for s in scores]
            weights = [x / sum(e) for x in e]
            np.testing.assert_allclose(view.scores, scores, rtol=1e-12)
            np.testing.assert_allclose(view.weights, weights, rtol=1e-10, atol=1e-300)
            assert view.soft == pytest.approx(sum(w * v for w, v in zip(weights, LOOKUP_VALUES)), rel=1e-12)
            ref = F.scaled_dot_product_attention(
                torch.tensor([[q]], dtype=torch.float64),
                torch.tensor([keys], dtype=torch.float64),
                torch.tensor([[[v] for v in LOOKUP_VALUES]], dtype=torch.float64),
                scale=1 / tau,
            )
            assert view.sdpa == pytest.approx(ref.item(), rel=1e-12) and view.soft == pytest.approx(
                ref.item(), rel=1e-12
            )
            hand = None if qi is None else abs(sum(w * v for w, v in zip(weights, LOOKUP_VALUES)) - LOOKUP_VALUES[qi])
            assert view.gap == (None if hand is None else pytest.approx(hand, rel=1e-9, abs=1e-15))


def test_the_sdpa_result_the_page_quotes_is_torchs_own_call(monkeypatch):
    """The page writes the soft result beside torch's SDPA of the same q, K, V: that second number must be torch's
    call, not the soft result again (they agree to 1e-12, so only moving torch's result can tell). Moved by 2^-20,
    the SDPA number must carry the shift and the soft result must not."""
    before = lookup_view(2, 0.5, NAMES)
    real = F.scaled_dot_product_attention
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **kw: real(*a, **kw) + 2.0**-20)
    moved = lookup_view(2, 0.5, NAMES)
    assert moved.soft == before.soft and moved.sdpa == pytest.approx(before.sdpa + 2.0**-20, rel=1e-15)


def test_tau_sqrt_dk_is_plain_scaled_dot_product_attention():
    view = lookup_view(1, 2.0, NAMES)  # d_k = 4
    q, k = torch.tensor(view.query[None, None]), torch.tensor(view.keys[None])
    ref = F.scaled_dot_product_attention(q, k, torch.tensor(view.values[None, :, None]))  # default scale 1/sqrt(d_k)
    assert view.d_k == 4 and view.soft == pytest.approx(ref.item(), rel=1e-12)


@pytest.mark.parametrize("qi", range(4))
def test_soft_lookup_tends_to_the_dict_value_as_tau_goes_to_zero(qi):
    view = lookup_view(qi, 2.0, NAMES)
    assert view.hard == LOOKUP_VALUES[qi] and view.hard_weights.tolist() == [float(i == qi) for i in range(4)]
    gaps = [
        abs(soft_lookup(view.query, view.keys, view.values, tau)[2] - view.hard) for tau in (0.1, 0.03, 0.01, 0.003)
    ]
    assert all(b < a for a, b in zip(gaps, gaps[1:]))  # closer and closer
    assert gaps[2] < 1e-4 * view.hard
    # at attention's own temperature every value is mixed in with a weight of more than 10 %
    assert (view.weights > 0.1).all() and view.weights[qi] < 0.35
    # the curve the page draws ends (smallest tau first) at the dict's value
    assert view.taus[0] == 0.01 and view.soft_by_tau[0] == pytest.approx(view.hard, rel=1e-3)


def test_a_query_equal_to_no_key_is_a_key_error_for_the_dict_and_a_mix_for_attention():
    view = lookup_view(None, 2.0, NAMES)
    assert view.hard is None and not view.hard_weights.any()
    assert view.code.endswith("table[q]  # KeyError")
    # as tau -> 0 it tends to the value of the most similar key (cat: scores[0] is the largest)
    assert int(np.argmax(view.scores)) == 0
    assert soft_lookup(view.query, view.keys, view.values, 1e-4)[2] == pytest.approx(LOOKUP_VALUES[0], rel=1e-9)


def test_the_dict_compares_for_equality_not_similarity():
    keys, values = [unit(k) for k in LOOKUP_KEYS], LOOKUP_VALUES
    assert hard_lookup(keys[3], keys, values) == 40.0
    assert hard_lookup([x * 1.000001 for x in keys[3]], keys, values) is None  # almost equal is not equal


def test_code_and_mix_lines_and_validation():
    view = lookup_view(0, 0.5, NAMES)
    assert view.code == 'table = {"cat": 3, "dog": 5, "car": 20, "bus": 40}\ntable["cat"]  # → 3'
    assert view.mix.startswith("softmax(q·K / 0.5) · V = ") and view.mix.endswith(f"= {view.soft:.6g}")
    with pytest.raises(ValueError):
        lookup_view(0, 0.0, NAMES)
    with pytest.raises(ValueError):
        lookup_view(0, 1.0, NAMES[:3])
