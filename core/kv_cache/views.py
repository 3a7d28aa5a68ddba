"""What the /kv-cache page draws and says, computed from a Generation: one view object per panel (the
continuation, one step's attention, its next-token candidates, every step's attention, the cache's memory, the
KL divergence of eviction), numbers of the captions included; small arrays, pooled when long (core/pooling.py).
viz/kv_cache.py draws them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.pooling import bin_labels, block_mean, indexed_labels
from core.timing import human_bytes

from .eviction import POLICIES, visible_positions
from .generation import Generation


@dataclass(frozen=True)
class Continuation:
    """The prompt and what was generated after it."""

    prompt: str
    generated: str
    n_prompt: int
    n_new: int
    greedy: bool  # greedy decoding: the same tokens as decoding without any cache (a test checks it)
    stopped_at_eos: bool
    full_pass_difference: float  # every step's weights against one pass over the whole text (measured now)


def continuation(gen: Generation) -> Continuation:
    n = len(gen.prompt_ids)
    return Continuation(
        "".join(gen.tokens[:n]),
        "".join(gen.tokens[n:]),
        n,
        len(gen.steps),
        gen.greedy,
        gen.stopped_at_eos,
        gen.full_pass_difference,
    )


# What a policy does to a bin's positions: keeps them all, evicts some of them (a pooled column mixes both), or
# evicts them all; a figure marks the last two (viz.kv_cache), so they are not told by the strip's colour alone.
KEPT, PARTLY_EVICTED, EVICTED = "kept", "partly_evicted", "evicted"


@dataclass(frozen=True)
class StepAttention:
    """One step's query over every position, for one layer: all heads and their mean, columns pooled to at most
    max_cols bins (each the mean of its positions' weights); which bins each policy keeps (fraction)."""

    step: int
    layer: int
    position: int  # the query's position; columns cover 0 .. position
    fed: str  # the token fed at this step (its display label)
    chosen: str  # the token its output picked
    weights: np.ndarray  # (heads, bins)
    mean: np.ndarray  # (bins,) mean over heads
    labels: list[str]  # one per bin
    pooled: bool
    kept: dict[str, np.ndarray]  # policy -> (bins,) fraction of the bin's positions the policy keeps
    prompt_length: int
    evicted: dict[str, tuple[str, ...]]  # policy -> per bin: KEPT, PARTLY_EVICTED or EVICTED (counted, not a share)

    @property
    def n(self) -> int:
        """Positions the query sees (before pooling)."""
        return self.position + 1

    @property
    def rows(self) -> np.ndarray:
        """(heads + 1, bins): every head's weights, then their mean; the step map's rows, in its figure and CSV."""
        return np.vstack([self.weights, self.mean[None]]).astype(np.float32)


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
    starts, sizes = np.asarray(edges[:-1]), np.diff(np.asarray(edges))
    kept, evicted = {}, {}
    for policy in POLICIES:
        mask = np.zeros(n, dtype=np.int64)
        mask[visible_positions(policy, s.position, gen.window, gen.sinks)] = 1  # the fed token sees itself
        count = np.add.reduceat(mask, starts)  # positions kept in each bin: whole numbers, exact
        kept[policy] = count / sizes
        evicted[policy] = tuple(EVICTED if c == 0 else PARTLY_EVICTED if c < size else KEPT
                                for c, size in zip(count.tolist(), sizes.tolist()))  # fmt: skip
    return StepAttention(
        step=step,
        layer=layer,
        position=s.position,
        fed=gen.tokens[s.position],
        chosen=gen.tokens[s.position + 1],
        weights=weights,
        mean=weights.mean(axis=0),
        labels=bin_labels(indexed_labels(gen.tokens[:n]), edges),
        pooled=len(edges) - 1 < n,
        kept=kept,
        prompt_length=len(gen.prompt_ids),
        evicted=evicted,
    )


@dataclass(frozen=True)
class PolicyOutcome:
    """One eviction policy at one step: keys the new token sees, entries evicted, the next-token candidates."""

    policy: str
    kept: int
    evicted: int
    kl: float  # KL(full || evicted) in nats
    top_tokens: list[str]
    top_probs: list[float]


@dataclass(frozen=True)
class NextTokens:
    """The TOP most likely next tokens at one step, with the full cache and with each policy's evicted one."""

    step: int
    top_tokens: list[str]
    top_probs: list[float]
    policies: tuple[PolicyOutcome, ...]
    ms: float  # the step's wall time
    eviction_ms: float  # the eviction comparisons' wall time, every step's together (one pass)
    steps: int  # steps generated
    eviction_rows: int  # (step, policy) pairs that evict something: the tokens of that one pass

    def outcome(self, policy: str) -> PolicyOutcome:
        return next(o for o in self.policies if o.policy == policy)


def next_tokens(gen: Generation, step: int) -> NextTokens:
    step = _clamp(step, 0, len(gen.steps) - 1)
    s = gen.steps[step]
    outcomes = tuple(
        PolicyOutcome(p, d["kept"], d["evicted"], float(d["kl"]), list(d["top_tokens"]), list(d["top_probs"]))
        for p, d in s.policies.items()
    )
    rows = sum(1 for t in gen.steps for outcome in t.policies.values() if outcome["evicted"])
    return NextTokens(
        step, list(s.top_tokens), list(s.top_probs), outcomes, s.ms, gen.eviction_ms, len(gen.steps), rows
    )


@dataclass(frozen=True)
class History:
    """Every step's query (rows) over every position (columns, pooled), for one layer and one head or the mean
    over heads; cells right of a row's own position are masked (that token did not exist yet)."""

    layer: int
    head: int | None  # None: the mean over heads
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
        layer=layer,
        head=None if head is None else _clamp(head, 0, gen.heads - 1),
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


@dataclass(frozen=True)
class Memory:
    """The cache's bytes as it grows (curves), and after the last step: measured and by the formula."""

    curves: dict[str, list[float]]  # see memory_curves
    measured: str  # human-readable bytes
    formula_gqa: str
    formula_mha: str
    per_token: str
    layers: int
    kv_heads: int
    heads: int
    head_dim: int
    bytes_per_value: int
    n: int  # positions in the cache after the last step

    @property
    def group(self) -> int:
        """Query heads per key/value head (1: multi-head attention, H: multi-query)."""
        return self.heads // self.kv_heads

    @property
    def sharing(self) -> str:
        """Which sentence names the sharing: "memory_gqa" when key/value heads are shared, else "memory_mha"."""
        return "memory_gqa" if self.kv_heads < self.heads else "memory_mha"


def memory(gen: Generation) -> Memory:
    last = gen.steps[-1]
    n = last.position + 1
    return Memory(
        curves=memory_curves(gen),
        measured=human_bytes(last.cache_bytes),
        formula_gqa=human_bytes(gen.formula_bytes(n)),
        formula_mha=human_bytes(gen.formula_bytes(n, gen.heads)),
        per_token=human_bytes(gen.formula_bytes(1)),
        layers=gen.layers,
        kv_heads=gen.kv_heads,
        heads=gen.heads,
        head_dim=gen.head_dim,
        bytes_per_value=gen.bytes_per_value,
        n=n,
    )


def kl_curves(gen: Generation) -> dict[str, list[float]]:
    """KL(full || evicted) of the next-token distribution per step, per policy (0 where nothing was evicted)."""
    return {p: [float(s.policies[p]["kl"]) if p in s.policies else np.nan for s in gen.steps] for p in POLICIES}


@dataclass(frozen=True)
class Eviction:
    """KL(full || evicted) per generated token and policy, with the window and sinks it was measured with."""

    kl: dict[str, list[float]]  # see kl_curves
    step_labels: list[str]  # the token fed at each step, after its position ('13 was'): unique, as plotly's
    # categories must be (a token fed twice, 'was', drew one category and the curve ran back to it)
    window: int
    sinks: int
    measured: bool = True  # False: the model's sliding-window layers evict by themselves, nothing was measured
    positions_note: str = "positions_note"  # catalog key: what the kept keys keep of their places (positions_note)

    @property
    def table(self) -> dict[str, list]:
        """The KL curves as columns beside the query of each step, as the figure's x axis names it."""
        return {"query": self.step_labels, **self.kl}


def positions_note(positions: str) -> str:
    """What a kept key keeps of its place in the text, by how the model encodes positions. RoPE: its rotation, so
    every distance is the true one. ALiBi (Bloom, the one ALiBi family the app reads): Bloom adds slope x (the
    count of keys present before it) to the scores (transformers' build_alibi_tensor, a cumsum of the padding
    mask), so a cache cut to the kept keys renumbers them 0 .. size - 1, as StreamingLLM does: a plain window's
    distances stay true (its keys are consecutive), a sink moves up to the window. Otherwise (a learned or
    sinusoidal table, or none): each entry was computed at its own place and the new token gets its own."""
    return {"rope": "positions_note", "alibi": "positions_note_alibi"}.get(positions, "positions_note_absolute")


def eviction(gen: Generation) -> Eviction:
    labels = indexed_labels(gen.tokens)
    return Eviction(
        kl_curves(gen), [labels[s.position] for s in gen.steps], gen.window, gen.sinks, gen.eviction_measured,
        positions_note(gen.positions),
    )  # fmt: skip


@dataclass(frozen=True)
class StepWork:
    """What the cache saves at one step: multiply-adds of the step with it and without it (the whole text again)."""

    step: int
    n: int  # tokens up to and including the one fed
    with_cache: int
    without: int

    @property
    def ratio(self) -> float:
        return self.without / self.with_cache


def step_work(gen: Generation, step: int) -> StepWork:
    step = _clamp(step, 0, len(gen.steps) - 1)
    position = gen.steps[step].position
    with_cache, without = gen.step_multiply_adds(position)
    return StepWork(step, position + 1, with_cache, without)


@dataclass(frozen=True)
class CacheAt:
    """The cache of this model once `context` tokens are in it, with its key/value heads and with multi-head
    attention's (one key/value head per query head); how many layers keep only a sliding window."""

    context: int
    bytes: float
    bytes_mha: float
    sliding_layers: int
    windows: tuple[int, ...]  # the distinct windows W of those layers

    @property
    def human(self) -> str:
        return human_bytes(self.bytes)

    @property
    def human_mha(self) -> str:
        return human_bytes(self.bytes_mha)


def cache_at(gen: Generation, context: int) -> CacheAt:
    windows = [w for w in gen.windows if w is not None]
    return CacheAt(
        context,
        gen.formula_bytes(context),
        gen.formula_bytes(context, gen.heads),
        len(windows),
        tuple(sorted(set(windows))),
    )
