"""Reaching past a fixed window: Transformer-XL's segment recurrence (Dai et al. 2019, arXiv:1901.02860) and what
came after, as attention masks over one long text, measured on SmolLM2.

A model that reads a long text in segments of L tokens can
  - "independent": read each segment alone (every segment starts from nothing);
  - "xl": keep the previous segment's keys and values as memory (Transformer-XL; in training no gradient flows
    into the memory). Token i of segment s sees all of segment s - 1 and segment s up to itself. The memory's own
    states saw the segment before it, so information travels one more segment back per layer: the effective
    context grows as L x layers, although each attention sees at most 2L - 1 keys;
  - "window": see the last W tokens (a sliding window; a cache that evicts the oldest entry);
  - "sinks_window": see the first S tokens and the last W (StreamingLLM, Xiao et al. 2023, arXiv:2309.17453);
  - "full": see every earlier token (the reference).

Every method is a boolean mask (n x n, True = may attend) on ONE forward pass with positions 0 .. n-1. That is not
an approximation: at layer l a token's keys come from its layer l - 1 state, which the same mask computed, exactly
as the recurrence with a cache would (tests check "xl" against segment-by-segment passes with a DynamicCache
holding the previous segment, and "independent" against separate passes). RoPE scores depend only on the distance
between positions, so continuing positions across segments (as XL does) or restarting them changes nothing but
rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

METHODS = ("independent", "xl", "window", "sinks_window", "full")


def method_mask(method: str, n: int, segment: int = 256, window: int = 256, sinks: int = 4) -> torch.Tensor:
    """Bool (n, n): query i may attend to key j under `method` (always causal, always j = i)."""
    if n < 1 or segment < 1 or window < 1 or sinks < 0:
        raise ValueError("n, the segment length and the window must be >= 1, sinks >= 0")
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    causal = j <= i
    if method == "full":
        return causal
    if method == "independent":
        return causal & (i // segment == j // segment)
    if method == "xl":
        return causal & (j // segment >= i // segment - 1)
    if method == "window":
        return causal & (i - j < window)
    if method == "sinks_window":
        return causal & ((i - j < window) | (j < sinks))
    raise ValueError(f"unknown method {method!r}; known: {METHODS}")


def receptive_field(mask: torch.Tensor, layers: int) -> np.ndarray:
    """(n,) how many positions can reach each token's output through `layers` layers of this mask (each layer
    lets a token read what its allowed keys had read): the effective context, L x layers for XL."""
    reach = mask.clone()
    step = mask.float()
    for _ in range(layers - 1):
        reach = (step @ reach.float()) > 0
    return reach.sum(dim=-1).numpy()


@torch.no_grad()
def token_losses(model, ids: list[int], mask: torch.Tensor, chunk: int = 256) -> np.ndarray:
    """Cross-entropy (nats) of predicting ids[t + 1] from position t, for t = 0 .. n-2, with one forward pass of
    a transformers causal LM under `mask` (n x n bool). The vocabulary-sized logits are made `chunk` rows at a
    time (all at once they would take n x 49,152 floats)."""
    x = torch.tensor([ids])
    hidden = model.model(input_ids=x, attention_mask=mask[None, None], use_cache=False).last_hidden_state[0]
    targets = x[0, 1:]
    out = []
    for s in range(0, len(ids) - 1, chunk):
        logits = model.lm_head(hidden[s : min(s + chunk, len(ids) - 1)]).float()
        out.append(torch.nn.functional.cross_entropy(logits, targets[s : s + logits.shape[0]], reduction="none"))
    return torch.cat(out).numpy()


@dataclass
class Comparison:
    n: int
    segment: int
    window: int
    sinks: int
    losses: dict[str, np.ndarray]  # method -> (n - 1,) nats per predicted token

    def mean(self, method: str, start: int = 0) -> float:
        """Mean loss of the predictions from position `start` on."""
        return float(self.losses[method][start:].mean())

    def by_position_in_segment(self, method: str) -> np.ndarray:
        """(segment,) mean loss at each position within a segment, over all full segments."""
        values = self.losses[method]
        usable = (len(values) // self.segment) * self.segment
        return values[:usable].reshape(-1, self.segment).mean(axis=0)

    def by_block(self, method: str, block: int) -> np.ndarray:
        """Mean loss over consecutive blocks of `block` positions (the curve against position in the text)."""
        values = self.losses[method]
        usable = (len(values) // block) * block
        return values[:usable].reshape(-1, block).mean(axis=1)


def compare(model, ids: list[int], segment: int, window: int, sinks: int, methods=METHODS, progress=None):
    """Per-token losses of every method on the same ids."""
    losses = {}
    for k, method in enumerate(methods):
        if progress:
            progress(k / len(methods), method)
        losses[method] = token_losses(model, ids, method_mask(method, len(ids), segment, window, sinks))
    return Comparison(len(ids), segment, window, sinks, losses)


def reach_by_layers(mask: torch.Tensor, layers: int, row: int = -1) -> list[int]:
    """How many positions can reach token `row` through 1, 2, ..., `layers` layers of this mask: one row of
    receptive_field per depth, a vector times the mask per layer (n^2 each, never n^3)."""
    m = mask.float()
    reach = mask[row].float()  # (n,) what the token sees directly
    counts = [int((reach > 0).sum())]
    for _ in range(layers - 1):
        reach = ((reach @ m) > 0).float()
        counts.append(int(reach.sum()))
    return counts


def effective_context(n: int, segment: int, window: int, sinks: int, layers: int) -> dict[str, list[int]]:
    """For the last token of an n-token text: positions that can reach it through 1 .. layers layers, per method."""
    return {m: reach_by_layers(method_mask(m, n, segment, window, sinks), layers) for m in METHODS}


def small_masks(n: int = 12, segment: int = 4, window: int = 4, sinks: int = 1) -> dict[str, np.ndarray]:
    """The five masks at a size where every cell shows."""
    return {m: method_mask(m, n, segment, window, sinks).numpy() for m in METHODS}


def sinks_finding_holds(mean_past_window: dict[str, float], factor: float = 2.0) -> bool:
    """StreamingLLM's finding on a run, once the first tokens have left the window: the plain window's excess loss
    over full attention is more than `factor` times that of sinks + window."""
    full = mean_past_window["full"]
    window_gap = mean_past_window["window"] - full
    sinks_gap = max(mean_past_window["sinks_window"] - full, 0.0)
    return window_gap > factor * sinks_gap and window_gap > 0


def xl_beats_independent(mean_past_window: dict[str, float]) -> bool:
    """Whether XL's memory lowered the loss against independent segments on this run."""
    return mean_past_window["xl"] < mean_past_window["independent"]
