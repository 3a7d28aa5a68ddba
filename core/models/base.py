"""The model contract every page talks to, whatever model is loaded.

In the spirit of the LLM Transparency Tool's `TransparentLlm`: pages call `model.tokenize(texts)`, then
`model.run(batch)`, then ask the returned `Trace` for exactly what is on screen, e.g.
`trace.attention(layer, head)`. The trace keeps each layer's q and k (after RoPE where it applies) and
recomputes the weights exactly on demand, one layer at a time, so nothing of size layers x heads x n x n is
ever held or sent.

The model and its Trace are accessors only (tokenize, run, attention, layer_attention, kv_head, mask, length).
What is built on them lives beside the contract, once: hiding special tokens, rollout, entropy and the views of
/attention in core/attention.py, block pooling in core/pooling.py, the padded-batch check in core/padded_batch.py.

Shapes: B batch, n tokens (padded length), m real tokens of one sequence, H query heads, H_kv key/value
heads, d head size, L layers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from ..masks import batch_mask
from ..sdpa import attention_weights, repeat_kv

if TYPE_CHECKING:  # annotations only: the contract's types, declared beside it
    from .capabilities import Capabilities
    from .weights import EmbeddingParts, EncoderLayerWeights

KVCache = object  # a model's key/value cache (transformers' DynamicCache for core/models/hf.py)


class ModelUnavailable(RuntimeError):
    """A model cannot be loaded here (its weight package is missing, a folder is refused). Its one argument says why:
    a Reason where core knows why without a library's words, else words as they came (a library's)."""


class Reason(str):
    """Why a model cannot load or a folder is refused, in English (a server's log, a terminal, an exception's
    message), that also carries the key of the visitor's sentence in app/locales [models] and its fields, so a page
    says it in the reader's words: a status() returns one, and ModelUnavailable(reason) (local.ModelFolderError
    too) keeps it as its argument. The one way core names a reason a visitor reads."""

    def __new__(cls, text: str, key: str = "", **fields):  # key optional: pickle and copy rebuild it from text
        self = super().__new__(cls, text)
        self.key, self.fields = key, fields
        return self


def weights_record(weights: tuple[str, dict]) -> dict:
    """What a results file keeps of where a model's weights come from (a model's `weights`, as JSON), so that a page
    says it in the reader's words ([models] weights_<source>) and a script's English is never a second record."""
    source, fields = weights
    return {"source": source, "fields": dict(fields)}


def recorded_weights(record) -> tuple[str, dict]:
    """weights_record's (source, fields) back from a results file; ("", {}) where the file has none it can read."""
    if not isinstance(record, dict) or not isinstance(record.get("source"), str):
        return "", {}
    fields = record.get("fields")
    return record["source"], dict(fields) if isinstance(fields, dict) else {}


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


@dataclass(frozen=True)
class LayerFeatures:
    """What one layer's attention adds to softmax(QK^T * scale + mask), as the model itself passed it to the
    attention function: a sliding window of `window` keys (the query's own included: key j is seen from query i
    when i - window < j <= i, as transformers' sliding_window_overlay), soft-capping of the scores at `softcap`,
    and learned `sinks` (one logit per query head). None: the layer has no such feature."""

    window: int | None = None
    softcap: float | None = None
    sinks: torch.Tensor | None = None  # (H,)
    alibi: torch.Tensor | None = None  # (H,) ALiBi slopes m_h: score(i, j) += -m_h (i - j) (Bloom)

    def alibi_bias(self, query_positions, key_positions, heads=None) -> torch.Tensor | None:
        """(H, n_q, n_k) ALiBi's -m_h (i - j) for these positions (None without ALiBi). Bloom itself adds m_h j: the
        same softmax, since m_h i is the same for every key of row i."""
        if self.alibi is None:
            return None
        slopes = self.alibi if heads is None else self.alibi[list(heads)]
        i = torch.as_tensor(query_positions, dtype=torch.float32)[:, None]
        j = torch.as_tensor(key_positions, dtype=torch.float32)[None, :]
        return -slopes.float()[:, None, None] * (i - j)[None]


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
    features: list[LayerFeatures] = field(default_factory=list)  # per layer; empty: plain attention everywhere

    @property
    def n_layers(self) -> int:
        return len(self.queries)

    @property
    def n_heads(self) -> int:
        return self.queries[0].shape[1]

    @property
    def n_kv_heads(self) -> int:
        return self.keys[0].shape[1]

    @property
    def grouped(self) -> bool:
        """Grouped key/value heads (GQA, or MQA with one): fewer key/value heads than query heads."""
        return self.n_kv_heads < self.n_heads

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

    def attention(self, layer: int, head: int, index: int = 0, rows=None) -> torch.Tensor:
        """(n_rows, n) exact weights of one head for sequence `index`: rows are queries, columns keys (n = padded
        length; padded keys get exactly 0). `rows` (indices or a slice) picks query rows."""
        return self.layer_attention(layer, index, heads=[head], rows=rows)[0]

    def layer_attention(self, layer: int, index: int = 0, heads=None, rows=None) -> torch.Tensor:
        """(len(heads), n_rows, n) exact weights of several heads (default all H) of one layer, in one call."""
        q, k = self.queries[layer][index], self.keys[layer][index]  # (H, n, d), (H_kv, n, d): views
        if heads is None:  # every head: each key/value head repeated for its group, as transformers does
            k = repeat_kv(k[None], self.n_heads // self.n_kv_heads)[0]  # (H, n, d)
        else:
            heads = list(heads)
            q, k = q[heads], k[[self.kv_head(h) for h in heads]]  # (h, n, d)
        m = self.mask(index)
        feature = self.features[layer] if self.features else LayerFeatures()
        if feature.window is not None:
            n = m.shape[-1]
            m = m & (torch.arange(n)[:, None] - torch.arange(n)[None, :] < feature.window)  # i - j: freed at once
        sinks = feature.sinks
        if sinks is not None and heads is not None:
            sinks = sinks[heads]
        n = m.shape[-1]
        bias = feature.alibi_bias(torch.arange(n), torch.arange(n), heads)
        if rows is not None:
            q, m = q[:, rows], m[rows]
            bias = None if bias is None else bias[:, rows]
        return attention_weights(q, k, m, self.scale, softcap=feature.softcap, sinks=sinks, bias=bias)


class AttentionModel(ABC):
    """The model contract: everything a topic asks of a model, declared once, grouped by role (tokens, passes,
    hooks, readout, generation, weights). Implementations: core/models/hf.py (any transformers model) and
    core/models/moe_model.py (the MoE, adding its routing); tests/core/test_model_contract.py checks that each
    one's signatures are these. Topics and pages ask these and the model's `capabilities`, never the wrapped
    module or tokenizer (tests/test_layout.py checks). The encoder-decoder contract is beside it:
    core/models/seq2seq.py EncoderDecoderModel."""

    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    max_positions: int  # positions a text may use (a RoBERTa-style table: its rows after the padding index)
    position_kind: str  # "learned", "rope", ...
    is_causal: bool
    weights: tuple[str, dict] = ("", {})  # where the weights come from, declared once: a source and its fields,
    # ("folder", {"folder": path}); the words in app/locales [models] weights_<source>, a results file keeps
    # weights_record(weights)
    random_init: bool = False

    # --- tokens -------------------------------------------------------------------------------------------------

    @abstractmethod
    def tokenize(self, texts: list[str], max_tokens: int | None = None) -> Batch:
        """Tokenize a batch (right-padded), truncating each text to the model's limit (or max_tokens)."""

    @abstractmethod
    def batch_of_ids(
        self, rows: list[list[int]], texts: list[str] | None = None, truncated: list[bool] | None = None
    ) -> Batch:
        """The one batch builder from token ids (right-padded, labels and special flags filled in)."""

    @abstractmethod
    def encode(self, text: str, special_tokens: bool = False) -> list[int]:
        """The ids of the whole text, with or without the tokenizer's own special tokens."""

    @abstractmethod
    def offsets(self, text: str, max_length: int) -> tuple[list[int], list[tuple[int, int]]]:
        """(ids, character spans) of the text's first max_length tokens."""

    @property
    @abstractmethod
    def special_ids(self) -> set[int]:
        """Ids of [CLS]/[SEP]/BOS/EOS/PAD."""

    @property
    @abstractmethod
    def eos_id(self) -> int | None:
        """The end-of-sequence id generation stops at (None: the model has none)."""

    @abstractmethod
    def labels(self, ids: list[int], special: list[bool] | None = None) -> list[str]:
        """Display text of each token."""

    @abstractmethod
    def token_strings(self, ids: list[int]) -> list[str]:
        """The tokenizer's own string of each id."""

    @abstractmethod
    def decode(self, ids: list[int]) -> str:
        """The text of the ids."""

    @abstractmethod
    def affixes(self) -> tuple[list[int], list[int]]:
        """The special ids the tokenizer puts before and after a text."""

    @abstractmethod
    def ordinary_ids(self) -> torch.Tensor:
        """Every id that is not a special token."""

    def token_count(self, text: str) -> int:
        """How many tokens the tokenizer makes of the whole text (specials included), before any cut."""
        return len(self.tokenizer(text, truncation=False)["input_ids"])

    # --- passes -------------------------------------------------------------------------------------------------

    @abstractmethod
    def run(self, batch: Batch, logits: bool = True, hidden_states: bool = True) -> Trace:
        """One forward pass; returns the Trace the pages query (logits=False: no vocabulary-sized output;
        hidden_states=False: no residual streams kept)."""

    @abstractmethod
    def forward(self, batch: Batch, logits: bool = True, output_hidden_states: bool = False) -> object:
        """One plain forward pass on a batch (transformers' output), inside `hooked` when a topic observes or
        intervenes; logits=False stops after the final norm."""

    @abstractmethod
    def layer_qk(self, batch: Batch, layer: int) -> tuple[torch.Tensor, torch.Tensor, float]:
        """One layer's q, k and scale; the pass stops there (long documents)."""

    @abstractmethod
    def residual_streams(self, batch: Batch) -> tuple[list[torch.Tensor], object]:
        """The residual stream entering every block and leaving the last, and the pass's output."""

    @abstractmethod
    def next_token_losses(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor | None = None,
        rope: tuple[str, float, int | None] | None = None,
        block: int = 1024,
        progress: Callable[[float], None] | None = None,
    ) -> torch.Tensor:
        """The loss of every next token in one pass, under any mask or with a scaled RoPE
        ((method, factor[, original context]))."""

    # --- hooks --------------------------------------------------------------------------------------------------

    @abstractmethod
    def hooked(
        self,
        record_qk: bool = False,
        record_layers: frozenset[int] | None = None,
        stop_after: int | None = None,
        head_edits: dict[int, Callable[[torch.Tensor], torch.Tensor | None]] | None = None,
        residual: bool = False,
        after_block: Callable[[int], None] | None = None,
        rotary: torch.nn.Module | None = None,
    ) -> AbstractContextManager:
        """The one way into a forward pass (core/models/hooks.py), session-safe, as a context manager giving the
        pass's HookRun: record q and k (record_qk; only record_layers; end the pass after layer stop_after),
        replace or read heads' outputs before W^O (head_edits: layer -> edit), read the residual stream
        (residual), progress after each block (after_block), a scaled rotary embedding for this pass (rotary)."""

    # --- readout ------------------------------------------------------------------------------------------------

    @abstractmethod
    def unembed(self, residual: torch.Tensor) -> torch.Tensor:
        """Residual stream -> logits: the final norm, then the language-model head."""

    @abstractmethod
    def lm_head(self, normed: torch.Tensor) -> torch.Tensor:
        """After the final norm -> logits (with the model's own final transforms: logit scale, soft-cap)."""

    # --- generation ---------------------------------------------------------------------------------------------

    @abstractmethod
    def new_cache(self) -> KVCache:
        """An empty key/value cache."""

    @abstractmethod
    def sliced_cache(self, cache: KVCache, keep: list[int]) -> KVCache:
        """A copy of the cache holding only positions `keep`."""

    @abstractmethod
    def steps_on_kept(
        self, cache: KVCache, token_ids: list[int], positions: list[int], kept: torch.Tensor
    ) -> torch.Tensor:
        """Next-token logits (Q, V): token i fed at positions[i] on a cache holding only the positions where
        kept[i] (Q, L) is True, as step() on sliced_cache(cache, those positions) would give; `cache` unchanged."""

    @abstractmethod
    def prefill(self, cache: KVCache, ids: list[int]) -> None:
        """Fill the cache with ids in one pass."""

    @abstractmethod
    def step(
        self, cache: KVCache, token_id: int, position: int, record_qk: bool = False
    ) -> tuple[torch.Tensor, object]:
        """One token on top of the cache: (next-token logits, the hook run with its q and k)."""

    @abstractmethod
    def next_logits(self, ids: list[int]) -> torch.Tensor:
        """Next-token logits after ids, without a cache (the cache's reference)."""

    @abstractmethod
    def cache_bytes(self, cache: KVCache) -> int:
        """Bytes the cache's keys and values hold."""

    # --- weights, cost, placement and capabilities --------------------------------------------------------------

    @abstractmethod
    def learned_position_embeddings(self) -> torch.Tensor | None:
        """Row p: the vector added at position p (None: no learned table)."""

    @abstractmethod
    def encoder_layer(self, layer: int) -> EncoderLayerWeights:
        """One BERT-style layer's parameters as plain tensors (core/models/weights.py)."""

    @abstractmethod
    def token_embeddings(self, ids: torch.Tensor | list[int]) -> torch.Tensor:
        """The input embedding rows of token ids."""

    @abstractmethod
    def embedding_parts(self, ids: torch.Tensor | list[int]) -> EmbeddingParts:
        """A BERT-style encoder's input embedding of token ids taken apart before its LayerNorm
        (core/models/weights.py EmbeddingParts): token rows, position rows, the token-type row, the norm."""

    @abstractmethod
    def rotary_cos_sin(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(cos, sin), each (n, d): what the model's own rotary module gives positions 0 .. n-1, as its attention
        multiplies q and k with them."""

    @abstractmethod
    def linear_multiply_adds(self) -> tuple[int, int]:
        """Multiply-adds of one token through (every block's linear layers, the language-model head)."""

    @property
    @abstractmethod
    def bytes_per_value(self) -> int:
        """Bytes of one weight, and of one cached key or value."""

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities:
        """What the model offers the pages (core/models/capabilities.py), read from its config."""

    @property
    @abstractmethod
    def device(self) -> torch.device:
        """Where the weights are."""

    @abstractmethod
    def to_device(self, device: torch.device | str) -> AttentionModel:
        """Move the weights; returns the model."""

    def kv_groups(self) -> list[list[int]]:
        """For GQA: the query heads that share each key/value head."""
        rep = self.n_heads // self.n_kv_heads
        return [list(range(g * rep, (g + 1) * rep)) for g in range(self.n_kv_heads)]
