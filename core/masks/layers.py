"""Random inputs and random attention layers for the /masks demos.

Everything on /masks runs *randomly initialised* attention (core.sdpa.MultiHeadAttention): the point is the
shapes and the masks, which do not depend on training; the patterns of the weights mean nothing about language.

Inputs are token embeddings drawn at random per token string (the same word always gets the same vector)
plus the sinusoidal position encoding, so repeated words at different positions still differ.
"""

from __future__ import annotations

import zlib

import torch

from ..positions.sinusoidal import sinusoidal_encoding
from ..sdpa import MultiHeadAttention, repeat_kv, sdpa

D_MODEL = 16
N_HEADS = 4
D_HEAD = D_MODEL // N_HEADS  # each head's width: q, k and v of one head are (tokens, D_HEAD)


def token_embedding(token: str, d_model: int, seed: int) -> torch.Tensor:
    """A random N(0, 1) vector that depends only on the token's text and the seed."""
    gen = torch.Generator().manual_seed((zlib.crc32(token.encode("utf-8")) + 1_000_003 * seed) % (2**63))
    return torch.randn(d_model, generator=gen)


def embed(token_lists: list[list[str]], d_model: int = D_MODEL, seed: int = 0) -> torch.Tensor:
    """(B, n, d_model) random token embeddings + sinusoidal positions; all lists must have one length."""
    n = len(token_lists[0])
    pe = torch.as_tensor(sinusoidal_encoding(n, d_model), dtype=torch.float32)
    return torch.stack([torch.stack([token_embedding(t, d_model, seed) for t in toks]) + pe for toks in token_lists])


def random_attention(d_model: int = D_MODEL, n_heads: int = N_HEADS, seed: int = 0) -> MultiHeadAttention:
    """A MultiHeadAttention with N(0, 1/d_model) weights: q and k components then have about unit variance,
    so the scaled scores spread over a few units and the weights are visibly uneven (torch's default
    initialisation would give nearly uniform rows, which shows little)."""
    gen = torch.Generator().manual_seed(seed)
    mha = MultiHeadAttention(d_model, n_heads)
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) / d_model**0.5)
    return mha.eval()


def sdpa_check(mha: MultiHeadAttention, x: torch.Tensor, context=None, mask=None, is_causal=False) -> float:
    """max |weights @ V - SDPA output| over every head and every query that may attend to something:
    the weights a page shows are the ones the layer's output is made of."""
    with torch.no_grad():
        q, k, v = mha.project(x, context)
        full = mha.full_mask(q.shape[-2], k.shape[-2], mask, is_causal)
        out = sdpa(q, k, v, full)
        w = mha.weights(x, context, mask, is_causal)
        mixed = w @ repeat_kv(v, mha.n_heads // mha.n_kv_heads)
        return float((mixed - out).abs().max())
