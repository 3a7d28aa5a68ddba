"""Mixture of Experts, in plain torch: the layer, its balance metrics, what experts specialise in, and what the
/moe page shows.

    layer.py             router, top-k, capacity, the SwiGLU experts (`moe_forward` = transformers' Mixtral block)
    balance.py           expert load, Switch loss, deviation from uniform, router entropy, their bounds under top-k
    specialisation.py    word categories per expert: counts, shares, lift
    views.py             the routing of the user's text, as the /moe page shows it (one object)
    checkpoint_views.py  the page's parts about the checkpoints: specialisation, comparison, real models
    data.py              the labelled simple-English generator the small model is trained on
    training.py          training and evaluating that model (scripts/train_moe.py)
    catalog.py           published sizes of real MoE models

The names of layer, balance and specialisation are re-exported here (`from core import moe; moe.route_tokens`).
checkpoint_views and training are not imported here: they need core.models, which itself imports core.moe.data.
"""

from .balance import (
    BalanceBounds,
    balance_bounds,
    dispatch_blind_example,
    expert_counts,
    expert_load,
    mean_router_probs,
    probability_balance_loss,
    router_entropy,
    switch_balance_loss,
    uniform_deviation_loss,
)
from .layer import (
    Routing,
    capacity_keep_mask,
    dropped_share_by_capacity,
    expert_capacity,
    moe_forward,
    route_tokens,
    router_logits,
    swiglu_expert,
)
from .specialisation import category_counts, category_lift, category_shares, top_categories

__all__ = [
    "BalanceBounds",
    "Routing",
    "balance_bounds",
    "capacity_keep_mask",
    "category_counts",
    "category_lift",
    "category_shares",
    "dropped_share_by_capacity",
    "expert_capacity",
    "expert_counts",
    "expert_load",
    "dispatch_blind_example",
    "mean_router_probs",
    "probability_balance_loss",
    "moe_forward",
    "route_tokens",
    "router_entropy",
    "router_logits",
    "swiglu_expert",
    "switch_balance_loss",
    "top_categories",
    "uniform_deviation_loss",
]
