"""The model contract every page talks to, whatever model is loaded.

In the spirit of the LLM Transparency Tool's `TransparentLlm`: pages call `model.tokenize(texts)`, then
`model.run(batch)`, then ask the returned `Trace` for exactly what is on screen, e.g.
`trace.attention(layer, head)`. The trace keeps each layer's q and k (after RoPE where it applies) and
recomputes the weights exactly on demand, one layer at a time, so nothing of size layers x heads x n x n is
ever held or sent.

Shapes: B batch, n tokens (padded length), m real tokens of one sequence, H query heads, H_kv key/value
heads, d head size, L layers, s thumbnail side.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import torch

from ..downsample import bin_edges
from ..masks import batch_mask
from ..sdpa import attention_weights, entropy


class ModelUnavailable(RuntimeError):
    """A model cannot be loaded here (its weight package is missing). The message says how to install it."""


@dataclass
class Batch:
    input_ids: torch.Tensor  # (B, n) long
    attention_mask: torch.Tensor  # (B, n) 1 = real token, 0 = padding (always right-padded)
    tokens: list[list[str]]  # (B, n) display text of each token, padding included
    special: torch.Tensor  # (B, n) bool: [CLS]/[SEP]/BOS/EOS/PAD
    truncated: list[bool]  # per text: was it cut to the model's limit?
    texts: list[str]

    @property
    def lengths(self) -> list[int]:
        return self.attention_mask.sum(-1).tolist()


def hide_special_keys(weights: torch.Tensor, special: torch.Tensor) -> torch.Tensor:
    """Weights (..., n_rows, n) with the columns of special keys (`special`: (n,) bool) set to 0 and every row
    divided by what it kept, so rows sum to 1 again. A row that kept nothing stays all 0. Shown on screen
    with a label: the result is no longer what the model computed, it is its share among ordinary tokens."""
    kept = weights.masked_fill(special.to(weights.device), 0.0)
    total = kept.sum(-1, keepdim=True)
    return torch.where(total > 0, kept / total.clamp_min(1e-30), torch.zeros_like(kept))


@dataclass
class Trace:
    """What one forward pass produced, kept on the server."""

    batch: Batch
    queries: list[torch.Tensor]  # per layer (B, H, n, d)
    keys: list[torch.Tensor]  # per layer (B, H_kv, n, d), after RoPE where it applies
    scale: float  # the model's 1/sqrt(d) (or its own scaling)
    is_causal: bool
    hidden_states: list[torch.Tensor] = field(default_factory=list)  # (L + 1) x (B, n, d_model)
    logits: torch.Tensor | None = None  # (B, n, vocab) for decoders
    router_logits: list[torch.Tensor] | None = None  # per layer (B * n, n_experts), MoE only

    @property
    def n_layers(self) -> int:
        return len(self.queries)

    @property
    def n_heads(self) -> int:
        return self.queries[0].shape[1]

    @property
    def n_kv_heads(self) -> int:
        return self.keys[0].shape[1]

    def kv_head(self, head: int) -> int:
        """Which key/value head query head `head` reads (GQA): consecutive query heads share one, as in
        transformers' repeat_kv."""
        return head // (self.n_heads // self.n_kv_heads)

    def length(self, index: int = 0) -> int:
        """m: the number of real (non-padding) tokens of sequence `index`; they are its first m positions."""
        return int(self.batch.attention_mask[index].sum())

    def mask(self, index: int = 0) -> torch.Tensor:
        """(n, n) boolean: may query i attend to key j, for sequence `index` of the batch."""
        return batch_mask(self.batch.attention_mask[index : index + 1], self.is_causal)[0, 0]

    # --- exact weights ---------------------------------------------------------------------------------------

    def attention(self, layer: int, head: int, index: int = 0, rows=None, hide_special: bool = False) -> torch.Tensor:
        """(n_rows, n) exact weights of one head for sequence `index`: rows are queries, columns keys.
        `rows` (indices or a slice) picks query rows; hide_special: see `hide_special_keys`."""
        return self.layer_attention(layer, index, heads=[head], rows=rows, hide_special=hide_special)[0]

    def layer_attention(
        self, layer: int, index: int = 0, heads=None, rows=None, hide_special: bool = False
    ) -> torch.Tensor:
        """(len(heads), n_rows, n) exact weights of several heads (default all H) of one layer, in one call."""
        heads = list(range(self.n_heads)) if heads is None else list(heads)
        q = self.queries[layer][index, heads]  # (h, n, d)
        k = self.keys[layer][index, [self.kv_head(h) for h in heads]]  # (h, n, d)
        m = self.mask(index)
        if rows is not None:
            q, m = q[:, rows], m[rows]
        w = attention_weights(q, k, m, self.scale)
        return hide_special_keys(w, self.batch.special[index]) if hide_special else w

    def _real_layer(self, layer: int, index: int, hide_special: bool, rows=None) -> torch.Tensor:
        """(H, n_rows, m): every head of one layer over the m real keys (padding keys have weight 0 anyway)."""
        m = self.length(index)
        rows = slice(0, m) if rows is None else rows
        return self.layer_attention(layer, index, rows=rows, hide_special=hide_special)[..., :m]

    # --- what the overview views draw --------------------------------------------------------------------------

    def pooled_attention(self, size: int, index: int = 0, hide_special: bool = False) -> torch.Tensor:
        """(L, H, s, s) thumbnails of every head, s = min(size, m): each cell is the plain mean of one block of
        the head's (m, m) matrix over the real tokens, masked (causal) cells counting as their weight, 0.
        Blocks are core.downsample.bin_edges(m, size) on both axes (the same bins as pool_matrix), so cell
        (a, b) averages queries edges[a]:edges[a+1] and keys edges[b]:edges[b+1].
        Computed one layer at a time: at most H x m x m floats are alive at once."""
        m = self.length(index)
        edges = torch.as_tensor(bin_edges(m, size))
        pos = torch.arange(m)
        member = ((pos[None] >= edges[:-1, None]) & (pos[None] < edges[1:, None])).float()  # (s, m) 0/1
        pool = member / member.sum(-1, keepdim=True)  # rows: 1/|bin|
        out = torch.empty(self.n_layers, self.n_heads, len(edges) - 1, len(edges) - 1)
        for layer in range(self.n_layers):
            out[layer] = pool @ self._real_layer(layer, index, hide_special) @ pool.T
        return out

    def rollout(
        self, index: int = 0, last_layer: int | None = None, hide_special: bool = False, residual: float = 0.5
    ) -> torch.Tensor:
        """(m, m) attention rollout (Abnar & Zuidema 2020) over the real tokens, up to `last_layer` (default:
        the last). Per layer A = the mean of its heads, mixed with the residual connection as
        residual * I + (1 - residual) * A (0.5 / 0.5, as in the paper) and rows renormalised; then
        R = A_last @ ... @ A_0. R[i, j] estimates how much of token j's input reaches token i's output.
        Information flows through special tokens, so they take part in the product; hide_special only zeroes
        their columns of the result and renormalises its rows."""
        m = self.length(index)
        last = self.n_layers - 1 if last_layer is None else last_layer
        eye = torch.eye(m)
        r = eye
        for layer in range(last + 1):
            a = residual * eye + (1 - residual) * self._real_layer(layer, index, False).mean(0)
            r = (a / a.sum(-1, keepdim=True)) @ r
        return hide_special_keys(r, self.batch.special[index, :m]) if hide_special else r

    def entropy_rows(self, index: int = 0, hide_special: bool = False) -> torch.Tensor:
        """Indices of the query rows `head_entropy` averages over: the real tokens, minus the special ones when
        hide_special (all real tokens if that leaves none)."""
        m = self.length(index)
        keep = torch.ones(m, dtype=torch.bool)
        if hide_special:
            keep &= ~self.batch.special[index, :m].bool()
        rows = torch.nonzero(keep).flatten()
        return rows if len(rows) else torch.arange(m)

    def head_entropy(self, index: int = 0, hide_special: bool = False) -> torch.Tensor:
        """(L, H) mean Shannon entropy (nats) of each head's rows over `entropy_rows`. 0 = every query puts all
        its weight on one key; log(k) = spread evenly over k keys. In a decoder query i sees only i + 1 keys,
        so early rows are low by construction."""
        rows = self.entropy_rows(index, hide_special)
        out = torch.empty(self.n_layers, self.n_heads)
        for layer in range(self.n_layers):
            out[layer] = entropy(self._real_layer(layer, index, hide_special, rows)).mean(-1)
        return out


class AttentionModel(ABC):
    """A model the pages can look inside. Implementations: core/models/hf.py (any transformers model)."""

    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    max_positions: int
    position_kind: str  # "learned", "rope", ...
    is_causal: bool
    weights_note: str = ""  # shown on screen: where the weights come from (e.g. "de-quantised from 4-bit")
    random_init: bool = False

    @abstractmethod
    def tokenize(self, texts: list[str], max_tokens: int | None = None) -> Batch:
        """Tokenize a batch (right-padded), truncating each text to the model's limit (or max_tokens)."""

    @abstractmethod
    def run(self, batch: Batch) -> Trace:
        """One forward pass; returns the Trace the pages query."""

    def kv_groups(self) -> list[list[int]]:
        """For GQA: the query heads that share each key/value head."""
        rep = self.n_heads // self.n_kv_heads
        return [list(range(g * rep, (g + 1) * rep)) for g in range(self.n_kv_heads)]
