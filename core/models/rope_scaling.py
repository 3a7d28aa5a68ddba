"""Scaled RoPE for contexts longer than training, computed by transformers' own code (the one place in the
project that calls transformers' RoPE functions; core/rope_scaling/ builds the page's curves from what they return).

Nothing here re-implements a scaling method: each function builds a config whose `rope_parameters` names the
method, then calls transformers' `ROPE_INIT_FUNCTIONS[rope_type]` (or the Llama rotary embedding's
`compute_default_rope_parameters` for plain RoPE), which return (inv_freq, attention_factor). What the pages
plot from those two numbers is in `curves`.

- linear (position interpolation, Chen et al. 2023): every theta_i divided by the factor s.
- dynamic (dynamic NTK, /u/emozilla): the base is raised for the *current* sequence length L,
  base * (s*L/L0 - (s - 1))^(d/(d-2)); nothing changes while L <= L0.
  Static NTK-aware scaling (/u/bloc97) is another method: the base raised once, base * s^(d/(d-2)), for any L;
  transformers' 'dynamic' type is the dynamic one, whose factor grows with L.
- yarn (Peng et al. 2023): fast pairs (many turns within L0) kept, slow pairs interpolated by s, a ramp between,
  and cos/sin multiplied by attention_factor = 0.1 ln(s) + 1.
- longrope (Ding et al. 2024): one searched rescale factor per pair; attention_factor sqrt(1 + ln s / ln L0).
- llama3: wavelengths longer than L0 interpolated by s, shorter than L0/4 kept, a smooth blend between.

Terms: L0 is the training context ("original_max_position_embeddings"); a pair is *extrapolated* when its theta
is unchanged (positions beyond L0 give it angles it never saw only if its wavelength exceeds L0), and
*interpolated* when theta is divided by s (positions are squeezed back into the range seen in training).
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from transformers import LlamaConfig

METHODS = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")

# SmolLM2-135M (config of HuggingFaceTB/SmolLM2-135M-Instruct): head_dim 576 / 9 = 64, rope_theta 100000,
# trained for 8,192 positions.
SMOLLM2_ROPE = {"head_dim": 64, "rope_theta": 100000.0, "original_context": 8192}

# llama3's own defaults (Llama 3.1 config): keep wavelengths < L0/4, interpolate wavelengths > L0.
LLAMA3_LOW_FREQ_FACTOR = 1.0
LLAMA3_HIGH_FREQ_FACTOR = 4.0


def longrope_factors(factor: float, head_dim: int, rope_theta: float, original_context: int) -> list[float]:
    """LongRoPE's per-pair factors are found by an evolutionary search for each model, and SmolLM2 has none.
    We use the search's YaRN starting point (the LongRoPE paper seeds its population with PI, NTK and YaRN):
    long_factor_i = theta_i / theta_i^yarn, computed from transformers' YaRN at the same factor. LongRoPE then
    applies them with its own attention factor, so the two curves differ only in that factor."""
    if factor <= 1.0:
        return [1.0] * (head_dim // 2)
    base, _ = scaled_inv_freq(
        "default", 1.0, head_dim=head_dim, rope_theta=rope_theta, original_context=original_context
    )
    yarn, _ = scaled_inv_freq(
        "yarn", factor, head_dim=head_dim, rope_theta=rope_theta, original_context=original_context
    )
    return (base / yarn).tolist()


def rope_parameters(
    method: str, factor: float = 1.0, *, head_dim: int = 64, rope_theta: float = 100000.0, original_context: int = 8192
) -> dict:
    """The `rope_parameters` dict a transformers config carries for `method` at scale factor `factor`."""
    if method not in METHODS:
        raise ValueError(f"unknown RoPE method {method!r}; expected one of {METHODS}")
    if not (math.isfinite(factor) and factor >= 1.0):
        raise ValueError("factor must be a finite number >= 1")
    params: dict = {"rope_type": method, "rope_theta": float(rope_theta)}
    if method == "default":
        return params
    params["factor"] = float(factor)
    if method in ("yarn", "llama3", "longrope"):
        params["original_max_position_embeddings"] = int(original_context)
    if method == "llama3":
        params.update(low_freq_factor=LLAMA3_LOW_FREQ_FACTOR, high_freq_factor=LLAMA3_HIGH_FREQ_FACTOR)
    if method == "longrope":
        params["long_factor"] = longrope_factors(factor, head_dim, rope_theta, original_context)
        params["short_factor"] = [1.0] * (head_dim // 2)
    return params


def rope_config(
    method: str,
    factor: float = 1.0,
    *,
    head_dim: int = 64,
    rope_theta: float = 100000.0,
    original_context: int = 8192,
    base_config: LlamaConfig | None = None,
) -> LlamaConfig:
    """A Llama config for `method` (a copy of base_config when given, else a one-head stub with the head size).
    max_position_embeddings is L0 for dynamic (transformers reads it as the original length) and s * L0 for the
    methods that take L0 from `original_max_position_embeddings`."""
    # transformers is imported here, where a config is first built, not with the module: importing it (and the
    # torch compiler parts it pulls in) takes 2-4 s, which every page paid at a server's start (lessons and rooms
    # import this module) though only the RoPE curves and a model's run need it.
    from transformers import LlamaConfig
    from transformers.utils import logging as hf_logging

    params = rope_parameters(
        method, factor, head_dim=head_dim, rope_theta=rope_theta, original_context=original_context
    )
    target = original_context if method in ("default", "linear", "dynamic") else int(round(original_context * factor))
    if base_config is not None:
        config = copy.deepcopy(base_config)
        config.rope_parameters = params
        if getattr(config, "head_dim", None) is None:  # Mixtral's config holds None; YaRN's function reads it as is
            config.head_dim = head_dim
        config.max_position_embeddings = target
        config.standardize_rope_params()
        return config
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # e.g. llama3 at factor 1 warns that L0 is not below the target length
    try:
        return LlamaConfig(
            hidden_size=head_dim,
            num_attention_heads=1,
            num_key_value_heads=1,
            head_dim=head_dim,
            num_hidden_layers=1,
            intermediate_size=8,
            vocab_size=8,
            max_position_embeddings=target,
            rope_parameters=params,
        )
    finally:
        hf_logging.set_verbosity(verbosity)


def scaled_inv_freq(
    method: str,
    factor: float = 1.0,
    seq_len: int | None = None,
    *,
    head_dim: int = 64,
    rope_theta: float = 100000.0,
    original_context: int = 8192,
) -> tuple[torch.Tensor, float]:
    """(inv_freq (d/2,), attention_factor) from transformers for `method`. seq_len matters for dynamic (the
    current length) and longrope (long factors beyond L0); None means 'at L0'."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = rope_config(method, factor, head_dim=head_dim, rope_theta=rope_theta, original_context=original_context)
    if method == "default":
        inv_freq, attention_factor = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        inv_freq, attention_factor = ROPE_INIT_FUNCTIONS[method](config, None, seq_len=seq_len)
    return inv_freq.double(), float(attention_factor)


def scaled_rotary_embedding(config, method: str, factor: float, original_context: int | None = None, rotary_class=None):
    """The model's rotary embedding (rotary_class: the class of its own module, Llama's when None, so cos and sin come in the layout
    its attention applies: gpt-oss's hold half a head) for `config` (a real model's config) with `method` at
    `factor`. The model's own config is not touched: the rotary module gets a copy."""
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    theta = config.rope_parameters["rope_theta"]
    original = original_context or config.max_position_embeddings
    new_config = rope_config(
        method, factor, head_dim=head_dim, rope_theta=theta, original_context=original, base_config=config
    )
    if rotary_class is None:
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding as rotary_class
    return rotary_class(new_config)
