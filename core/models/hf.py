"""Any transformers model behind the model contract.

We register our own attention function with transformers' `AttentionInterface`. It records each layer's
query and key exactly as the model computed them (after RoPE, before K/V are repeated for GQA), then hands
them to transformers' SDPA implementation, so the model's output is the SDPA output, unchanged. The
weights a page shows are recomputed from those q and k (core/models/base.py: Trace.attention).
For long documents, `layer_qk` records one layer only and stops the pass there.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
from collections.abc import Callable
from contextlib import contextmanager

import torch

from ..sdpa import scale_or_default
from . import hooks
from .base import AttentionModel, Batch, KVCache, LayerFeatures, Trace
from .capabilities import Capabilities, capabilities_of
from .rope_scaling import scaled_rotary_embedding
from .tokens import display_tokens
from .weights import EmbeddingParts, EncoderLayerWeights, read_embedding_parts, read_encoder_layer

ATTN_IMPLEMENTATION = "attention_lab"
ALIBI_POSITIONS = 2048  # what a page may read of a text for a model without a position table (Bloom's training length)
# Soft-capping (Gemma 2) and learned sinks (gpt-oss) cannot run under SDPA: such models run their own eager
# attention function, which wants an additive float mask, so they get an implementation name of their own.
ATTN_IMPLEMENTATION_EAGER = "attention_lab_eager"
# A fast tokenizer keeps its padding and truncation settings in shared state that every call resets: two
# threads (two visitors of one server) tokenizing at once got unpadded batches ("Unable to create tensor").
# So every call goes through one lock: the model's `tokenizer` is a LockedTokenizer, whoever calls it.
TOKENIZER_LOCK = threading.RLock()


class LockedTokenizer:
    """A tokenizer whose encoding calls hold TOKENIZER_LOCK; every other attribute is the tokenizer's own."""

    _LOCKED = ("encode", "encode_plus", "batch_encode_plus", "pad")

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer

    def __len__(self) -> int:  # the vocabulary size, as the tokenizer's own len()
        return len(self._tokenizer)

    def __call__(self, *args, **kwargs):
        with TOKENIZER_LOCK:
            return self._tokenizer(*args, **kwargs)

    def __getattr__(self, name):
        value = getattr(self._tokenizer, name)
        if name in self._LOCKED and callable(value):

            def locked(*args, **kwargs):
                with TOKENIZER_LOCK:
                    return value(*args, **kwargs)

            return locked
        return value


def layer_features(module, kwargs) -> LayerFeatures:
    """The features the model's attention module passed for this call (transformers' own keyword names)."""
    sinks = getattr(module, "sinks", None)
    return LayerFeatures(
        window=kwargs.get("sliding_window"),
        softcap=kwargs.get("softcap"),
        sinks=None if sinks is None else sinks.detach().float().cpu(),
    )


def _models_own_eager(module, query, key, value, attention_mask, **kwargs):
    """The eager attention function of the module's own modeling file (every model family has one)."""
    own = getattr(sys.modules[type(module).__module__], "eager_attention_forward", None)
    if own is None:
        raise RuntimeError(f"{type(module).__name__}: its modeling file has no eager_attention_forward")
    return own(module, query, key, value, attention_mask, **kwargs)


def _recorder(forward):
    def recording_attention(module, query, key, value, attention_mask, scaling=None, **kwargs):
        hooks.attention_call(module, query, key, scaling, layer_features(module, kwargs))
        return forward(module, query, key, value, attention_mask, scaling=scaling, **kwargs)

    return recording_attention


# transformers is imported by the functions below, when a model is wrapped or run, never by importing this module:
# the model modules that pages and lessons import for their names and constants import this one, and transformers
# (with the torch compiler parts it pulls in) took 2-4 s of every server's first page, a page without a model too.


@functools.cache
def register_attention_functions() -> None:
    """Our two attention implementations under their names in transformers' registries (once per process)."""
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import AttentionMaskInterface, eager_mask, sdpa_mask

    AttentionInterface.register(ATTN_IMPLEMENTATION, _recorder(sdpa_attention_forward))
    AttentionMaskInterface.register(ATTN_IMPLEMENTATION, sdpa_mask)
    AttentionInterface.register(ATTN_IMPLEMENTATION_EAGER, _recorder(_models_own_eager))
    AttentionMaskInterface.register(ATTN_IMPLEMENTATION_EAGER, eager_mask)


@functools.cache
def cache_keyword() -> str:
    """The installed transformers' name of the cache keyword and output field: transformers renamed
    past_key_values -> cache (5.24 warns, 5.40 removes the old name), and pyproject allows versions from before."""
    from transformers.modeling_outputs import CausalLMOutputWithPast

    return "cache" if "cache" in {f.name for f in dataclasses.fields(CausalLMOutputWithPast)} else "past_key_values"


# Families whose attention adds its position bias inside its own forward and never calls the attention interface,
# read by hooks on their own attention module instead: class name -> the function that installs them.
_OWN_ATTENTION_READERS: dict = {}


def _reads_own_attention(class_name: str):
    def register(install):
        _OWN_ATTENTION_READERS[class_name] = install
        return install

    return register


@_reads_own_attention("BloomAttention")
def _read_bloom(attention) -> None:
    """Bloom: q and k from its fused projection (its own _reshape), the keys after its cache's update when it has
    one, and its ALiBi slopes (its modeling file's _get_alibi_slopes) as the layer's feature; its scale is
    inv_norm_factor. Pending q and k live in thread-local state (two visitors may run one model at once)."""
    slopes = sys.modules[type(attention).__module__]._get_alibi_slopes(attention.num_heads, "cpu")
    pending = threading.local()

    def projected(_, __, fused):
        query, key, _ = attention._reshape(fused)
        pending.qk = (query, key)

    def started(_, args, kwargs):
        pending.cache = kwargs.get("layer_past")

    def finished(*_):
        query, key = pending.qk
        cache, pending.cache, pending.qk = getattr(pending, "cache", None), None, None
        if cache is not None and len(cache.layers) > attention.layer_idx:
            key = cache.layers[attention.layer_idx].keys  # every cached key, this step's included
        hooks.attention_call(attention, query, key, attention.inv_norm_factor, LayerFeatures(alibi=slopes.float()))

    attention.query_key_value.register_forward_hook(projected)
    attention.register_forward_pre_hook(started, with_kwargs=True)
    attention.register_forward_hook(finished)


def reads_own_attention(model) -> bool:
    """Whether `model` has attention modules that the hooks above read (Bloom)."""
    return any(type(m).__name__ in _OWN_ATTENTION_READERS for m in model.modules())


def _install_own_attention_readers(model) -> None:
    with hooks._install_lock:
        if getattr(model, "_attention_lab_own_readers", False):
            return
        for module in model.modules():
            install = _OWN_ATTENTION_READERS.get(type(module).__name__)
            if install is not None:
                install(module)
        model._attention_lab_own_readers = True


def scale_of(scaling: float | None, head_dim: int) -> float:
    """The scale the model passed to its attention function, or 1/sqrt(d) when it passed none (SDPA's default)."""
    return scale_or_default(scaling, head_dim)


def needs_eager(config) -> bool:
    """Soft-capped scores or learned sinks: transformers' SDPA path refuses or drops them."""
    text = getattr(config, "get_text_config", lambda: config)()
    return getattr(text, "attn_logit_softcapping", None) is not None or text.model_type == "gpt_oss"


class HFAttentionModel(AttentionModel):
    """Wraps a transformers `PreTrainedModel` and its tokenizer.

    `model` may be a bare encoder/decoder (BertModel, LlamaModel) or one with a head (LlamaForCausalLM): the
    head only adds `Trace.logits`. The tokenizer is set to right padding (positions then match an unpadded
    run: RoPE and learned position tables count from the first token) and, if it has no padding token, pads
    with its end-of-sequence token; padded positions are masked out everywhere, so which id fills them never
    changes a real token's numbers.
    """

    def __init__(
        self,
        model,
        tokenizer,
        name: str,
        position_kind: str,
        is_causal: bool,
        random_init: bool = False,
        weights: tuple[str, dict] = ("", {}),
    ):
        register_attention_functions()
        self.attn_implementation = ATTN_IMPLEMENTATION_EAGER if needs_eager(model.config) else ATTN_IMPLEMENTATION
        model.set_attn_implementation(self.attn_implementation)
        _install_own_attention_readers(model)
        self.model = model.eval()
        self.tokenizer = LockedTokenizer(tokenizer)
        tokenizer.padding_side = "right"
        if tokenizer.pad_token is None:
            if tokenizer.eos_token is None:
                raise ValueError(f"{name}: the tokenizer has neither a padding nor an end-of-sequence token")
            tokenizer.pad_token = tokenizer.eos_token
        cfg = model.config
        self.name = name
        self.n_layers = cfg.num_hidden_layers
        self.n_heads = cfg.num_attention_heads
        self.n_kv_heads = getattr(cfg, "num_key_value_heads", None) or self.n_heads
        # positions a text may use (capabilities: a RoBERTa-style table holds two fewer tokens than its rows)
        self.max_positions = capabilities_of(cfg).max_positions or (
            ALIBI_POSITIONS if position_kind == "alibi" else cfg.max_position_embeddings  # ALiBi: no table
        )
        self.position_kind = position_kind
        self.is_causal = is_causal
        self.weights = weights
        self.random_init = random_init
        # Which token ids are "special" for the hide-special-tokens toggle.
        self._special_ids = set(tokenizer.all_special_ids)

    @property
    def config(self):
        return self.model.config

    def tokenize(self, texts: list[str], max_tokens: int | None = None) -> Batch:
        """Right-padded batch of at most min(max_tokens, max_positions) tokens per text, specials added as the
        tokenizer does (MiniLM: [CLS] ... [SEP]; SmolLM2 adds none). Raises ValueError for a text that gives
        no token at all (the empty string, for a tokenizer that adds no special tokens): there is nothing to
        run. Text is always text: a '<script>' tag is just characters to the tokenizer."""
        limit = min(max_tokens or self.max_positions, self.max_positions)
        texts = ["" if t is None else str(t) for t in texts]
        if not texts:
            raise ValueError("no texts to tokenize")
        enc = self.tokenizer(texts, padding=True, truncation=True, max_length=limit, return_tensors="pt")
        # A second pass without the cut tells whether anything was dropped (verbose=False: no length warning).
        full = self.tokenizer(texts, truncation=False, verbose=False)["input_ids"]
        if int(enc["attention_mask"].sum(-1).min()) == 0:
            raise ValueError(f"{self.name}: a text gives no tokens (is it empty?)")
        truncated = [len(f) > limit for f in full]
        ids, mask = enc["input_ids"], enc["attention_mask"]
        special = torch.tensor([[i in self._special_ids for i in row] for row in ids.tolist()], dtype=torch.bool)
        special |= mask == 0
        tokens = [
            display_tokens(self.tokenizer, row.tolist(), row_special.tolist()) for row, row_special in zip(ids, special)
        ]
        return Batch(ids, mask, tokens, special, truncated, texts)

    # --- tokens: everything a topic asks of the tokenizer, so nothing outside core/models touches it ----------

    def encode(self, text: str, special_tokens: bool = False) -> list[int]:
        """The ids of `text`, whole (no cut), with or without the tokenizer's own special tokens."""
        return list(self.tokenizer(str(text or ""), add_special_tokens=special_tokens, verbose=False)["input_ids"])

    def offsets(self, text: str, max_length: int) -> tuple[list[int], list[tuple[int, int]]]:
        """(ids, (start, end) character span of each) of the first max_length tokens, specials included."""
        enc = self.tokenizer(text, return_offsets_mapping=True, truncation=True, max_length=max_length)
        return list(enc["input_ids"]), [tuple(span) for span in enc["offset_mapping"]]

    @property
    def eos_id(self) -> int | None:
        """The config's end-of-sequence id when it names one id (some configs list several, or none)."""
        eos = getattr(self.model.config, "eos_token_id", None)
        return eos if isinstance(eos, int) else None

    @property
    def special_ids(self) -> set[int]:
        return set(self._special_ids)

    def labels(self, ids: list[int], special: list[bool] | None = None) -> list[str]:
        """One readable label per id (core/models/tokens.py); special[i]: keep the token's own spelling."""
        special = [i in self._special_ids for i in ids] if special is None else special
        return display_tokens(self.tokenizer, list(ids), list(special))

    def token_strings(self, ids: list[int]) -> list[str]:
        """Each id alone as the text it stands for (a word piece with its leading space)."""
        pieces = self.tokenizer.convert_ids_to_tokens(list(ids))
        return [self.tokenizer.convert_tokens_to_string([p]) for p in pieces]

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(list(ids))

    def affixes(self) -> tuple[list[int], list[int]]:
        """The special ids the tokenizer puts before and after a text (MiniLM: [CLS] and [SEP]; SmolLM2: none)."""
        bare, full = self.encode("a"), self.encode("a", special_tokens=True)
        p = next(p for p in range(len(full) - len(bare) + 1) if full[p : p + len(bare)] == bare)
        return full[:p], full[p + len(bare) :]

    def ordinary_ids(self) -> torch.Tensor:
        """Every vocabulary id that is not a special or unused/control token (what random sequences draw from)."""
        pieces = self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer))))
        keep = [
            i
            for i, p in enumerate(pieces)
            if i not in self._special_ids
            and p
            and not p.startswith("[unused")
            and not (p.startswith("<") and p.endswith(">"))
        ]
        return torch.tensor(keep, dtype=torch.long)

    def batch_of_ids(self, rows: list[list[int]], texts: list[str] | None = None, truncated=None) -> Batch:
        """A Batch of id rows of equal length (no padding): the one way to run ids that did not come from
        tokenize (random sequences, a document cut past the trained context)."""
        if not rows or len({len(r) for r in rows}) != 1 or not rows[0]:
            raise ValueError("need rows of ids of one non-zero length")
        ids = torch.tensor(rows, dtype=torch.long)
        special = torch.tensor([[i in self._special_ids for i in row] for row in rows], dtype=torch.bool)
        tokens = [self.labels(row, s) for row, s in zip(rows, special.tolist())]
        texts = texts if texts is not None else [self.decode(row) for row in rows]
        truncated = truncated if truncated is not None else [False] * len(rows)
        return Batch(ids, torch.ones_like(ids), tokens, special, list(truncated), list(texts))

    @contextmanager
    def hooked(
        self,
        record_qk: bool = False,
        record_layers: frozenset[int] | None = None,
        stop_after: int | None = None,
        head_edits: dict[int, Callable[[torch.Tensor], torch.Tensor | None]] | None = None,
        residual: bool = False,
        after_block: Callable[[int], None] | None = None,
        rotary: torch.nn.Module | None = None,
    ):
        """The contract's one way into a forward pass (core/models/hooks.py): record q and k per layer
        (record_qk, record_layers, stop_after), replace or read heads' outputs before W^O (head_edits), read the
        residual stream (residual), progress after each block (after_block), a scaled rotary module (rotary).
        Session-safe: only this thread's passes inside the block are touched."""
        asked = dict(record_qk=record_qk, record_layers=record_layers, stop_after=stop_after,
                     head_edits=head_edits or {}, residual=residual, after_block=after_block, rotary=rotary)  # fmt: skip
        with hooks.hooked(self.model, self.model.base_model, self.n_heads, **asked) as run:
            yield run

    def forward(self, batch: Batch, logits: bool = True, output_hidden_states: bool = False) -> object:
        """One plain forward pass of the wrapped model on a batch (the one place that builds its inputs)."""
        model = self.model if logits else self.model.base_model
        return model(
            input_ids=batch.input_ids.to(self.model.device),
            attention_mask=batch.attention_mask.to(self.model.device),
            output_hidden_states=output_hidden_states,
            **self._run_kwargs(),
        )

    @torch.no_grad()
    def run(self, batch: Batch, logits: bool = True, hidden_states: bool = True) -> Trace:
        """One forward pass (SDPA). logits=False skips the vocabulary-sized output layer (about a fifth of
        SmolLM2's time and 200 KB per token) when only attention is wanted; hidden_states=False drops the
        (L + 1) residual-stream tensors."""
        with self.hooked(record_qk=True) as record:
            out = self.forward(batch, logits=logits, output_hidden_states=hidden_states)
        self._check_calls(record.calls)
        kept = [record.kept[layer] for layer in range(self.n_layers)]
        queries = [q.float().cpu() for q, _, _ in kept]
        keys = [k.float().cpu() for _, k, _ in kept]
        out_logits = getattr(out, "logits", None)
        router = getattr(out, "router_logits", None)
        return Trace(
            batch=batch,
            queries=queries,
            keys=keys,
            scale=scale_of(kept[0][2], queries[0].shape[-1]),
            is_causal=self.is_causal,
            hidden_states=[h.float().cpu() for h in (getattr(out, "hidden_states", None) or [])],
            logits=None if out_logits is None else out_logits.float().cpu(),
            router_logits=None if router is None else [r.float().cpu() for r in router],
            features=[record.features[layer] for layer in range(self.n_layers)],
        )

    @torch.no_grad()
    def layer_qk(self, batch: Batch, layer: int) -> tuple[torch.Tensor, torch.Tensor, float]:
        """(q (B, H, n, d), k (B, H_kv, n, d), scale) of ONE layer, exactly as `run` records them (after RoPE,
        before K is repeated for GQA), float32 on the CPU. For long documents: no other layer's q/k is kept
        (all 30 of SmolLM2's take ~750 MB at 8k tokens) and the pass stops before the layer's own attention,
        so the layers above it never run. Weights from these equal `run(batch).layer_attention(layer)`."""
        if not 0 <= layer < self.n_layers:
            raise ValueError(f"{self.name} has layers 0..{self.n_layers - 1}, not {layer}")
        with self.hooked(record_qk=True, record_layers=frozenset([layer]), stop_after=layer) as record:
            try:
                self.forward(batch, logits=False, output_hidden_states=False)
            except hooks.StopForward:
                pass
        if layer not in record.kept:
            raise RuntimeError(
                f"{self.name}: the pass recorded attention in {record.calls} layers and never reached "
                f"layer {layer}; does this model call transformers' attention interface?"
            )
        q, k, scaling = record.kept[layer]
        return q.float().cpu(), k.float().cpu(), scale_of(scaling, q.shape[-1])

    @torch.no_grad()
    def residual_streams(self, batch: Batch) -> tuple[list[torch.Tensor], object]:
        """([h_0 .. h_L] each (B, n, D): the input of every block and the output of the last, before the final
        norm) and the pass's output (its logits for a decoder)."""
        with self.hooked(residual=True) as run:
            out = self.forward(batch, logits=True)
        return run.streams, out

    @torch.no_grad()
    def unembed(self, residual: torch.Tensor) -> torch.Tensor:
        """(..., D) residual stream -> (..., V) logits: the final norm, then lm_head, so the last stage equals the
        model's own logits. ValueError for a model without them."""
        norm = hooks.final_norm(self.model.base_model)
        if norm is None:
            raise ValueError(f"{self.name} is not a decoder with a final norm and unembedding")
        return self.lm_head(norm(residual))

    @torch.no_grad()
    def lm_head(self, normed: torch.Tensor) -> torch.Tensor:
        """(..., D) after the final norm -> (..., V) logits, with the family's own final transforms: the logit scale
        (Cohere) and the final soft-cap (Gemma 2), as its head applies them."""
        head = self.model.get_output_embeddings() if hasattr(self.model, "get_output_embeddings") else None
        if head is None or not self.is_causal:
            raise ValueError(f"{self.name} has no language-model head")
        logits = head(normed).float()
        scale, cap = self.capabilities.logit_scale, self.capabilities.final_softcap
        if scale is not None:
            logits = logits * scale
        return logits if cap is None else torch.tanh(logits / cap) * cap

    # --- generation with a cache, one token at a time ---------------------------------------------------------

    def new_cache(self) -> KVCache:
        """An empty key/value cache for this model (transformers' DynamicCache)."""
        from transformers import DynamicCache

        return DynamicCache(config=self.model.config)

    def sliced_cache(self, cache: KVCache, keep: list[int]) -> KVCache:
        """A new cache holding only the positions `keep` of every layer (copies: `cache` stays as it is). Each
        layer's keys and values are (B, H_kv, p, d) -> (B, H_kv, len(keep), d); nothing kept: an empty cache."""
        if any(getattr(layer, "sliding_window", None) for layer in cache.layers):
            raise ValueError(f"{self.name} keeps only a sliding window of keys in some layers: no positions to choose")
        if not keep:
            return self.new_cache()
        from transformers import DynamicCache

        index = torch.as_tensor(keep, dtype=torch.long, device=self.model.device)
        layers = [(layer.keys.index_select(2, index), layer.values.index_select(2, index)) for layer in cache.layers]
        return DynamicCache(ddp_cache_data=layers, config=self.model.config)

    @torch.no_grad()
    def steps_on_kept(
        self, cache: KVCache, token_ids: list[int], positions: list[int], kept: torch.Tensor
    ) -> torch.Tensor:
        """Q single steps on Q sliced caches in one pass (the weights read once, not Q times): the Q tokens go in
        together on top of all L positions of `cache`, and a mask lets token i see the cache positions where
        kept[i] (Q, L) bool is True and its own key, none of the other fed tokens'. Each token's own key and value
        come from its own row, and every kept entry is the cache's, so row i is step(sliced_cache(cache, kept
        positions of i), token_ids[i], positions[i]). Next-token logits (Q, V) on the CPU; `cache` is left as it
        was (the pass grows a new cache around the same tensors)."""
        if any(getattr(layer, "sliding_window", None) for layer in cache.layers):
            raise ValueError(f"{self.name} keeps only a sliding window of keys in some layers: no positions to choose")
        from transformers import DynamicCache

        q, length = len(token_ids), cache.get_seq_length()
        if kept.shape != (q, length) or len(positions) != q:
            raise ValueError(f"kept must be (tokens, cache length) = ({q}, {length}), got {tuple(kept.shape)}")
        if reads_own_attention(self.model):  # Bloom builds its ALiBi from a 2-D padding mask: no 4-D mask there
            rows = [self.sliced_cache(cache, kept[i].nonzero().flatten().tolist()) for i in range(q)]
            return torch.stack([self.step(rows[i], token_ids[i], positions[i])[0].float() for i in range(q)])
        around = DynamicCache(ddp_cache_data=[(layer.keys, layer.values) for layer in cache.layers],
                              config=self.model.config) if length else self.new_cache()  # fmt: skip
        visible = torch.cat([kept.to(torch.bool), torch.eye(q, dtype=torch.bool)], dim=1)
        out = self.model(
            input_ids=self._ids([token_ids]),
            position_ids=self._ids([positions]),
            attention_mask=self._pass_mask(visible),
            use_cache=True,
            **{cache_keyword(): around},
        )
        return out.logits[0].float().cpu()

    @property
    def bytes_per_value(self) -> int:
        """Bytes of one weight (and one cached key or value): 4 for float32."""
        return next(self.model.parameters()).element_size()

    def linear_multiply_adds(self) -> tuple[int, int]:
        """Multiply-adds of one token through (the blocks' linear layers: the attention projections and the MLP,
        in_features x out_features each; the language-model head, 0 without one). Experts kept as one fused tensor
        (a mixture of experts) are not linear layers and are not counted."""
        blocks = sum(m.in_features * m.out_features for m in self.model.base_model.modules()
                     if isinstance(m, torch.nn.Linear))  # fmt: skip
        head = self.model.get_output_embeddings() if self.is_causal else None
        return blocks, (head.in_features * head.out_features if isinstance(head, torch.nn.Linear) else 0)

    @staticmethod
    def cache_bytes(cache: KVCache) -> int:
        """Bytes the cache's key and value tensors hold."""
        return sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))

    @torch.no_grad()
    def prefill(self, cache: KVCache, ids: list[int]) -> None:
        """Fill the cache with `ids` (positions 0 .. len(ids) - 1) in one pass. Through the base model: nothing
        reads the prompt's next-token logits, and the vocabulary-sized output layer was about a fifth of SmolLM2's
        prefill of 511 tokens (2.72 s with it, 2.15 s without: medians of six runs on one thread)."""
        if ids:
            self.model.base_model(input_ids=self._ids([ids]), use_cache=True, **{cache_keyword(): cache})

    @torch.no_grad()
    def step(
        self, cache: KVCache, token_id: int, position: int, record_qk: bool = False
    ) -> tuple[torch.Tensor, object]:
        """Feed one token at `position` on top of `cache` (which grows by one): (next-token logits (V,) on the CPU,
        the HookRun with this step's q and k per layer, on the model's device, when record_qk)."""
        with self.hooked(record_qk=record_qk) as run:
            out = self.model(
                input_ids=self._ids([[token_id]]),
                position_ids=self._ids([[position]]),
                use_cache=True,
                **{cache_keyword(): cache},
            )
        return out.logits[0, -1].cpu(), run

    @torch.no_grad()
    def next_logits(self, ids: list[int]) -> torch.Tensor:
        """Next-token logits (V,) on the CPU after `ids`, from a whole pass without any cache (the reference for the
        cache)."""
        return self.model(input_ids=self._ids([ids]), use_cache=False).logits[0, -1].cpu()

    def _ids(self, rows: list[list[int]]) -> torch.Tensor:
        """Token ids (or positions) as the model's input, on the model's device."""
        return torch.tensor(rows, dtype=torch.long, device=self.model.device)

    # --- the loss of every next token of one long sequence ----------------------------------------------------

    @torch.no_grad()
    def next_token_losses(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor | None = None,
        rope: tuple[str, float, int | None] | None = None,
        block: int = 1024,
        progress: Callable[[float], None] | None = None,
    ) -> torch.Tensor:
        """Cross-entropy (nats) of each next token in one forward pass: entry t is -log p(ids[t+1] | ids[..t]),
        (n - 1,) float32 on the CPU. mask (n, n) bool, True = may attend (None: causal, and SDPA's fused kernel
        never holds the n x n matrix, so 32k tokens fit a CPU). rope = (method, factor, original context): the
        pass runs with transformers' scaled RoPE (core/models/rope_scaling.py) in this pass only. The
        vocabulary-sized logits are made `block` rows at a time (all of 32k x 49,152 would take 6.4 GB).
        progress(fraction) after each layer and at the end."""
        ids = torch.as_tensor(ids).reshape(1, -1).to(self.model.device)
        n = ids.shape[1]
        if n < 2:
            raise ValueError("a loss per next token needs at least two tokens")
        attention_mask = None if mask is None else self._pass_mask(mask)
        asked = {"after_block": None if progress is None else lambda layer: progress(0.9 * (layer + 1) / self.n_layers)}
        if rope is not None:
            asked["rotary"] = self._scaled_rotary(*rope)
        with self.hooked(**asked):
            hidden = self.model.base_model(input_ids=ids, attention_mask=attention_mask, use_cache=False)[0][0]
        targets = ids[0, 1:]
        out = torch.empty(n - 1, dtype=torch.float32)
        for a in range(0, n - 1, block):
            b = min(a + block, n - 1)
            out[a:b] = torch.nn.functional.cross_entropy(
                self.lm_head(hidden[a:b]), targets[a:b], reduction="none"
            ).cpu()
        if progress is not None:
            progress(1.0)
        return out

    def _pass_mask(self, mask: torch.Tensor) -> torch.Tensor:
        """(n, n) bool -> the 4-D mask this model's attention function takes: bool for SDPA, additive for eager."""
        mask = mask.to(self.model.device)[None, None]
        if self.attn_implementation == ATTN_IMPLEMENTATION:
            return mask
        return torch.zeros(mask.shape, device=self.model.device).masked_fill(~mask, torch.finfo(torch.float32).min)

    def _scaled_rotary(self, method: str, factor: float, original_context: int | None = None) -> torch.nn.Module:
        positions = self.capabilities.positions
        if positions.kind != "rope" or positions.rotary_fraction != 1.0:
            raise ValueError(f"{self.name} does not rotate whole heads with RoPE: no scaled RoPE to run")
        if positions.rope_theta is None:  # Gemma 3: a RoPE per layer type, no one base to scale
            raise ValueError(f"{self.name} has no single RoPE base for every layer: no scaled RoPE to run")
        own = getattr(self.model.base_model, "rotary_emb", None)  # the hook layer replaces this module's output
        if not isinstance(own, torch.nn.Module):
            raise ValueError(f"{self.name} has no rotary embedding module to scale")
        rotary = scaled_rotary_embedding(self.config, method, factor, original_context, rotary_class=type(own))
        return rotary.to(self.model.device)

    def output_projections(self) -> list[torch.nn.Module]:
        """Per layer, W^O (its input: the heads' outputs side by side)."""
        return hooks.output_projections(self.model.base_model)

    @property
    def capabilities(self) -> Capabilities:
        """What this model offers the pages (core/models/capabilities.py), read from its config."""
        caps = getattr(self, "_capabilities", None)
        if caps is None:
            caps = self._capabilities = capabilities_of(self.model.config)
        return caps

    def _check_calls(self, calls: int) -> None:
        if calls != self.n_layers:
            raise RuntimeError(
                f"{self.name}: recorded attention in {calls} of {self.n_layers} layers; does "
                f"this model call transformers' attention interface?"
            )

    def _run_kwargs(self) -> dict:
        return {"use_cache": False} if self.is_causal else {}

    def learned_position_embeddings(self) -> torch.Tensor | None:
        """(max_positions, d_model) learned absolute position table added to the token embeddings (BERT-style
        `embeddings.position_embeddings`, GPT-2-style `wpe`), row p for position p, or None for models without one
        (RoPE). A RoBERTa-style table numbers positions after its padding index: its first rows are no position's
        and are left out (514 rows, positions 0 .. 511 in rows 2 .. 513)."""
        base = self.model.base_model
        table = getattr(getattr(base, "embeddings", None), "position_embeddings", None)
        if table is None:
            table = getattr(base, "wpe", None)
        return None if table is None else table.weight.detach().float().cpu()[-self.max_positions :]

    # --- plain tensors for the topics that recompute a layer by hand; the device the weights live on ----------

    def encoder_layer(self, layer: int) -> EncoderLayerWeights:
        """Layer `layer`'s parameters as plain tensors (core/models/weights.py). ValueError, in words, for a model
        that is not a post-LayerNorm BERT-style encoder, or a layer out of range."""
        return read_encoder_layer(self.model.base_model, self.model.config, layer, self.n_heads, self.name)

    @torch.no_grad()
    def token_embeddings(self, ids) -> torch.Tensor:
        """(n, D) the input embedding rows of token ids (n,): no positions, token types or norm added (positions
        come from learned_position_embeddings), float32 on the CPU."""
        table = self.model.get_input_embeddings()
        return table(torch.as_tensor(ids, dtype=torch.long, device=self.device)).float().cpu()

    @torch.no_grad()
    def embedding_parts(self, ids) -> EmbeddingParts:
        """(core/models/weights.py) The addends of the input embedding of token ids (n,) at positions 0 .. n-1 as a
        BERT-style encoder sums them before its LayerNorm, and that norm. ValueError, in words, for another
        layout."""
        positions = self.learned_position_embeddings()
        return read_embedding_parts(self.model.base_model, self.token_embeddings(ids), positions, self.name)

    @torch.no_grad()
    def rotary_cos_sin(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(cos, sin) each (n, d), float32 on the CPU: the model's own rotary module's output for positions
        0 .. n-1 (its attention factor included), what its attention multiplies q and k with. ValueError, in words,
        for a model without one rotary module for every layer."""
        rotary, positions = getattr(self.model.base_model, "rotary_emb", None), self.capabilities.positions
        if not isinstance(rotary, torch.nn.Module) or positions.rope_theta is None or positions.rotary_fraction != 1:
            raise ValueError(f"{self.name} does not turn whole heads with one rotary embedding for every layer")
        probe = torch.zeros(1, n, 1, dtype=next(self.model.parameters()).dtype, device=self.device)
        cos, sin = rotary(probe, torch.arange(n, device=self.device)[None])
        return cos[0].float().cpu(), sin[0].float().cpu()

    @property
    def device(self) -> torch.device:
        """Where the model's weights are (inputs are moved there by `forward`)."""
        return self.model.device

    def to_device(self, device: torch.device | str) -> AttentionModel:
        """Move the weights to `device` ("cuda", "cpu"); returns the model itself."""
        self.model.to(device)
        return self
