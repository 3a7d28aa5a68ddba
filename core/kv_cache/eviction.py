"""Evicting from the KV cache, and what it does to the next token: the one eviction rule of the app (/kv-cache
evicts with it, /transformer-xl draws and measures it as a mask).

The window W counts keys, the query's own included: the query at position p sees positions p - W + 1 .. p
(W = 1: only itself), as Mistral's sliding window and `i - j < W` in a mask. A cache therefore keeps W - 1
earlier entries, and the new token's own key and value join it in the same step.
  - "window":       the last W positions (a sliding window, as Mistral's rolling buffer);
  - "sinks_window": the first S positions (the "attention sinks") and the last W (StreamingLLM, Xiao et al. 2023,
                    arXiv:2309.17453: models put much weight on the first tokens whatever they say, and dropping
                    them is what breaks a plain window).

Positions: the kept keys keep the rotation (RoPE) of their original position and the query keeps its own, so
the distances between kept tokens are the true ones. StreamingLLM instead renumbers positions inside the cache
(0 .. cache size - 1, whatever a token's place in the text) so that a stream can run past the training length;
within SmolLM2's 8,192 positions that is not needed, and this app does not do it.

The effect is measured for one step: the entries kept are the full cache's own (computed while nothing was
evicted), the query sees only those, and KL(full || evicted) of the next-token distributions says how much the
prediction moved. A system that evicts all along would also have computed those kept entries under eviction.
"""

from __future__ import annotations

import torch

POLICIES = ("window", "sinks_window")


def _check(window: int, sinks: int) -> None:
    if window < 1 or sinks < 0:
        raise ValueError("the window must be >= 1 and the number of sinks >= 0")


def visible_positions(policy: str, query: int, window: int, sinks: int = 0) -> list[int]:
    """The positions (of 0 .. query) the query at position `query` attends to under `policy`, in order: the last
    `window` positions, its own included, and for sinks_window the first `sinks` as well."""
    _check(window, sinks)
    recent = list(range(max(0, query - window + 1), query + 1))
    if policy == "window":
        return recent
    if policy == "sinks_window":
        return sorted(set(range(min(sinks, query + 1))) | set(recent))
    raise ValueError(f"unknown eviction policy {policy!r}; known: {POLICIES}")


def policy_mask(policy: str, n: int, window: int, sinks: int = 0) -> torch.Tensor:
    """Bool (n, n): query i may attend to key j under `policy`; row i is visible_positions(policy, i, ...)."""
    _check(window, sinks)
    if policy not in POLICIES:
        raise ValueError(f"unknown eviction policy {policy!r}; known: {POLICIES}")
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    recent = (j <= i) & (i - j < window)
    return recent | ((j <= i) & (j < sinks)) if policy == "sinks_window" else recent


def kept_positions(policy: str, cached: int, window: int, sinks: int = 0) -> list[int]:
    """The cached positions (of 0 .. cached-1) that `policy` keeps when the token at position `cached` is fed: what
    it sees, less its own key (which joins the cache in the same step)."""
    return visible_positions(policy, cached, window, sinks)[:-1]


@torch.no_grad()
def next_token_logprobs(wrapper, cache, token_id: int, position: int) -> torch.Tensor:
    """log p(next token) (vocab,) after feeding `token_id` at `position` on top of `cache` (which grows by one)."""
    logits, _ = wrapper.step(cache, token_id, position)
    return torch.log_softmax(logits.double(), dim=-1)


def kl_divergence(logp: torch.Tensor, logq: torch.Tensor) -> float:
    """KL(p || q) in nats, from log-probabilities over the same vocabulary (0 log 0 = 0)."""
    p = logp.exp()
    terms = torch.where(p > 0, p * (logp - logq), torch.zeros_like(p))
    return float(terms.sum().clamp_min(0.0))
