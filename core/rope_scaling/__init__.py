"""Scaled RoPE for contexts longer than training: the math behind the /rope-scaling page.

- core/models/rope_scaling.py: transformers' own RoPE functions wrapped (rope_parameters, scaled_inv_freq); a
  model runs with a scaled RoPE through the contract, `HFAttentionModel.next_token_losses(..., rope=...)`.
- `curves`: what follows from (inv_freq, attention_factor): wavelengths, ratios, q.k by distance, resolution.
- `formulas`: the dataclasses the page's formula figures draw.
- `long_context`: SmolLM2's loss per position on a long text, with and without scaling.
- `experiment`: the committed results of that experiment, and short live reruns, as the page shows them.

The names most callers need are re-exported here (`from core import rope_scaling as rs; rs.scaled_inv_freq`).
"""

from ..models.rope_scaling import (
    METHODS,
    SMOLLM2_ROPE,
    longrope_factors,
    rope_parameters,
    scaled_inv_freq,
)
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
    "rope_parameters",
    "scaled_inv_freq",
    "wavelengths",
]
