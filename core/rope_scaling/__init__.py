"""Scaled RoPE for contexts longer than training: the math behind the /rope-scaling page.

- `methods`: transformers' own RoPE functions wrapped (rope_parameters, scaled_inv_freq, rope_scaling_applied).
- `curves`: what follows from (inv_freq, attention_factor): wavelengths, ratios, q.k by distance, resolution.
- `formulas`: the dataclasses the page's formula figures draw.
- `long_context`: SmolLM2's loss per position on a long text, with and without scaling.
- `experiment`: the committed results of that experiment, and short live reruns, as the page shows them.

The names most callers need are re-exported here (`from core import rope_scaling as rs; rs.scaled_inv_freq`).
"""

from .curves import (
    interpolation_ratio,
    log_bins,
    method_seq_len,
    method_table,
    neighbour_angle,
    pair_classes,
    qk_by_distance,
    qk_decay_envelope,
    resolution_by_factor,
    wavelengths,
)
from .methods import (
    METHODS,
    SMOLLM2_ROPE,
    longrope_factors,
    rope_config,
    rope_parameters,
    rope_scaling_applied,
    scaled_inv_freq,
    scaled_rotary_embedding,
)

__all__ = [
    "METHODS",
    "SMOLLM2_ROPE",
    "interpolation_ratio",
    "log_bins",
    "longrope_factors",
    "method_seq_len",
    "method_table",
    "neighbour_angle",
    "pair_classes",
    "qk_by_distance",
    "qk_decay_envelope",
    "resolution_by_factor",
    "rope_config",
    "rope_parameters",
    "rope_scaling_applied",
    "scaled_inv_freq",
    "scaled_rotary_embedding",
    "wavelengths",
]
