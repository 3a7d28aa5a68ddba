"""core/linear_attention/copy_task.py: the copy task of Katharopoulos et al. 2020 and the two attention layers
trained on it. The linear layer against a hand computation, causal linear attention against its recurrent form,
the softmax layer against an explicit masked softmax; the committed run's structure, and a rerun of its first
steps reproducing its first losses."""

import math

import numpy as np
import pytest
import torch

from core.linear_attention import linear_attention_rnn
from core.linear_attention.copy_task import (
    FIRST_STEPS_LOGGED,
    KINDS,
    SEP,
    CausalSelfAttention,
    CopyConfig,
    copy_accuracy,
    copy_batch,
    copy_loss,
    load_quality,
    quality_view,
    train,
)
from core.results import results_path


def phi(x: float) -> float:
    return x + 1 if x > 0 else math.exp(x)  # elu(x) + 1


def layer(kind: str, d_model=4, heads=1, seed=0) -> CausalSelfAttention:
    torch.manual_seed(seed)
    return CausalSelfAttention(d_model, heads, kind).double()


def test_linear_layer_equals_a_hand_computation():
    attn = layer("linear")
    x = torch.randn(1, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    w, b = attn.qkv.weight.detach().numpy(), attn.qkv.bias.detach().numpy()
    rows = [w @ x[0, i].numpy() + b for i in range(3)]  # (12,) each: q | k | v
    q, k, v = [r[:4] for r in rows], [r[4:8] for r in rows], [r[8:] for r in rows]
    mixed = []
    for i in range(3):  # out_i = sum_{j<=i} phi(q_i).phi(k_j) v_j / sum_{j<=i} phi(q_i).phi(k_j)
        sims = [sum(phi(a) * phi(c) for a, c in zip(q[i], k[j])) for j in range(i + 1)]
        mixed.append(sum(s * v[j] for j, s in enumerate(sims)) / sum(sims))
    wo, bo = attn.out.weight.detach().numpy(), attn.out.bias.detach().numpy()
    expected = np.array([wo @ m + bo for m in mixed])
    np.testing.assert_allclose(attn(x)[0].detach().numpy(), expected, rtol=1e-5)  # EPS = 1e-6 in the normaliser


def test_the_layers_causal_linear_attention_equals_its_recurrent_form():
    attn = layer("linear", d_model=8, heads=2)
    x = torch.randn(2, 7, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    q, k, v = attn.heads(x)
    y = attn(x)
    rnn = linear_attention_rnn(q, k, v)  # one token at a time with the state (S, z)
    expected = attn.out(rnn.transpose(1, 2).reshape(2, 7, 8))
    torch.testing.assert_close(y, expected, rtol=1e-10, atol=1e-12)
    # causal: changing the last token leaves every earlier output alone
    x2 = x.clone()
    x2[:, -1] += 1.0
    torch.testing.assert_close(attn(x2)[:, :-1], y[:, :-1])


def test_softmax_layer_equals_an_explicit_masked_softmax():
    attn = layer("softmax", d_model=8, heads=2)
    x = torch.randn(1, 5, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    q, k, v = attn.heads(x)
    scores = q @ k.transpose(-1, -2) / math.sqrt(4)
    scores = scores.masked_fill(~torch.ones(5, 5, dtype=torch.bool).tril(), float("-inf"))
    mixed = torch.softmax(scores, -1) @ v
    torch.testing.assert_close(attn(x), attn.out(mixed.transpose(1, 2).reshape(1, 5, 8)))
    with pytest.raises(ValueError):
        CausalSelfAttention(8, 2, "lsh")


def test_copy_batch_and_which_positions_are_scored():
    cfg = CopyConfig(length=5, batch=3)
    tokens = copy_batch(cfg, torch.Generator().manual_seed(0))
    assert tokens.shape == (3, 12) and cfg.n_positions == 12
    assert (tokens[:, 0] == SEP).all() and (tokens[:, 6] == SEP).all()
    assert torch.equal(tokens[:, 1:6], tokens[:, 7:12]) and (tokens[:, 1:6] >= 1).all()
    # logits that put all mass on the next token score 0 loss and 100 % accuracy, on the copy positions only
    logits = torch.full((3, 12, cfg.vocab), -1e4)
    logits[:, :-1].scatter_(-1, tokens[:, 1:, None], 0.0)
    assert copy_loss(logits, tokens, 5).item() == pytest.approx(0.0, abs=1e-6) and copy_accuracy(logits, tokens, 5) == 1
    uniform = torch.zeros(3, 12, cfg.vocab)
    assert copy_loss(uniform, tokens, 5).item() == pytest.approx(math.log(cfg.vocab), rel=1e-6)
    logits[:, :6] = 0.0  # the first copy is not scored: changing its predictions changes nothing
    assert copy_loss(logits, tokens, 5).item() == pytest.approx(0.0, abs=1e-6)


def test_quality_view_finds_when_each_kind_copies():
    curve = lambda losses: {"step": [1, 10, 20, 30], "loss": losses, "wall_s": [0.1, 1, 2, 3], "cpu_s": [0.1, 1, 2, 3]}  # noqa: E731
    data = {
        "curves": {"softmax": curve([2.3, 1.0, 0.05, 0.01]), "linear": curve([2.3, 2.0, 1.0, 0.2])},
        "final": {k: {"held_out_loss": 0.1, "held_out_copy_accuracy": 0.9} for k in KINDS},
        "chance_loss": 2.30259,
        "config": {},
    }
    data["curves"]["linear"]["cpu_s"] = [0.4, 4, 8, 12]
    view = quality_view(data)
    assert view.threshold == pytest.approx(0.05 * 2.30259)
    assert view.solved_step == {"softmax": 20, "linear": None} and view.verdict == "not_solved"
    assert view.slowdown == pytest.approx(4.0) and view.ms_per_step["softmax"] == pytest.approx(100.0)
    data["curves"]["linear"]["loss"][-1] = 0.09
    view = quality_view(data)
    assert view.solved_step["linear"] == 30 and view.solved_cpu_s["linear"] == 12
    assert view.verdict == "linear_later" and view.step_ratio == pytest.approx(1.5)
    # the page's "sequences of n tokens": as long as a batch the run trains on ([SEP] s [SEP] s)
    data["config"] = {"length": 5, "batch": 1, "unknown_key": 0}
    tokens = copy_batch(CopyConfig(length=5, batch=1), torch.Generator().manual_seed(0))
    assert quality_view(data).positions == tokens.shape[1] == 12


COMMITTED = load_quality()


@pytest.mark.skipif(COMMITTED is None, reason="results/linear_quality.json not committed yet")
def test_committed_run_has_its_curves_and_conditions():
    data = COMMITTED
    for key in ("command", "date", "loadavg_1min_before", "loadavg_1min_after", "seconds_cpu", "config", "final"):
        assert key in data, key
    assert data["command"].startswith("nice -n 5 python scripts/train_linear_quality.py")
    assert data["seconds_cpu"] <= 600  # the budget: at most 10 minutes of CPU
    assert data["chance_loss"] == pytest.approx(math.log(data["config"]["n_symbols"]), abs=1e-5)
    for kind in KINDS:
        c = data["curves"][kind]
        assert len(c["step"]) == len(c["loss"]) == len(c["wall_s"]) == len(c["cpu_s"])
        assert (
            c["step"][:FIRST_STEPS_LOGGED] == list(range(1, FIRST_STEPS_LOGGED + 1)) and c["step"][-1] == data["steps"]
        )
        assert all(np.diff(c["wall_s"]) >= 0) and all(np.diff(c["cpu_s"]) >= 0)
        assert c["loss"][0] == pytest.approx(math.log(data["config"]["n_symbols"] + 1), rel=0.15)  # near uniform
    assert results_path("linear_quality").is_file()


@pytest.mark.skipif(COMMITTED is None, reason="results/linear_quality.json not committed yet")
def test_a_rerun_of_the_first_steps_reproduces_the_committed_losses(one_torch_thread):
    cfg = CopyConfig(**COMMITTED["config"])
    rerun = train(cfg, 3, log_every=1000, eval_batches=1)
    for kind in KINDS:
        np.testing.assert_allclose(rerun["curves"][kind]["loss"], COMMITTED["curves"][kind]["loss"][:3], rtol=1e-3)
