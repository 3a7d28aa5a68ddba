"""What the /moe page shows about the checkpoints themselves, one object per part (core/moe/views.py has the
routing of the user's text).

    held_out_stats   one checkpoint on the fixed labelled held-out batch (the page caches it)
    specialisation   category shares per expert on that text
    comparison       the balanced and the collapsed checkpoint side by side (held-out loss, loads, training curve)
    real_models      published sizes of real MoE models and this repo's model
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from ..models import moe_model
from . import catalog, training
from .balance import BalanceBounds, balance_bounds
from .specialisation import category_lift, category_shares, top_categories


def held_out_stats(model) -> dict:
    """Held-out loss and, per layer, expert load and category counts of one checkpoint (moe_model.evaluate on the
    fixed held-out batch; a few seconds on CPU, so the page caches it per checkpoint)."""
    return model.evaluate(training.held_out_batch())


@dataclass
class Specialisation:
    """Which word categories each expert is chosen for, on the labelled held-out text, at one layer."""

    variant: str
    layer: int
    category_names: list[str]  # the categories the held-out text contains
    shares: np.ndarray  # (E, C): of the tokens routed to expert e, the share in category c
    lift: np.ndarray  # (E, C): that share over category c's overall share
    top: list[tuple[str, float, float]]  # per expert: (category, share, lift) it prefers; ("", 0, 0) if unused
    layer_load: list[float]  # (E,) share of assignments per expert at this layer
    held_out_tokens: int


def specialisation(stats: dict, variant: str, layer: int) -> Specialisation:
    """stats: held_out_stats of the checkpoint `variant`."""
    names = moe_model.category_names()
    counts = torch.tensor(stats["layers"][layer]["category_counts"], dtype=torch.float32)
    keep = counts.sum(0) > 0  # categories the held-out text contains (it has no [UNK])
    counts = counts[:, keep]
    shown = [n for n, k in zip(names, keep.tolist()) if k]
    return Specialisation(
        variant=variant,
        layer=layer,
        category_names=shown,
        shares=category_shares(counts).numpy(),
        lift=category_lift(counts).numpy(),
        top=top_categories(counts, shown),
        layer_load=list(stats["layers"][layer]["expert_load"]),
        held_out_tokens=int(stats["held_out_tokens"]),
    )


@dataclass
class CheckpointSummary:
    held_out_loss: float
    loads: np.ndarray  # (L, E) share of assignments per layer and expert, held-out text
    min_load: float
    max_load: float
    steps: list[int]  # training curve from the checkpoint's report
    lm_loss: list[float]


@dataclass
class Comparison:
    checkpoints: dict[str, CheckpointSummary]
    n_experts: int
    uniform_load: float  # 1/E
    bounds: BalanceBounds  # bounds.max_load = 1/k: no expert's share can exceed it (the colour scale's top)


def comparison(stats: Mapping[str, dict], reports: Mapping[str, dict], top_k: int) -> Comparison:
    """stats: variant -> held_out_stats; reports: variant -> the training report (loss curve); top_k of the model."""
    out = {}
    for v, s in stats.items():
        loads = np.array([lay["expert_load"] for lay in s["layers"]], dtype=np.float64)
        curve = reports[v].get("loss_curve", [])
        out[v] = CheckpointSummary(
            held_out_loss=float(s["held_out_loss"]),
            loads=loads,
            min_load=float(loads.min()),
            max_load=float(loads.max()),
            steps=[int(e["step"]) for e in curve],
            lm_loss=[float(e["lm_loss"]) for e in curve],
        )
    n_experts = next(iter(out.values())).loads.shape[1]
    return Comparison(out, n_experts, 1.0 / n_experts, balance_bounds(n_experts, top_k))


@dataclass
class RealModels:
    table: dict[str, list]  # catalog.moe_table(): published sizes and the computed fractions
    ours_total: int | None  # this repo's model: parameters, None without the checkpoint
    ours_active: int | None
    ours_fraction: float | None
    n_experts: int
    top_k: int


def real_models(model=None) -> RealModels:
    """The table of real MoE models, and this repo's model's counts when `model` (a MoEModel) is given."""
    arch = moe_model.ARCHITECTURE
    if model is None:
        return RealModels(catalog.moe_table(), None, None, None, arch["num_local_experts"], arch["num_experts_per_tok"])
    total, active = model.parameter_counts()
    return RealModels(
        catalog.moe_table(), total, active, catalog.active_fraction(active, total), model.n_experts, model.top_k
    )
