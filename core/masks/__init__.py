"""Attention masks: the engine every attention in core uses (core.sdpa, core.models), and the topic of /masks.

This module builds masks; the page's demos live beside it: `core.masks.layers` (random embeddings and random
attention layers), `core.masks.batch` (a padded batch under each mask) and `core.masks.encoder_decoder` (the three
kinds of attention chained as in the Transformer). This module imports none of them (core.sdpa imports it).

Convention (the same as torch's SDPA): a boolean mask is True where a query MAY attend to a key.
The additive form is 0 where allowed and -inf where masked, so masked keys get exactly zero weight.
Shapes broadcast against scores of shape (batch, heads, n_queries, n_keys).
"""

import torch


def causal_mask(n_queries: int, n_keys: int | None = None, device=None) -> torch.Tensor:
    """(n_queries, n_keys) look-ahead mask. When n_keys > n_queries (queries are the last tokens of a
    longer sequence, as with a KV cache) query i sits at absolute position n_keys - n_queries + i."""
    n_keys = n_queries if n_keys is None else n_keys
    offset = n_keys - n_queries
    q = torch.arange(n_queries, device=device)[:, None]
    k = torch.arange(n_keys, device=device)[None, :]
    return k <= q + offset


def padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """(batch, 1, 1, n_keys) from a tokenizer's attention_mask (batch, n_keys) of 1 = real token, 0 = pad.
    Padding hides keys; padded *query* rows are still computed (and simply not shown)."""
    return attention_mask.bool()[:, None, None, :]


def lengths_to_attention_mask(lengths: list[int], max_len: int | None = None) -> torch.Tensor:
    """Right-padded (batch, max_len) 0/1 mask from sequence lengths."""
    max_len = max(lengths) if max_len is None else max_len
    return (torch.arange(max_len)[None, :] < torch.tensor(lengths)[:, None]).long()


def combine_masks(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Logical AND of boolean masks (broadcasting); None entries mean 'no restriction'."""
    out = None
    for m in masks:
        if m is None:
            continue
        out = m if out is None else (out & m)
    return out


def batch_mask(attention_mask: torch.Tensor, causal: bool) -> torch.Tensor:
    """(batch, 1, n, n): padding, plus look-ahead when the model is a decoder."""
    n = attention_mask.shape[-1]
    pad = padding_mask(attention_mask)
    return combine_masks(pad, causal_mask(n, device=attention_mask.device) if causal else None).expand(-1, 1, n, n)


def to_additive(mask: torch.Tensor | None, dtype=torch.float32) -> torch.Tensor | None:
    """Boolean mask -> additive mask (0 allowed, -inf masked)."""
    if mask is None:
        return None
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, float("-inf"))
