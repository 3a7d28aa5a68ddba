"""How much memory a decoder's key/value cache takes: the one formula, used by /kv-cache (the cache of a real
generation, next to the tensors it measures) and /sdpa-gqa (the calculator for published model configs).

While generating, a decoder keeps the key and the value vector of every earlier token, in every layer and every
key/value head, so that a new token only has to compute its own:

    bytes = 2 (K and V) * layers * kv_heads * head_dim * context * bytes_per_value * batch

Pure arithmetic: no torch.
"""

from __future__ import annotations

# Bytes per stored number. fp8 and int8 caches exist in serving stacks (vLLM, TensorRT-LLM); int4 caches
# (KIVI-style quantisation) store half a byte per number plus small per-group scales, ignored here.
DTYPE_BYTES = {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}


def kv_cache_bytes(
    layers: int, kv_heads: int, head_dim: int, context: int, bytes_per_value: float, batch: int = 1
) -> float:
    """2 * layers * kv_heads * head_dim * context * bytes_per_value * batch: keys and values of `context` tokens
    for `batch` sequences. A float, because 4-bit caches store half a byte per number."""
    for name, value in (("layers", layers), ("kv_heads", kv_heads), ("head_dim", head_dim), ("batch", batch)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1")
    if context < 0 or bytes_per_value <= 0:
        raise ValueError("context must be >= 0 and bytes_per_value > 0")
    return 2.0 * layers * kv_heads * head_dim * context * bytes_per_value * batch


def cached_positions(context: int, sliding_window: int | None = None) -> int:
    """Positions a cache must hold: all of them, or the last `sliding_window` with a rolling buffer (Mistral)."""
    return context if sliding_window is None else min(context, sliding_window)


def dynamic_cache_positions(context: int, sliding_window: int | None = None) -> int:
    """Positions transformers' cache keeps after `context` tokens, as the app runs a model: all of them, or in a
    sliding-window layer the last W - 1 (the next token joins them and sees W keys; the paper's rolling buffer of
    W, `cached_positions`, also holds the token being written)."""
    return context if sliding_window is None else min(context, sliding_window - 1)


def max_context_for_budget(
    budget_bytes: float, layers: int, kv_heads: int, head_dim: int, bytes_per_value: float, batch: int = 1
) -> int:
    """The longest context whose cache fits in `budget_bytes` (the formula solved for context, rounded down)."""
    per_token = kv_cache_bytes(layers, kv_heads, head_dim, 1, bytes_per_value, batch)
    return int(budget_bytes // per_token) if budget_bytes > 0 else 0


def model_cache_bytes(caps, context: int, bytes_per_value: float = DTYPE_BYTES["float32"]) -> float | None:
    """The key/value cache a decoder with these capabilities (core/models/capabilities.py) holds after `context`
    tokens, in bytes (float32: as the pages run it): every layer's keys and values per key/value head, a
    sliding-window layer only its last W - 1 (dynamic_cache_positions: as transformers' cache and /kv-cache count
    them), values of their own width where they differ
    from the keys'. None where there is no such cache: an encoder reads its whole text at once and generates
    nothing, an encoder-decoder's cache is its decoder's, and a latent-attention model (DeepSeek) caches one
    compressed vector per token and layer instead."""
    if caps.kind != "decoder" or caps.kv_latent_dim is not None:
        return None
    widths = (caps.head_dim + (caps.value_dim or caps.head_dim)) / (2 * caps.head_dim)  # values as wide as keys: 1
    windows = caps.sliding_window or (None,) * caps.n_layers
    return widths * sum(
        kv_cache_bytes(1, caps.n_kv_heads, caps.head_dim, dynamic_cache_positions(context, w), bytes_per_value)
        for w in windows
    )
