"""What the routing part of the /moe page shows, computed in one call and handed over as one object
(core/moe/checkpoint_views.py has the parts about the checkpoints themselves).

    run_text         the user's text through one checkpoint (the model forward; the page caches it)
    text_routing     those runs routed ONCE per checkpoint at the chosen layer
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

from .balance import (
    BalanceBounds,
    DispatchBlind,
    balance_bounds,
    dispatch_blind_example,
    expert_counts,
    expert_load,
    probability_balance_loss,
    router_entropy,
    switch_balance_loss,
    uniform_deviation_loss,
)
from .layer import dropped_share_by_capacity, route_tokens

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
    probability_loss: float  # sum_e (mean P_e - 1/E)^2 on the same routing: blind to the top-k dispatch
    blind: DispatchBlind  # a router it calls balanced while every token goes to the same k experts
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


@dataclass
class TextRun:
    """One text through one checkpoint: what routing needs, without the model (cheap to cache and copy)."""

    tokens: list[str]  # (T,) as the model reads them, [BOS] first
    n_text_tokens: int  # tokens of the whole text (more than T when it was cut)
    truncated: bool
    router_logits: list[torch.Tensor]  # per layer, (T, E)
    n_experts: int
    top_k: int
    max_positions: int


def run_text(model, text: str) -> TextRun | None:
    """The model forward on `text` (the expensive step: the page caches it per checkpoint and text, so changing
    the layer or the capacity factor only re-routes); None for a blank text."""
    if not str(text or "").strip():
        return None
    batch = model.tokenize([text])
    # routing reads the router logits alone: no vocabulary logits, no residual-stream copies (the same router logits)
    trace = model.run(batch, logits=False, hidden_states=False)
    return TextRun(
        tokens=list(batch.tokens[0]),
        n_text_tokens=model.token_count(text),
        truncated=bool(batch.truncated[0]),
        router_logits=[x.detach() for x in trace.router_logits],
        n_experts=model.n_experts,
        top_k=model.top_k,
        max_positions=model.max_positions,
    )


def text_routing(
    runs: Mapping[str, TextRun | None],
    variant: str,
    layer: int,
    capacity_factor: float,
    factors: list[float] = CAPACITY_FACTORS,
) -> TextRouting | None:
    """Everything the routing part shows at `layer`, routing each checkpoint's run of the text ONCE; None for a
    blank text. runs: variant -> run_text of the same text; `variant` is the checkpoint shown in detail."""
    run = runs.get(variant)
    if run is None:
        return None
    n_experts, top_k, tokens = run.n_experts, run.top_k, run.tokens
    routing = route_tokens(run.router_logits[layer], top_k, capacity_factor=capacity_factor)
    first = routing.top_k_index[:, 0].tolist()
    # Top-k choices do not depend on capacity: the other checkpoints' loads need no capacity factor. In the order
    # of `runs`, so each checkpoint keeps its colour whichever is shown in detail.
    load_by_variant = {
        v: expert_load(
            routing.top_k_index if v == variant else route_tokens(r.router_logits[layer], top_k).top_k_index, n_experts
        )
        for v, r in runs.items()
        if r is not None
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
        n_text_tokens=run.n_text_tokens,
        max_positions=run.max_positions,
        truncated=run.truncated,
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
        probability_loss=float(probability_balance_loss(routing.probs)),
        blind=dispatch_blind_example(n_experts, top_k),
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
