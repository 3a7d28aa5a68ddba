"""A Mixture-of-Experts feed-forward layer, step by step, in plain torch.

    logits  = h W_r^T                        router logits, one per expert          (T, E)
    probs   = softmax(logits)                router probabilities                   (T, E)
    top-k   = the k most probable experts    (indices, probabilities)               (T, k)
    gates   = top-k probs / their sum        renormalised so a token's gates sum to 1 (Mixtral)
    capacity: each expert takes at most C = ceil(capacity_factor * T * k / E) assignments; the rest are dropped
    out_t   = sum_j gates_tj * expert_{idx_tj}(h_t)   (a dropped assignment contributes nothing)
    expert_e(h) = W_down,e (silu(W_gate,e h) * (W_up,e h))        (SwiGLU, as in Mixtral)

`moe_forward` reproduces transformers' `MixtralSparseMoeBlock` from the same weights (tests/test_moe.py),
and adds what that block does not have: a capacity factor with dropped tokens.

Shapes: T tokens (batch and sequence flattened), E experts, k experts per token, d model width, I expert width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class Routing:
    """Where each token went and with what weight."""

    logits: torch.Tensor  # (T, E) router logits
    probs: torch.Tensor  # (T, E) softmax over experts
    top_k_index: torch.Tensor  # (T, k) chosen experts, most probable first
    top_k_probs: torch.Tensor  # (T, k) their router probabilities (before renormalisation)
    gates: torch.Tensor  # (T, k) weights that mix the expert outputs (0 where the assignment was dropped)
    kept: torch.Tensor  # (T, k) bool: False where the expert was full (capacity) and dropped it
    capacity: int | None  # assignments each expert may take; None = unlimited

    @property
    def n_experts(self) -> int:
        return self.probs.shape[-1]

    @property
    def top_k(self) -> int:
        return self.top_k_index.shape[-1]

    def chosen(self) -> torch.Tensor:
        """(T, E) bool: was expert e among token t's top-k (whether or not capacity then dropped it)."""
        mask = torch.zeros_like(self.probs, dtype=torch.bool)
        return mask.scatter(1, self.top_k_index, True)

    def dropped(self) -> torch.Tensor:
        """(T, E) bool: expert e was chosen by token t but was full."""
        mask = torch.zeros_like(self.probs, dtype=torch.bool)
        return mask.scatter(1, self.top_k_index, ~self.kept)


def router_logits(hidden: torch.Tensor, router_weight: torch.Tensor) -> torch.Tensor:
    """(T, d) x (E, d) -> (T, E): one score per expert (a linear layer without bias, as in Mixtral)."""
    return F.linear(hidden, router_weight)


def expert_capacity(n_tokens: int, n_experts: int, top_k: int, capacity_factor: float) -> int:
    """Assignments one expert may take: capacity_factor x its fair share (T * k / E), rounded up
    (Switch Transformer, eq. 3, with k assignments per token)."""
    return int(math.ceil(capacity_factor * n_tokens * top_k / n_experts))


def capacity_keep_mask(
    top_k_index: torch.Tensor, n_experts: int, capacity: int, token_mask: torch.Tensor | None = None
) -> torch.Tensor:
    """(T, k) bool: which assignments fit in their expert's `capacity`.

    Priority (as in GShard and Switch's implementation): every token's first choice is placed before any
    second choice, and within one rank earlier tokens go first. So a token loses its second expert before
    another token loses its first. Padding tokens (token_mask False) take no slot and are never kept.
    """
    T, k = top_k_index.shape
    valid = torch.ones(T, k, dtype=torch.bool) if token_mask is None else token_mask.bool()[:, None].expand(T, k)
    # Rank-major order: (rank 0, token 0..T-1), then (rank 1, token 0..T-1), ...
    order_index = top_k_index.T.reshape(-1)
    order_valid = valid.T.reshape(-1)
    one_hot = F.one_hot(order_index, n_experts) * order_valid[:, None]
    position_in_expert = one_hot.cumsum(0) - 1  # slot each assignment would take
    slot = (position_in_expert * one_hot).sum(-1)
    kept = order_valid & (slot < capacity)
    return kept.reshape(k, T).T


def route_tokens(
    logits: torch.Tensor,
    top_k: int,
    renormalize: bool = True,
    capacity_factor: float | None = None,
    token_mask: torch.Tensor | None = None,
) -> Routing:
    """Softmax, top-k, renormalisation (Mixtral) and, with a capacity factor, dropping of overflow."""
    logits = logits.reshape(-1, logits.shape[-1])
    probs = torch.softmax(logits.float(), dim=-1)  # in float32, like Mixtral's router
    top_probs, top_index = torch.topk(probs, top_k, dim=-1)
    gates = top_probs / top_probs.sum(-1, keepdim=True) if renormalize else top_probs
    n_tokens = logits.shape[0] if token_mask is None else int(token_mask.sum())
    if capacity_factor is None:
        capacity = None
        kept = torch.ones_like(top_index, dtype=torch.bool)
        if token_mask is not None:
            kept &= token_mask.bool().reshape(-1, 1)
    else:
        capacity = expert_capacity(n_tokens, probs.shape[-1], top_k, capacity_factor)
        kept = capacity_keep_mask(
            top_index, probs.shape[-1], capacity, None if token_mask is None else token_mask.reshape(-1)
        )
    # A dropped assignment contributes nothing; the token's other gates are NOT renormalised again, so its
    # output shrinks (it passes through the residual connection instead): that is what "dropped" costs.
    return Routing(logits, probs, top_index, top_probs, gates * kept, kept, capacity)


def swiglu_expert(hidden: torch.Tensor, gate_up_proj: torch.Tensor, down_proj: torch.Tensor) -> torch.Tensor:
    """One expert: (T, d) -> (T, d). gate_up_proj (2I, d) holds W_gate over W_up; down_proj (d, I)."""
    gate, up = F.linear(hidden, gate_up_proj).chunk(2, dim=-1)
    return F.linear(F.silu(gate) * up, down_proj)


def moe_forward(
    hidden: torch.Tensor,
    router_weight: torch.Tensor,
    gate_up_proj: torch.Tensor,
    down_proj: torch.Tensor,
    top_k: int,
    capacity_factor: float | None = None,
    token_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, Routing]:
    """The MoE feed-forward block. hidden (..., d); router_weight (E, d); gate_up_proj (E, 2I, d);
    down_proj (E, d, I) (Mixtral's layout). Returns the output (same shape as hidden) and the routing."""
    shape = hidden.shape
    flat = hidden.reshape(-1, shape[-1])
    routing = route_tokens(
        router_logits(flat, router_weight),
        top_k,
        capacity_factor=capacity_factor,
        token_mask=None if token_mask is None else token_mask.reshape(-1),
    )
    out = torch.zeros_like(flat)
    for e in range(router_weight.shape[0]):
        token, rank = torch.where((routing.top_k_index == e) & routing.kept)
        if token.numel() == 0:
            continue  # an expert nobody chose costs nothing: the point of sparse MoE
        y = swiglu_expert(flat[token], gate_up_proj[e], down_proj[e])
        out.index_add_(0, token, y * routing.gates[token, rank, None].to(y.dtype))
    return out.reshape(shape), routing


def dropped_share_by_capacity(
    top_k_index: torch.Tensor, n_experts: int, factors, token_mask: torch.Tensor | None = None
) -> list[float]:
    """For each capacity factor, the share of (real) assignments that would be dropped."""
    valid = None if token_mask is None else token_mask.reshape(-1)
    n_tokens = top_k_index.shape[0] if valid is None else int(valid.sum())
    total = max(1, n_tokens * top_k_index.shape[1])
    out = []
    for factor in factors:
        capacity = expert_capacity(n_tokens, n_experts, top_k_index.shape[1], float(factor))
        kept = capacity_keep_mask(top_k_index, n_experts, capacity, valid)
        out.append(1.0 - float(kept.sum()) / total)
    return out
