"""/sdpa-gqa's link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state with
it (core/state.py)."""

from core.kv_cache.memory import DTYPE_BYTES
from core.state import Choice, Flag, Int, State

from . import configs

CUSTOM = "custom"  # the model picker's entry for a configuration typed in
LIVE_N = (128, 256, 512, 1024)

STATE = State(
    # the backends part's live run
    Choice("sd_n", 256, options=LIVE_N, number=int),
    Flag("sd_causal", False),
    # the KV cache of a model as MHA, GQA and MQA
    Choice("cfg", "llama-3-8b", options=(*configs.PRESETS, CUSTOM)),
    Int("layers", 32, 1, 512),
    Int("heads", 32, 1, 256),
    Int("kv", 8, 1, 256),
    Int("hd", 128, 1, 1024),
    Int("ctx", 8192, 1, 10_000_000),
    Int("batch", 1, 1, 4096),
    Choice("dtype", "bfloat16", options=tuple(DTYPE_BYTES)),
)


def model_config(s, custom_name: str = CUSTOM) -> configs.ModelConfig | None:
    """The configuration the state picks: a preset, or the typed-in one (None when its heads do not divide into
    key/value heads)."""
    if s.cfg != CUSTOM:
        return configs.PRESETS[s.cfg]
    if s.kv > s.heads or s.heads % s.kv:
        return None
    return configs.ModelConfig(custom_name, s.layers, s.heads, s.kv, s.hd, max_context=0, dtype="bfloat16", source="")
