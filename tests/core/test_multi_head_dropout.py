"""Attention dropout on one row of weights (core/multi_head.py dropout_row) against torch's dropout semantics."""

from types import SimpleNamespace

import pytest
import torch

from core import multi_head as mh


def weights(n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(n, n, generator=g), -1)


def test_training_row_follows_torch_dropout_and_evaluation_is_the_row():
    w, p = weights(), 0.3
    r = mh.dropout_row(w, 2, p, seed=4)
    torch.testing.assert_close(torch.tensor(r.evaluation), w[2])
    # torch's dropout: zeros, and survivors multiplied by 1 / (1 - p) (inverted dropout)
    ref = torch.nn.functional.dropout(torch.ones(10_000), p, training=True)
    scale = float(ref[ref != 0][0])
    assert scale == pytest.approx(1 / (1 - p))
    for kept, dropped, value in zip(r.evaluation, r.dropped, r.training):
        assert value == (0.0 if dropped else pytest.approx(kept * scale))
    # nn.Dropout in evaluation is the identity: what the page's model (eval mode) computes
    layer = torch.nn.Dropout(p).eval()
    torch.testing.assert_close(layer(w[2]), w[2])
    assert sum(r.evaluation) == pytest.approx(1.0, abs=1e-6) and r.training_sum != pytest.approx(1.0, abs=1e-3)


def test_the_pages_example_is_the_last_tokens_row_at_the_models_dropout():
    w = torch.stack([weights(4, seed) for seed in range(2)])  # (H, n, n) of a walk over 4 tokens
    walk = SimpleNamespace(weights=w, tokens=["[CLS]", "a", "b", "[SEP]"], attention_dropout=0.1)
    r = mh.last_token_dropout(walk, head=1)
    assert (r.query, r.p) == (3, 0.1) and r.evaluation == w[1, 3].tolist() and r.drops
    none = mh.last_token_dropout(SimpleNamespace(**{**vars(walk), "attention_dropout": 0.0}), head=1)
    assert not none.drops and none.training == none.evaluation  # no dropout: training's row is evaluation's


def test_training_row_is_the_row_on_average():
    w, p = weights(8, 1), 0.1
    mean = torch.stack([torch.tensor(mh.dropout_row(w, 5, p, seed=s).training) for s in range(4000)]).mean(0)
    torch.testing.assert_close(mean, w[5], atol=0.01, rtol=0.05)
    share = sum(sum(mh.dropout_row(w, 5, p, seed=s).dropped) for s in range(4000)) / (4000 * 8)
    assert share == pytest.approx(p, abs=0.01)
    with pytest.raises(ValueError):
        mh.dropout_row(w, 0, 1.0)
