"""Evicting from the KV cache, and what it does to the next token.

A cache of p positions (0 .. p-1, every earlier token) is cut to the positions a policy keeps:
  - "window":       the last W positions (a sliding window, as Mistral's rolling buffer);
  - "sinks_window": the first S positions (the "attention sinks") and the last W (StreamingLLM, Xiao et al. 2023,
                    arXiv:2309.17453: models put much weight on the first tokens whatever they say, and dropping
                    them is what breaks a plain window).
The new token always sees itself (its own key joins the cache in the same step).

Positions: the kept keys keep the rotation (RoPE) of their original position and the query keeps its own, so
the distances between kept tokens are the true ones. StreamingLLM instead renumbers positions inside the cache
so that a stream can run past the training length; within SmolLM2's 8,192 positions that is not needed, and
this page does not do it.

The effect is measured for one step: the entries kept are the full cache's own (computed while nothing was
evicted), the query sees only those, and KL(full || evicted) of the next-token distributions says how much the
prediction moved. A system that evicts all along would also have computed those kept entries under eviction.
"""

from __future__ import annotations

import torch
from transformers import DynamicCache

POLICIES = ("window", "sinks_window")


def kept_positions(policy: str, cached: int, window: int, sinks: int = 0) -> list[int]:
    """The cached positions (of 0 .. cached-1) that `policy` keeps, in order."""
    if window < 1 or sinks < 0:
        raise ValueError("the window must be >= 1 and the number of sinks >= 0")
    recent = list(range(max(0, cached - window), cached))
    if policy == "window":
        return recent
    if policy == "sinks_window":
        first = list(range(min(sinks, cached)))
        return sorted(set(first) | set(recent))
    raise ValueError(f"unknown eviction policy {policy!r}; known: {POLICIES}")


def sliced_cache(cache: DynamicCache, keep: list[int], config) -> DynamicCache:
    """A new DynamicCache holding only the positions `keep` of every layer (copies: the full cache stays as it
    is). Each layer's keys and values are (B, H_kv, p, d) -> (B, H_kv, len(keep), d)."""
    index = torch.as_tensor(keep, dtype=torch.long)
    layers = [(layer.keys.index_select(2, index), layer.values.index_select(2, index)) for layer in cache.layers]
    return DynamicCache(ddp_cache_data=layers, config=config)


@torch.no_grad()
def next_token_logprobs(model, cache: DynamicCache, token_id: int, position: int) -> torch.Tensor:
    """log p(next token) (vocab,) after feeding `token_id` at `position` on top of `cache` (which grows by one)."""
    out = model(
        input_ids=torch.tensor([[token_id]]),
        past_key_values=cache,
        position_ids=torch.tensor([[position]]),
        use_cache=True,
    )
    return torch.log_softmax(out.logits[0, -1].double(), dim=-1)


def kl_divergence(logp: torch.Tensor, logq: torch.Tensor) -> float:
    """KL(p || q) in nats, from log-probabilities over the same vocabulary (0 log 0 = 0)."""
    p = logp.exp()
    terms = torch.where(p > 0, p * (logp - logq), torch.zeros_like(p))
    return float(terms.sum().clamp_min(0.0))
