"""core/positions/training_step.py: one training step, checked against an optimizer step done by hand here and
against which tensors are parameters."""

import torch
import torch.nn.functional as F

from core.positions import extrapolation as ex
from core.positions import training_step


def test_sinusoidal_positions_never_move_and_w_q_does():
    s = training_step.one_step("sinusoidal")
    assert s.positions == 0.0 and s.w_q > 1e-3 and s.tokens > 0 and s.loss_after < s.loss_before
    # the sinusoidal table is no parameter of the model: nothing an optimizer holds can change it
    model = ex.PositionModel(ex.ExtrapolationConfig(), "sinusoidal")
    assert not any(p.shape == (32, 64) for p in model.parameters())
    learned = training_step.one_step("learned")
    assert learned.positions > 0 and learned.lr == ex.ExtrapolationConfig().lr


def test_the_w_q_change_equals_a_first_adam_step_by_hand():
    """Adam's first step moves every entry by lr * g / (|g| + eps) (bias-corrected m = g, v = g^2): about lr per
    entry with a nonzero gradient. Recomputed here from the gradient."""
    cfg = ex.ExtrapolationConfig()
    torch.manual_seed(0)
    model = ex.PositionModel(cfg, "sinusoidal")
    tokens, targets = ex.marker_batch(cfg, cfg.train_length, cfg.batch, torch.Generator().manual_seed(1))
    F.cross_entropy(model(tokens).reshape(-1, cfg.vocab), targets.reshape(-1)).backward()
    d = cfg.d_model
    w, g = model.blocks[0].attn.qkv.weight[:d].detach(), model.blocks[0].attn.qkv.weight.grad[:d]
    step = cfg.lr * g / (g.abs() + 1e-8)
    assert abs(float(step.norm() / w.norm()) - training_step.one_step("sinusoidal").w_q) < 1e-4


def test_the_step_is_the_one_torch_optim_adam_takes():
    """adam_first_step (torch's functional Adam, without the optimizer object that imports torch's compiler) leaves
    every parameter exactly where torch.optim.Adam's first step does, on both kinds of model."""
    cfg = ex.ExtrapolationConfig()
    tokens, targets = ex.marker_batch(cfg, cfg.train_length, cfg.batch, torch.Generator().manual_seed(1))
    moved = []
    for by_optimizer in (True, False):
        torch.manual_seed(0)
        model = ex.PositionModel(cfg, "learned")
        F.cross_entropy(model(tokens).reshape(-1, cfg.vocab), targets.reshape(-1)).backward()
        if by_optimizer:
            torch.optim.Adam(model.parameters(), lr=cfg.lr).step()
        else:
            training_step.adam_first_step([p for p in model.parameters() if p.grad is not None], cfg.lr)
        moved.append([p.detach().clone() for p in model.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*moved, strict=True))
