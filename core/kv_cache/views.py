"""What the /kv-cache page draws, computed from a Generation: small arrays, pooled when long (core/pooling.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.pooling import bin_labels, block_mean, indexed_labels

from .eviction import POLICIES, kept_positions
from .generation import Generation


@dataclass
class StepAttention:
    """One step's query over every position, for one layer: all heads and their mean, columns pooled to at most
    max_cols bins (each the mean of its positions' weights); which bins each policy keeps (fraction)."""

    step: int
    layer: int
    position: int  # the query's position; columns cover 0 .. position
    weights: np.ndarray  # (heads, bins)
    mean: np.ndarray  # (bins,) mean over heads
    labels: list[str]  # one per bin
    pooled: bool
    kept: dict[str, np.ndarray]  # policy -> (bins,) fraction of the bin's positions the policy keeps
    prompt_length: int


def _clamp(value: int, lo: int, hi: int) -> int:
    return max(lo, min(int(value), hi))


def step_attention(gen: Generation, step: int, layer: int, max_cols: int = 96) -> StepAttention:
    step = _clamp(step, 0, len(gen.steps) - 1)
    layer = _clamp(layer, 0, gen.layers - 1)
    s = gen.steps[step]
    n = s.position + 1
    w = torch.from_numpy(s.attention[layer].astype(np.float32))[:, None, :]  # (heads, 1, n)
    pooled, _, edges = block_mean(w, None, 1, max_cols)  # (heads, 1, bins)
    weights = pooled[:, 0].numpy()
    membership = np.zeros((len(edges) - 1, n))
    for b, (a, e) in enumerate(zip(edges[:-1], edges[1:])):
        membership[b, a:e] = 1.0 / (e - a)
    kept = {}
    for policy in POLICIES:
        mask = np.zeros(n)
        mask[kept_positions(policy, s.position, gen.window, gen.sinks)] = 1.0
        mask[s.position] = 1.0  # the fed token always sees itself
        kept[policy] = membership @ mask
    return StepAttention(
        step=step,
        layer=layer,
        position=s.position,
        weights=weights,
        mean=weights.mean(axis=0),
        labels=bin_labels(indexed_labels(gen.tokens[:n]), edges),
        pooled=len(edges) - 1 < n,
        kept=kept,
        prompt_length=len(gen.prompt_ids),
    )


@dataclass
class History:
    """Every step's query (rows) over every position (columns, pooled), for one layer and one head or the mean
    over heads; cells right of a row's own position are masked (that token did not exist yet)."""

    weights: np.ndarray  # (steps, bins), NaN where masked
    masked: np.ndarray  # (steps, bins) bool
    row_labels: list[str]
    col_labels: list[str]


def history(gen: Generation, layer: int, head: int | None, max_cols: int = 96) -> History:
    layer = _clamp(layer, 0, gen.layers - 1)
    n = gen.steps[-1].position + 1
    rows = torch.zeros(len(gen.steps), n)
    hidden = torch.ones(len(gen.steps), n, dtype=torch.bool)
    for i, s in enumerate(gen.steps):
        a = s.attention[layer].astype(np.float32)  # (heads, position + 1)
        rows[i, : s.position + 1] = torch.from_numpy(
            a.mean(axis=0) if head is None else a[_clamp(head, 0, gen.heads - 1)]
        )
        hidden[i, : s.position + 1] = False
    pooled, _, edges = block_mean(rows, hidden, len(gen.steps), max_cols)
    labels = indexed_labels(gen.tokens[:n])
    return History(
        weights=pooled.numpy(),
        masked=np.isnan(pooled.numpy()),
        row_labels=[labels[s.position] for s in gen.steps],
        col_labels=bin_labels(labels, edges),
    )


def memory_curves(gen: Generation) -> dict[str, list[float]]:
    """Cache bytes after each step: measured on the tensors, the formula with the model's H_kv (GQA), the formula
    with H_kv = H (what multi-head attention would store), and what each eviction policy keeps."""
    context = [s.position + 1 for s in gen.steps]
    curves = {
        "context": [float(c) for c in context],
        "measured": [float(s.cache_bytes) for s in gen.steps],
        "gqa": [gen.formula_bytes(c) for c in context],
        "mha": [gen.formula_bytes(c, gen.heads) for c in context],
    }
    for policy in POLICIES:
        curves[policy] = [gen.formula_bytes(s.policies[policy]["kept"]) if s.policies else np.nan for s in gen.steps]
    return curves


def kl_curves(gen: Generation) -> dict[str, list[float]]:
    """KL(full || evicted) of the next-token distribution per step, per policy (0 where nothing was evicted)."""
    return {p: [float(s.policies[p]["kl"]) if p in s.policies else np.nan for s in gen.steps] for p in POLICIES}
