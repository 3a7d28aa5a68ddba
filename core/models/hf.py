"""Any transformers model behind the model contract.

We register our own attention function with transformers' `AttentionInterface`. It records each layer's
query and key exactly as the model computed them (after RoPE, before K/V are repeated for GQA), then hands
them to transformers' SDPA implementation, so the model's output is the SDPA output, unchanged. The
weights a page shows are recomputed from those q and k (core/models/base.py: Trace.attention).
"""
from __future__ import annotations

import contextvars

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from .base import AttentionModel, Batch, Trace

ATTN_IMPLEMENTATION = "attention_lab"

# One recorder per running forward pass. A ContextVar keeps concurrent Streamlit sessions (threads) apart.
_recording: contextvars.ContextVar[list | None] = contextvars.ContextVar("attention_lab_recording", default=None)


def _recording_attention(module, query, key, value, attention_mask, scaling=None, **kwargs):
    record = _recording.get()
    if record is not None:
        record.append((query.detach(), key.detach(), scaling))
    return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, **kwargs)


AttentionInterface.register(ATTN_IMPLEMENTATION, _recording_attention)
AttentionMaskInterface.register(ATTN_IMPLEMENTATION, sdpa_mask)


class HFAttentionModel(AttentionModel):
    """Wraps a transformers `PreTrainedModel` and its tokenizer."""

    def __init__(self, model, tokenizer, name: str, position_kind: str, is_causal: bool,
                 weights_note: str = "", random_init: bool = False):
        model.config._attn_implementation = ATTN_IMPLEMENTATION
        self.model = model.eval()
        self.tokenizer = tokenizer
        cfg = model.config
        self.name = name
        self.n_layers = cfg.num_hidden_layers
        self.n_heads = cfg.num_attention_heads
        self.n_kv_heads = getattr(cfg, "num_key_value_heads", None) or self.n_heads
        self.max_positions = cfg.max_position_embeddings
        self.position_kind = position_kind
        self.is_causal = is_causal
        self.weights_note = weights_note
        self.random_init = random_init
        # Which token ids are "special" for the hide-special-tokens toggle.
        self._special_ids = set(tokenizer.all_special_ids)

    @property
    def config(self):
        return self.model.config

    def tokenize(self, texts: list[str], max_tokens: int | None = None) -> Batch:
        limit = min(max_tokens or self.max_positions, self.max_positions)
        texts = [t if t else "" for t in texts]
        enc = self.tokenizer(texts, padding=True, truncation=True, max_length=limit, return_tensors="pt",
                             return_overflowing_tokens=False)
        full = self.tokenizer(texts, truncation=False)["input_ids"]
        truncated = [len(f) > limit for f in full]
        ids = enc["input_ids"]
        tokens = [self.display_tokens(row.tolist()) for row in ids]
        special = torch.tensor([[i in self._special_ids for i in row.tolist()] for row in ids], dtype=torch.bool)
        special |= enc["attention_mask"] == 0
        return Batch(ids, enc["attention_mask"], tokens, special, truncated, list(texts))

    def display_tokens(self, ids: list[int]) -> list[str]:
        """Readable token strings: byte-level BPE pieces are decoded one by one (so CJK shows as text)."""
        out = []
        for i in ids:
            piece = self.tokenizer.decode([i], clean_up_tokenization_spaces=False)
            out.append(piece if piece.strip() else self.tokenizer.convert_ids_to_tokens(i))
        return out

    @torch.no_grad()
    def run(self, batch: Batch) -> Trace:
        record: list = []
        token = _recording.set(record)
        try:
            out = self.model(input_ids=batch.input_ids.to(self.model.device),
                             attention_mask=batch.attention_mask.to(self.model.device),
                             output_hidden_states=True, **self._run_kwargs())
        finally:
            _recording.reset(token)
        queries = [q.float().cpu() for q, _, _ in record]
        keys = [k.float().cpu() for _, k, _ in record]
        scale = record[0][2] if record[0][2] is not None else queries[0].shape[-1] ** -0.5
        logits = getattr(out, "logits", None)
        router = getattr(out, "router_logits", None)
        return Trace(batch=batch, queries=queries, keys=keys, scale=float(scale), is_causal=self.is_causal,
                     hidden_states=[h.float().cpu() for h in (out.hidden_states or [])],
                     logits=None if logits is None else logits.float().cpu(),
                     router_logits=None if router is None else [r.float().cpu() for r in router])

    def _run_kwargs(self) -> dict:
        return {"use_cache": False} if self.is_causal else {}
