"""What each expert specialises in: counts of word categories per expert, their shares, and the lift over
each category's overall share (how much more often than chance an expert sees it)."""

from __future__ import annotations

import torch


def category_counts(
    top_k_index: torch.Tensor,
    categories: torch.Tensor,
    n_experts: int,
    n_categories: int,
    token_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """(E, C): how many tokens of each category each expert was chosen for (each of a token's k choices
    counts). categories: (T,) integer label per token."""
    index = top_k_index.reshape(-1, top_k_index.shape[-1])
    cats = categories.reshape(-1, 1).expand_as(index)
    weight = torch.ones_like(index, dtype=torch.float32)
    if token_mask is not None:
        weight = weight * token_mask.reshape(-1, 1).float()
    flat = (index * n_categories + cats).reshape(-1)
    counts = torch.zeros(n_experts * n_categories).scatter_add_(0, flat, weight.reshape(-1))
    return counts.reshape(n_experts, n_categories)


def category_shares(counts: torch.Tensor) -> torch.Tensor:
    """(E, C): of the tokens routed to expert e, the share in each category (rows sum to 1; 0 if unused)."""
    return counts / counts.sum(-1, keepdim=True).clamp_min(1)


def category_lift(counts: torch.Tensor) -> torch.Tensor:
    """(E, C): share of category c at expert e divided by c's share among all assignments.
    > 1: the expert sees more of that category than chance; 1: no preference."""
    base = counts.sum(0) / counts.sum().clamp_min(1)
    return torch.where(base > 0, category_shares(counts) / base.clamp_min(1e-12), torch.zeros_like(counts))


def top_categories(counts: torch.Tensor, names: list[str], min_share: float = 0.1) -> list[tuple[str, float, float]]:
    """Per expert: (category, its share, its lift) for the category the expert prefers most (highest lift)
    among those making up at least `min_share` of its tokens, so that a rare category seen a few times does
    not count as a speciality; if none is that frequent, its most frequent category. ("", 0, 0) if unused."""
    shares, lift = category_shares(counts), category_lift(counts)
    out = []
    for e in range(counts.shape[0]):
        if counts[e].sum() == 0:
            out.append(("", 0.0, 0.0))
            continue
        frequent = shares[e] >= min_share
        c = int(torch.argmax(torch.where(frequent, lift[e], -1.0))) if frequent.any() else int(torch.argmax(shares[e]))
        out.append((names[c], float(shares[e, c]), float(lift[e, c])))
    return out
