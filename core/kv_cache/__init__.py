"""Attention while generating: a decoder continues a prompt token by token with its key/value cache.

generation.py  the loop over new tokens with transformers' DynamicCache (past_key_values): per step the new
               query's attention over every cached position (all layers, all heads), the next-token
               distribution, the cache's bytes; greedy or temperature + top-k sampling with a seed
eviction.py    which cached positions a policy keeps (sliding window; attention sinks + window, StreamingLLM,
               Xiao et al. 2023, arXiv:2309.17453) and the next-token distribution with only those
views.py       what the page draws: the attention of one step pooled to a few columns, the history of every
               step, the cache bytes as it grows next to multi-head attention's (H_kv = H)
"""

from .eviction import POLICIES, kept_positions, kl_divergence, policy_mask, visible_positions
from .generation import (
    Generation,
    GenerationStep,
    context_limit,
    evicts_by_itself,
    generate,
    greedy_uncached,
    prompt_ids,
)

__all__ = [
    "POLICIES",
    "Generation",
    "GenerationStep",
    "generate",
    "greedy_uncached",
    "kept_positions",
    "kl_divergence",
    "policy_mask",
    "prompt_ids",
    "context_limit",
    "evicts_by_itself",
    "visible_positions",
]
