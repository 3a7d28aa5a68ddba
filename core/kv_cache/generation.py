"""Generation with the KV cache, one step per new token, everything the page shows recorded on the way.

Step k feeds one token, the one at position p = prompt_length - 1 + k (step 0 feeds the prompt's last token,
whose cache of p = prompt_length - 1 entries was filled by one prefill pass), on top of the cache of positions
0 .. p-1. Its query attends to p + 1 keys (its own included); its output is the distribution of the next token,
which is picked (greedy, or temperature + top-k with a seed) and fed at step k + 1.

The query and keys of every layer are recorded by the model's one hook layer (core/models/hooks.py: exactly
what transformers' SDPA receives, after RoPE, before K/V are repeated for GQA); the weights shown are recomputed
from them, softmax(q k^T * scale), so the forward pass itself is the model's own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from ..sdpa import attention_weights, scale_or_default
from .eviction import POLICIES, kept_positions, kl_divergence
from .memory import dynamic_cache_positions, kv_cache_bytes

TOP = 5  # next-token candidates kept per step


@dataclass
class GenerationStep:
    """One new token. Arrays are numpy; positions count from the first prompt token."""

    position: int  # where the fed token sits; its query sees positions 0 .. position
    fed_id: int
    chosen_id: int  # the token picked from this step's distribution (fed at the next step)
    attention: np.ndarray  # (layers, heads, position + 1) float32: the fed token's weights over every position
    top_ids: list[int]  # TOP most likely next tokens under the full cache
    top_tokens: list[str]  # their display labels
    top_probs: list[float]
    cache_bytes: int  # bytes of every layer's K and V tensors after this step (measured on the tensors)
    ms: float  # wall time of the step itself: forward with the cache, attention weights, top-5, the pick
    policies: dict[str, dict] = field(default_factory=dict)  # policy -> kept, evicted, kl, top_ids, top_probs


@dataclass
class Generation:
    prompt_ids: list[int]
    tokens: list[str]  # display labels of prompt + generated tokens
    steps: list[GenerationStep]
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    bytes_per_value: int
    window: int  # W: keys a query sees under eviction, its own included (core/kv_cache/eviction.py)
    sinks: int
    stopped_at_eos: bool
    greedy: bool = True  # temperature 0: the most likely token at every step (else sampled)
    eviction_measured: bool = True  # False for a model whose sliding-window layers evict by themselves
    # the largest |step weight - the same query row of one pass over the whole text without a cache|, every step,
    # layer and head (full_pass_difference): what the page says it checked
    full_pass_difference: float = float("nan")
    windows: tuple[int | None, ...] = ()  # per layer: its sliding window W (keys seen, its own included), or None
    block_multiply_adds: int = 0  # one token through every block's linear layers (core/models: linear_multiply_adds)
    head_multiply_adds: int = 0  # one token through the language-model head
    # wall time of the eviction comparisons of every step and policy: one pass of all their rows (_evicted)
    eviction_ms: float = 0.0
    positions: str = "rope"  # how the model encodes positions (Capabilities.positions.kind): what a kept key keeps

    @property
    def n_layers(self) -> int:
        return self.layers

    @property
    def n_heads(self) -> int:
        return self.heads

    @property
    def last_step(self) -> int:
        return len(self.steps) - 1

    @property
    def generated_ids(self) -> list[int]:
        return [s.chosen_id for s in self.steps]

    def cached(self, context: int) -> list[int]:
        """Positions each layer's cache holds after `context` tokens: all of them, or in a sliding-window layer the
        last W - 1 (transformers' cache: the next token joins them, and sees W keys)."""
        windows = self.windows or (None,) * self.layers
        return [dynamic_cache_positions(context, w) for w in windows]

    def formula_bytes(self, context: int, kv_heads: int | None = None) -> float:
        """2 * kv_heads * head_dim * bytes per layer and cached position (core/kv_cache/memory.py), summed over the
        layers (a sliding-window layer holds at most W - 1 positions); kv_heads = heads is what multi-head attention
        would store."""
        kv = self.kv_heads if kv_heads is None else kv_heads
        return sum(kv_cache_bytes(1, kv, self.head_dim, n, self.bytes_per_value) for n in self.cached(context))

    def step_multiply_adds(self, position: int) -> tuple[int, int]:
        """(with the cache, without it): multiply-adds of the step that feeds the token at `position` (n = position
        + 1 tokens). With the cache one token goes through every linear layer and its query meets the cached keys
        (q·k and the weighted sum of values: 2 x heads x head_dim per key, per layer; a sliding layer's W at most).
        Without it all n tokens go through the linear layers again and every layer computes the whole n x n scores
        and sums (masked cells too, as SDPA does). The head turns one row into the next token's scores either way."""
        n = position + 1
        per_key = 2 * self.heads * self.head_dim
        windows = self.windows or (None,) * self.layers
        seen = sum(n if w is None else min(n, w) for w in windows)
        with_cache = self.block_multiply_adds + self.head_multiply_adds + per_key * seen
        without = n * self.block_multiply_adds + self.head_multiply_adds + per_key * self.layers * n * n
        return with_cache, without


def _pick(logits: torch.Tensor, temperature: float, top_k: int, generator: torch.Generator) -> int:
    """Greedy when temperature == 0, else a sample from softmax(logits / T) over the top_k most likely (top_k = 0:
    the whole vocabulary)."""
    if temperature <= 0:
        return int(logits.argmax())
    scaled = logits.double() / temperature
    if 0 < top_k < scaled.numel():
        cut = torch.topk(scaled, top_k).values[-1]
        scaled = scaled.masked_fill(scaled < cut, float("-inf"))
    return int(torch.multinomial(torch.softmax(scaled, dim=-1), 1, generator=generator))


def _weights(kept: dict, features: dict, layers: int, position: int) -> np.ndarray:
    """(layers, heads, position + 1) of one query from the recorded q (1, H, 1, d) and k (1, H_kv, n, d) per layer,
    with what the layer's attention adds to its scores as the model passed it (features: ALiBi, soft-capping,
    learned sinks; core/models/base.py LayerFeatures), so a row is the model's own: with sinks it sums to less than 1.
    A sliding-window layer hands its attention only the last n <= position + 1 keys: the earlier ones get weight
    exactly 0 from it, and are written as 0 here. Kept in float32: float16 would move a weight by up to 1e-4."""
    rows = []
    for layer in range(layers):
        q, k, scaling = kept[layer]
        q, k = q[0, :, -1:].float().cpu(), k[0].float().cpu()  # (H, 1, d), (H_kv, n, d), beside the features
        k = k.repeat_interleave(q.shape[0] // k.shape[0], dim=0)  # (H, n, d): head h reads kv head h // group
        feature = features.get(layer)
        n = k.shape[1]
        row = attention_weights(
            q,
            k,
            scale=scale_or_default(scaling, q.shape[-1]),
            softcap=getattr(feature, "softcap", None),
            sinks=getattr(feature, "sinks", None),
            bias=None if feature is None else feature.alibi_bias([position], range(position + 1 - n, position + 1)),
        )[:, 0]  # (H, n)
        rows.append(torch.nn.functional.pad(row, (position + 1 - row.shape[-1], 0)))
    return torch.stack(rows).numpy().astype(np.float32)


def _step(wrapper, cache, token_id: int, position: int, layers: int):
    """Feed one token with attention recording on; returns (logits (vocab,), weights (layers, H, position + 1))."""
    logits, record = wrapper.step(cache, token_id, position, record_qk=True)
    return logits, _weights(record.kept, record.features, layers, position)


def context_limit(capabilities) -> int | None:
    """How many positions (prompt and new tokens together) this model has: a learned position table has no vector
    past its last row; None when positions go on (RoPE, ALiBi, sinusoidal)."""
    positions_end = capabilities.max_positions if capabilities.positions.kind == "learned" else None
    return positions_end if positions_end else None


def evicts_by_itself(capabilities) -> bool:
    """A model with sliding-window layers already keeps only the last W keys there: the page's eviction policies
    (what a full cache loses when it keeps fewer) are not measured on it."""
    return any(w is not None for w in capabilities.sliding_window)


def prompt_ids(wrapper, prompt: str, max_prompt_tokens: int, max_new_tokens: int = 0) -> tuple[list[int], int]:
    """Token ids of the prompt (no special tokens added), keeping the LAST max_prompt_tokens (the end is what
    is continued) and room for max_new_tokens within the model's positions (context_limit), and how many tokens
    the whole prompt had. Raises ValueError when it gives no token."""
    ids = wrapper.encode(str(prompt or ""))
    if not ids:
        raise ValueError("the prompt gives no tokens")
    limit = context_limit(wrapper.capabilities)
    keep = max_prompt_tokens if limit is None else max(1, min(max_prompt_tokens, limit - max_new_tokens))
    return ids[-keep:], len(ids)


@torch.no_grad()
def generate(
    wrapper,
    ids: list[int],
    max_new_tokens: int,
    temperature: float = 0.0,
    top_k: int = 0,
    seed: int = 0,
    window: int = 16,
    sinks: int = 4,
    policies: tuple[str, ...] = POLICIES,
) -> Generation:
    """Continue `ids` by up to max_new_tokens tokens with the KV cache (stops after the end-of-sequence token).
    wrapper: an HFAttentionModel (core/models/hf.py) around a causal LM. For every step and policy, the next-token
    distribution with the evicted cache and its KL divergence from the full cache's."""
    if not ids or max_new_tokens < 1:
        raise ValueError("need at least one prompt token and one new token")
    limit = context_limit(wrapper.capabilities)
    if limit is not None:  # no position past the model's table
        if len(ids) >= limit:
            raise ValueError(f"the prompt fills all {limit} positions of the model: no room for a new token")
        max_new_tokens = min(max_new_tokens, limit - len(ids))
    if evicts_by_itself(wrapper.capabilities):
        policies = ()
    layers, heads, kv_heads = wrapper.n_layers, wrapper.n_heads, wrapper.n_kv_heads
    head_dim = wrapper.capabilities.head_dim
    generator = torch.Generator().manual_seed(int(seed))
    eos = wrapper.eos_id
    cache = wrapper.new_cache()
    wrapper.prefill(cache, ids[:-1])  # every prompt token but the last, in one pass
    sequence, steps, token, logps = list(ids), [], ids[-1], []

    def labels(token_ids: list[int]) -> list[str]:
        return wrapper.labels(token_ids, [i == eos for i in token_ids])

    for _ in range(max_new_tokens):
        position = len(sequence) - 1
        start = time.perf_counter()
        logits, weights = _step(wrapper, cache, token, position, layers)
        logp = torch.log_softmax(logits.double(), dim=-1)
        top = torch.topk(logp, TOP)
        chosen = _pick(logits, temperature, top_k, generator)
        step = GenerationStep(
            position=position,
            fed_id=token,
            chosen_id=chosen,
            attention=weights,
            top_ids=top.indices.tolist(),
            top_tokens=labels(top.indices.tolist()),
            top_probs=top.values.exp().tolist(),
            cache_bytes=wrapper.cache_bytes(cache),
            ms=(time.perf_counter() - start) * 1000,
        )
        steps.append(step)
        logps.append(logp)
        sequence.append(chosen)
        token = chosen
        if chosen == eos:
            break
    start = time.perf_counter()
    for step, outcomes in zip(steps, _evicted(wrapper, cache, steps, logps, policies, window, sinks)):
        for policy, outcome in outcomes.items():
            step.policies[policy] = {**outcome, "top_tokens": labels(outcome["top_ids"])}
    eviction_ms = (time.perf_counter() - start) * 1000
    tokens = wrapper.labels(sequence, [i == eos for i in sequence])
    gen = Generation(
        prompt_ids=list(ids),
        tokens=tokens,
        steps=steps,
        layers=layers,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        bytes_per_value=wrapper.bytes_per_value,
        window=window,
        sinks=sinks,
        stopped_at_eos=bool(steps) and steps[-1].chosen_id == eos,
        greedy=temperature <= 0,
        eviction_measured=bool(policies),
        windows=tuple(wrapper.capabilities.sliding_window) or (None,) * layers,
        eviction_ms=eviction_ms,
        positions=wrapper.capabilities.positions.kind,
    )
    gen.block_multiply_adds, gen.head_multiply_adds = wrapper.linear_multiply_adds()
    gen.full_pass_difference = full_pass_difference(wrapper, gen)
    return gen


@torch.no_grad()
def full_pass_difference(wrapper, gen: Generation) -> float:
    """The largest difference between every step's weights and the same query row of one pass over every token fed
    (prompt and generated, no cache), through the model's own run (its weights checked against transformers' eager
    attention when it was loaded), every layer and head: a cache that kept or rotated anything wrongly shows here."""
    if not gen.steps:
        return 0.0
    fed = (gen.prompt_ids + gen.generated_ids)[: gen.steps[-1].position + 1]
    trace = wrapper.run(wrapper.batch_of_ids([fed]), logits=False, hidden_states=False)
    worst = 0.0
    for step in gen.steps:
        p = step.position
        for layer in range(gen.layers):
            full = trace.layer_attention(layer, rows=[p])[:, 0, : p + 1]  # (heads, p + 1)
            worst = max(worst, float((torch.from_numpy(step.attention[layer]) - full).abs().max()))
    return worst


def _evicted(wrapper, cache, steps, full_logps, policies, window, sinks) -> list[dict[str, dict]]:
    """For every step and policy: the next-token distribution at that step had the cache (positions 0 ..
    position-1, before the step's token joined it) kept only the policy's positions, against the full one. The
    entries a step saw are the final cache's (a cached position never changes), so every evicting (step, policy)
    is one row of a single pass (wrapper.steps_on_kept). Nothing evicted: the full distribution, KL exactly 0."""
    rows = [(i, policy, keep) for i, step in enumerate(steps) for policy in policies
            if len(keep := kept_positions(policy, step.position, window, sinks)) < step.position]  # fmt: skip
    evicted_logps = {}
    if rows:
        kept = torch.zeros(len(rows), cache.get_seq_length(), dtype=torch.bool)
        for r, (_, _, keep) in enumerate(rows):
            kept[r, keep] = True
        logits = wrapper.steps_on_kept(
            cache, [steps[i].fed_id for i, _, _ in rows], [steps[i].position for i, _, _ in rows], kept
        )
        evicted_logps = {(i, policy): torch.log_softmax(logits[r].double(), dim=-1)
                         for r, (i, policy, _) in enumerate(rows)}  # fmt: skip
    out = []
    for i, (step, full_logp) in enumerate(zip(steps, full_logps)):
        outcomes = {}
        for policy in policies:
            keep = kept_positions(policy, step.position, window, sinks)
            logq = evicted_logps.get((i, policy), full_logp)
            top = torch.topk(logq, TOP)
            outcomes[policy] = {
                "kept": len(keep) + 1,  # the keys the fed token sees: the kept cache and its own
                "evicted": step.position - len(keep),
                "kl": kl_divergence(full_logp, logq) if (i, policy) in evicted_logps else 0.0,
                "top_ids": top.indices.tolist(),
                "top_probs": top.values.exp().tolist(),
            }
        out.append(outcomes)
    return out


@torch.no_grad()
def greedy_uncached(wrapper, ids: list[int], max_new_tokens: int, eos: int | None = None) -> list[int]:
    """The reference: greedy decoding that reruns the whole sequence at every step, no cache at all."""
    sequence, out = list(ids), []
    for _ in range(max_new_tokens):
        token = int(wrapper.next_logits(sequence).argmax())
        out.append(token)
        sequence.append(token)
        if token == eos:
            break
    return out
