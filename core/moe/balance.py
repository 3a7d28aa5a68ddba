"""How evenly a router spreads tokens over experts: expert load, the Switch balance loss, the deviation from a
uniform load, router entropy, and the largest values these metrics can take under top-k routing.

    f_i  share of all token-to-expert assignments that went to expert i    (sums to 1; f_i <= 1/k, see below)
    P_i  router probability of expert i averaged over tokens               (sums to 1)

Why f_i <= 1/k: a token chooses k DISTINCT experts, so of the T * k assignments an expert receives at most T.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..sdpa import entropy


@dataclass(frozen=True)
class BalanceBounds:
    """Ranges of the balance metrics for N experts and top-k routing (k distinct experts per token)."""

    n_experts: int
    top_k: int
    max_load: float  # 1/k: the largest share of assignments one expert can take
    switch_uniform: float  # 1.0: the Switch loss of a perfectly uniform router
    switch_max: float  # N/k: every token picks one same expert with probability 1
    deviation_max: float  # N/k - 1: k experts share all assignments equally, the others get none
    entropy_max: float  # log N nats: a router that cannot decide


def balance_bounds(n_experts: int, top_k: int) -> BalanceBounds:
    """The largest values of the balance metrics under top-k routing.

    Switch loss N * sum_i f_i P_i: since P sums to 1, sum_i f_i P_i <= max_i f_i <= 1/k, so the loss is at most N/k.
    Deviation N * sum_i (f_i - 1/N)^2 is convex in f, so its maximum over {0 <= f_i <= 1/k, sum f_i = 1} is at a
    vertex of that set: k shares of 1/k and N - k zeros, giving N * (k (1/k - 1/N)^2 + (N - k)/N^2) = N/k - 1.
    Both are reached: every token sends its k choices to the same k experts (the first with probability 1).
    For 8 experts and top-2: 4 and 3 (top-1 would give N and N - 1)."""
    if not 1 <= top_k <= n_experts:
        raise ValueError(f"need 1 <= top_k <= n_experts, got top_k={top_k}, n_experts={n_experts}")
    return BalanceBounds(
        n_experts=n_experts,
        top_k=top_k,
        max_load=1.0 / top_k,
        switch_uniform=1.0,
        switch_max=n_experts / top_k,
        deviation_max=n_experts / top_k - 1.0,
        entropy_max=math.log(n_experts),
    )


def expert_load(top_k_index: torch.Tensor, n_experts: int, token_mask: torch.Tensor | None = None) -> torch.Tensor:
    """(E,) f_i: the share of all token-to-expert assignments that went to expert i (sums to 1).
    For top-1 this is Switch Transformer's "fraction of tokens dispatched to expert i"."""
    counts = expert_counts(top_k_index, n_experts, token_mask)
    return counts / counts.sum().clamp_min(1)


def expert_counts(top_k_index: torch.Tensor, n_experts: int, token_mask: torch.Tensor | None = None) -> torch.Tensor:
    """(E,) how many assignments each expert received (padding tokens excluded)."""
    index = top_k_index.reshape(-1, top_k_index.shape[-1])
    weight = torch.ones_like(index, dtype=torch.float32)
    if token_mask is not None:
        weight = weight * token_mask.reshape(-1, 1).float()
    return torch.zeros(n_experts).scatter_add_(0, index.reshape(-1), weight.reshape(-1))


def mean_router_probs(probs: torch.Tensor, token_mask: torch.Tensor | None = None) -> torch.Tensor:
    """(E,) P_i: the router probability of expert i averaged over tokens (the differentiable part)."""
    probs = probs.reshape(-1, probs.shape[-1]).float()
    if token_mask is None:
        return probs.mean(0)
    w = token_mask.reshape(-1, 1).float()
    return (probs * w).sum(0) / w.sum().clamp_min(1)


def switch_balance_loss(
    probs: torch.Tensor, top_k_index: torch.Tensor, token_mask: torch.Tensor | None = None
) -> torch.Tensor:
    """Switch Transformer's auxiliary loss N * sum_i f_i * P_i (Fedus et al. 2021, eq. 4).

    1.0 when routing is uniform. Its largest value is N/k, not N: with top-k routing each token gives one of
    its k distinct choices to an expert at most, so f_i <= 1/k and N * sum_i f_i P_i <= N * max_i f_i <= N/k
    (reached when every token picks the same expert with probability 1; `balance_bounds`).
    f_i has no gradient (it counts argmax choices); the gradient flows through P_i, pushing probability
    away from over-used experts. transformers' Mixtral loss counts all k choices without normalising,
    so it equals k times this value (checked in tests)."""
    n_experts = probs.shape[-1]
    f = expert_load(top_k_index, n_experts, token_mask)
    p = mean_router_probs(probs, token_mask)
    return n_experts * (f * p).sum()


def uniform_deviation_loss(fractions: torch.Tensor) -> torch.Tensor:
    """N * sum_i (x_i - 1/N)^2 for shares x summing to 1: 0 when uniform, N - 1 if one expert could take all.
    It is the squared coefficient of variation of x (Shazeer et al. 2017 use it on expert importance).
    For expert loads under top-k routing no share exceeds 1/k, so the largest value is N/k - 1 (`balance_bounds`)."""
    n = fractions.shape[-1]
    return n * ((fractions - 1.0 / n) ** 2).sum(-1)


def probability_balance_loss(probs: torch.Tensor, token_mask: torch.Tensor | None = None) -> torch.Tensor:
    """sum_e (P_e - 1/E)^2 with P_e the router probability of expert e averaged over tokens: 0 when the mean
    probabilities are uniform. It sees only probabilities, never which k experts each token is dispatched to
    (the top-k choice has no gradient), so a router can score 0 while every token goes to the same k experts:
    `dispatch_blind_example`. The Switch loss N sum_i f_i P_i puts the dispatched share f_i beside P_i, and its
    gradient N f_i pushes probability away from exactly the experts that were chosen."""
    p = mean_router_probs(probs, token_mask)
    return ((p - 1.0 / probs.shape[-1]) ** 2).sum()


@dataclass(frozen=True)
class DispatchBlind:
    """Every token with almost uniform router probabilities, a little higher on experts 0 .. k-1 (by eps): top-k
    sends every token to those same k experts, yet the mean probabilities are almost uniform."""

    n_experts: int
    top_k: int
    eps: float
    load: list[float]  # f_i: all assignments on the first k experts
    probability_loss: float  # sum_e (P_e - 1/E)^2: close to 0, "balanced"
    switch_loss: float  # N sum f_i P_i: close to 1 in value too, but ...
    probability_grad: list[float]  # d(probability loss)/d P_e: about 2 eps, almost no push
    switch_grad: list[float]  # d(Switch loss)/d P_e = N f_e: a push of N/k on each chosen expert
    deviation: float  # N sum (f_i - 1/N)^2 = N/k - 1: the dispatch is as uneven as top-k allows

    @property
    def probability_push(self) -> float:
        """The largest d(probability loss)/d P_e: how hard that loss pushes any expert (about 2 eps)."""
        return max(self.probability_grad)

    @property
    def switch_push(self) -> float:
        """The largest d(Switch loss)/d P_e: N/k, on each of the k chosen experts."""
        return max(self.switch_grad)


def dispatch_blind_example(n_experts: int = 8, top_k: int = 2, eps: float = 0.01, tokens: int = 16) -> DispatchBlind:
    if not 0 < eps < 1.0 / n_experts or not 1 <= top_k < n_experts:
        raise ValueError("need 0 < eps < 1/E and 1 <= k < E")
    row = torch.full((n_experts,), 1.0 / n_experts, dtype=torch.float64)
    row[:top_k] += eps
    row[top_k:] -= eps * top_k / (n_experts - top_k)  # still sums to 1
    probs = row.expand(tokens, n_experts).clone()
    top = probs.detach().topk(top_k, dim=-1).indices
    p_loss = probability_balance_loss(probs)
    s_loss = switch_balance_loss(probs, top)
    load = expert_load(top, n_experts)
    p = mean_router_probs(probs).detach().clone().requires_grad_(True)  # the gradients with respect to P_e
    p_grad = torch.autograd.grad(((p - 1.0 / n_experts) ** 2).sum(), p)[0]
    s_grad = torch.autograd.grad(n_experts * (load * p).sum(), p)[0]
    return DispatchBlind(
        n_experts=n_experts,
        top_k=top_k,
        eps=eps,
        load=load.tolist(),
        probability_loss=float(p_loss),
        switch_loss=float(s_loss),
        probability_grad=p_grad.tolist(),
        switch_grad=s_grad.tolist(),
        deviation=float(uniform_deviation_loss(load)),
    )


def router_entropy(probs: torch.Tensor) -> torch.Tensor:
    """(T,) entropy in nats of each token's router distribution: 0 = certain, log E = undecided."""
    return entropy(probs.float())
