"""Positions are added to the input before W^Q, W^K and W^V, and W is what learns. One training step of the small
decoder of the extrapolation part (core/positions/extrapolation.py, the "most recent marker" task), measured:
how much each piece moved. A sinusoidal position vector is a formula of the position, not a parameter, so no step
changes it; W^Q (and the token embeddings) do change. A learned table is a parameter and moves with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch.optim.adam import adam

from .extrapolation import ExtrapolationConfig, PositionModel, marker_batch, sinusoidal_table


@dataclass(frozen=True)
class StepChange:
    kind: str  # "sinusoidal" or "learned"
    loss_before: float
    loss_after: float  # the same batch after the step
    w_q: float  # ||W^Q after - W^Q before|| / ||W^Q before||, first layer
    positions: float  # the same for the position vectors added to the input (0 when they are not parameters)
    tokens: float  # the same for the token embedding table
    lr: float  # Adam's learning rate (the training script's)


def _rel(after: torch.Tensor, before: torch.Tensor) -> float:
    return float((after - before).norm() / before.norm())


def _w_q(model: PositionModel) -> torch.Tensor:
    d = model.cfg.d_model
    return model.blocks[0].attn.qkv.weight[:d].detach().clone()  # rows 0 .. d-1 of the fused qkv projection


def _positions(model: PositionModel, n: int) -> torch.Tensor:
    if model.kind == "learned":
        return model.pos.weight[:n].detach().clone()
    return sinusoidal_table(n, model.cfg.d_model)


def adam_first_step(params: list[torch.nn.Parameter], lr: float) -> None:
    """What torch.optim.Adam(params, lr=lr).step() does to fresh parameters with their gradients, through torch's
    functional Adam (torch.optim.adam.adam, the update the optimizer calls) with the optimizer's defaults and
    fresh state. The optimizer object itself imports torch's compiler (torch._dynamo, sympy) on first use: 1.1 s of
    a fresh server's first /positions."""
    with torch.no_grad():
        adam(
            params,
            [p.grad for p in params],
            [torch.zeros_like(p, memory_format=torch.preserve_format) for p in params],  # exp_avg
            [torch.zeros_like(p, memory_format=torch.preserve_format) for p in params],  # exp_avg_sq
            [],  # max_exp_avg_sq (amsgrad off)
            [torch.tensor(0.0, dtype=torch.get_default_dtype()) for _ in params],  # step
            foreach=False,  # the optimizer's choice for CPU tensors
            amsgrad=False,
            beta1=0.9,
            beta2=0.999,
            lr=lr,
            weight_decay=0.0,
            eps=1e-8,
            maximize=False,
        )


@lru_cache(maxsize=4)
def one_step(kind: str = "sinusoidal", seed: int = 0) -> StepChange:
    """One Adam step (the training script's learning rate) on one batch of the marker task."""
    cfg = ExtrapolationConfig(seed=seed)
    torch.manual_seed(seed)
    model = PositionModel(cfg, kind)
    tokens, targets = marker_batch(cfg, cfg.train_length, cfg.batch, torch.Generator().manual_seed(seed + 1))
    n = tokens.shape[1]
    w_q, pos, tok = _w_q(model), _positions(model, n), model.tok.weight.detach().clone()
    loss = F.cross_entropy(model(tokens).reshape(-1, cfg.vocab), targets.reshape(-1))
    loss.backward()
    adam_first_step([p for p in model.parameters() if p.grad is not None], cfg.lr)
    with torch.no_grad():
        after = F.cross_entropy(model(tokens).reshape(-1, cfg.vocab), targets.reshape(-1)).item()
    return StepChange(
        kind,
        loss.item(),
        after,
        _rel(_w_q(model), w_q),
        _rel(_positions(model, n), pos),
        _rel(model.tok.weight.detach(), tok),
        cfg.lr,
    )
