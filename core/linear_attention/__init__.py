"""Linear attention (/linear-attention): the kernel forms and their RNN form (kernel.py), why exp(q·k) factors
through an infinite feature map and how finite ones approximate it (exp_kernel.py), one decoder layer generating
three ways (decoding.py), timing sweeps and slope fits (measure.py), and the data each part of the page draws
(views.py).

The forms are re-exported here, so `from core.linear_attention import linear_attention` reads as the concept.
"""

from .kernel import (
    EPS,
    FeatureMap,
    LinearAttentionState,
    associativity_costs,
    causal_linear_attention,
    elu_feature_map,
    implied_linear_weights,
    linear_attention,
    linear_attention_rnn,
    linear_attention_step,
    prefill_state,
)

__all__ = [
    "EPS",
    "FeatureMap",
    "LinearAttentionState",
    "associativity_costs",
    "causal_linear_attention",
    "elu_feature_map",
    "implied_linear_weights",
    "linear_attention",
    "linear_attention_rnn",
    "linear_attention_step",
    "prefill_state",
]
