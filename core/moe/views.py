"""What each part of the /moe page shows, computed in one call per part and handed over as one object.

    text_routing     the user's text through every checkpoint, routed ONCE per checkpoint at the chosen layer
                     (the capacity factor only decides which of the top-k assignments are kept, so load, entropy
                     and the dropped-share curve all come from that one routing)
    specialisation   category shares per expert on the labelled held-out text
    comparison       the balanced and the collapsed checkpoint side by side (held-out loss, loads, training curve)
    real_models      published sizes of real MoE models and this repo's model

Arrays are numpy (what the figures and CSV exports take); nothing here draws or formats for a language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from ..models import moe_model
from . import catalog, training
from .balance import (
    BalanceBounds,
    balance_bounds,
    expert_counts,
    expert_load,
    router_entropy,
    switch_balance_loss,
    uniform_deviation_loss,
)
from .layer import dropped_share_by_capacity, route_tokens
from .specialisation import category_lift, category_shares, top_categories

CAPACITY_FACTORS = [round(0.25 * i, 2) for i in range(1, 17)]  # 0.25 .. 4.0 (= experts / k for 8 experts, top-2)
UNKNOWN_TOKEN = "[UNK]"


@dataclass
class TextRouting:
    """One text routed at one layer by the chosen checkpoint (and, for the comparison bars, by every checkpoint)."""

    variant: str
    layer: int
    capacity_factor: float
    n_experts: int
    top_k: int
    bounds: BalanceBounds  # largest values of the balance metrics for (n_experts, top_k)
    tokens: list[str]  # (T,) as the model reads them, [BOS] first
    n_text_tokens: int  # tokens of the whole text (more than T when it was cut)
    max_positions: int
    truncated: bool
    n_unknown: int  # words outside the vocabulary ([UNK])
    n_words: int  # tokens after [BOS]
    probs: np.ndarray  # (T, E) router probabilities
    chosen: np.ndarray  # (T, E) bool: among the token's top-k
    dropped: np.ndarray  # (T, E) bool: chosen, but the expert was full
    entropy: np.ndarray  # (T,) router entropy in nats
    load: np.ndarray  # (E,) share of the top-k assignments per expert (sums to 1)
    counts: np.ndarray  # (E,) assignments per expert
    switch_loss: float
    deviation: float
    mean_entropy: float
    capacity: int  # assignments an expert may take at this capacity factor
    capacity_share: float | None  # capacity / all assignments, None when >= 1 (no expert can overflow)
    n_assignments: int  # T * k
    n_dropped: int  # assignments dropped by capacity
    tokens_lost: int  # tokens whose every choice was dropped
    factors: list[float]  # capacity factors of the dropped-share curve
    dropped_by_factor: list[float]  # share of assignments dropped at each factor
    first_choice: list[list[str]]  # per expert: the distinct tokens whose first choice it is, sorted
    load_by_variant: dict[str, np.ndarray]  # every checkpoint's (E,) load on the same text and layer


def _run_text(model, text: str) -> tuple:
    """(tokens, n_text_tokens, truncated, router logits of every layer (T, E)) of one text through one model."""
    batch = model.tokenize([text])
    trace = model.run(batch)
    n_text_tokens = len(model.tokenizer(text)["input_ids"])
    return batch.tokens[0], n_text_tokens, bool(batch.truncated[0]), trace.router_logits


def text_routing(
    models: Mapping[str, object],
    variant: str,
    text: str,
    layer: int,
    capacity_factor: float,
    factors: list[float] = CAPACITY_FACTORS,
) -> TextRouting | None:
    """Everything the routing part shows for `text` at `layer`; None for a blank text. models: variant -> MoEModel
    (each runs the text once); `variant` is the checkpoint whose routing is shown in detail."""
    if not str(text or "").strip():
        return None
    model = models[variant]
    n_experts, top_k = model.n_experts, model.top_k
    runs = {v: _run_text(m, text) for v, m in models.items()}
    tokens, n_text_tokens, truncated, logits = runs[variant]
    routing = route_tokens(logits[layer], top_k, capacity_factor=capacity_factor)
    first = routing.top_k_index[:, 0].tolist()
    # Top-k choices do not depend on capacity: the other checkpoints' loads need no capacity factor.
    load_by_variant = {
        v: expert_load(
            routing.top_k_index if v == variant else route_tokens(run[3][layer], top_k).top_k_index, n_experts
        )
        for v, run in runs.items()
    }
    load = load_by_variant[variant]
    n_assignments = routing.kept.numel()
    entropy = router_entropy(routing.probs)
    return TextRouting(
        variant=variant,
        layer=layer,
        capacity_factor=capacity_factor,
        n_experts=n_experts,
        top_k=top_k,
        bounds=balance_bounds(n_experts, top_k),
        tokens=list(tokens),
        n_text_tokens=n_text_tokens,
        max_positions=model.max_positions,
        truncated=truncated,
        n_unknown=sum(t == UNKNOWN_TOKEN for t in tokens[1:]),
        n_words=len(tokens) - 1,
        probs=routing.probs.numpy(),
        chosen=routing.chosen().numpy(),
        dropped=routing.dropped().numpy(),
        entropy=entropy.numpy(),
        load=load.numpy(),
        counts=expert_counts(routing.top_k_index, n_experts).numpy(),
        switch_loss=float(switch_balance_loss(routing.probs, routing.top_k_index)),
        deviation=float(uniform_deviation_loss(load)),
        mean_entropy=float(entropy.mean()),
        capacity=int(routing.capacity),
        capacity_share=routing.capacity / n_assignments if routing.capacity < n_assignments else None,
        n_assignments=int(n_assignments),
        n_dropped=int((~routing.kept).sum()),
        tokens_lost=int((~routing.kept.any(-1)).sum()),
        factors=list(factors),
        dropped_by_factor=dropped_share_by_capacity(routing.top_k_index, n_experts, factors),
        first_choice=[sorted({tokens[i] for i, f in enumerate(first) if f == e}) for e in range(n_experts)],
        load_by_variant={v: x.numpy() for v, x in load_by_variant.items()},
    )


def held_out_stats(model) -> dict:
    """Held-out loss and, per layer, expert load and category counts of one checkpoint (training.evaluate on the
    fixed held-out batch; a few seconds on CPU, so the page caches it per checkpoint)."""
    return training.evaluate(model.model, training.held_out_batch())


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
    total, active = moe_model.parameter_counts(model.model)
    return RealModels(
        catalog.moe_table(), total, active, catalog.active_fraction(active, total), model.n_experts, model.top_k
    )
