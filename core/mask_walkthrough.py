"""Masks on a small padded batch, and the three kinds of attention in the original Transformer.

Everything here runs a *randomly initialised* MultiHeadAttention (core.sdpa): the point is the shapes and
the masks, which do not depend on training; the patterns of the weights mean nothing about language.

Inputs are token embeddings drawn at random per token string (the same word always gets the same vector)
plus the sinusoidal position encoding, so repeated words at different positions still differ.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import torch

from .masks import causal_mask, combine_masks, lengths_to_attention_mask, padding_mask
from .sdpa import MultiHeadAttention, attention_scores, repeat_kv, sdpa
from .sinusoidal import sinusoidal_encoding

PAD = "[PAD]"
MASK_KINDS = ("padding", "causal", "both")
ATTENTION_KINDS = ("encoder_self", "decoder_self", "cross")
D_MODEL = 16
N_HEADS = 4


@dataclass(frozen=True)
class PaddedBatch:
    tokens: list[list[str]]  # the real tokens of each sentence
    padded: list[list[str]]  # right-padded with PAD to one length
    attention_mask: torch.Tensor  # (B, n) 1 = real token, 0 = padding (as a tokenizer returns it)

    @property
    def lengths(self) -> list[int]:
        return [len(t) for t in self.tokens]


def pad_batch(token_lists: list[list[str]]) -> PaddedBatch:
    """Right-pad token lists to the longest one, like a tokenizer called with padding=True."""
    if not token_lists or any(len(t) == 0 for t in token_lists):
        raise ValueError("every sentence needs at least one token")
    n = max(len(t) for t in token_lists)
    padded = [list(t) + [PAD] * (n - len(t)) for t in token_lists]
    return PaddedBatch(
        tokens=[list(t) for t in token_lists],
        padded=padded,
        attention_mask=lengths_to_attention_mask([len(t) for t in token_lists], n),
    )


def mask_of_kind(kind: str, attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, 1, n, n) boolean, True = the query (row) may attend to the key (column).
    padding: every query sees the real keys of its sentence; causal: key position <= query position;
    both: the two combined with a logical AND (what a decoder uses on a padded batch)."""
    if kind not in MASK_KINDS:
        raise ValueError(f"unknown mask kind {kind!r}")
    b, n = attention_mask.shape
    pad = padding_mask(attention_mask) if kind in ("padding", "both") else None
    look_ahead = causal_mask(n) if kind in ("causal", "both") else None
    return combine_masks(pad, look_ahead).expand(b, 1, n, n)


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


@dataclass(frozen=True)
class MaskedBatchAttention:
    batch: PaddedBatch
    kind: str
    allowed: np.ndarray  # (B, n, n) bool: the mask, True = may attend
    scores: np.ndarray  # (B, H, n, n) QK^T / sqrt(d_head) before masking
    weights: np.ndarray  # (B, H, n, n) after masking: masked cells exactly 0, each row sums to 1
    sdpa_diff: float  # weights @ V vs SDPA


def masked_batch_attention(
    token_lists: list[list[str]], kind: str, seed: int = 0, d_model: int = D_MODEL, n_heads: int = N_HEADS
) -> MaskedBatchAttention:
    """Scores before masking, the mask, and the weights after, for every sentence and head of a padded batch."""
    batch = pad_batch(token_lists)
    mha = random_attention(d_model, n_heads, seed)
    x = embed(batch.padded, d_model, seed)
    mask = mask_of_kind(kind, batch.attention_mask)
    with torch.no_grad():
        q, k, _ = mha.project(x)
        scores = attention_scores(q, k)
    weights = mha.weights(x, mask=mask)
    return MaskedBatchAttention(
        batch=batch,
        kind=kind,
        allowed=mask[:, 0].numpy(),
        scores=scores.numpy(),
        weights=weights.numpy(),
        sdpa_diff=sdpa_check(mha, x, mask=mask),
    )


@dataclass(frozen=True)
class AttentionKind:
    kind: str  # one of ATTENTION_KINDS
    query_tokens: list[str]
    key_tokens: list[str]
    allowed: np.ndarray  # (n_q, n_k) bool
    weights: np.ndarray  # (H, n_q, n_k)
    shapes: dict[str, tuple]  # name -> shape, in the order data flows
    sdpa_diff: float


def three_kinds(
    encoder_tokens: list[str], decoder_tokens: list[str], seed: int = 0, d_model: int = D_MODEL, n_heads: int = N_HEADS
) -> list[AttentionKind]:
    """The three attention layers of the original Transformer on one source (encoder) and one target (decoder)
    sentence, batch size 1, each with its own random weights:
      encoder self-attention       Q, K, V from the encoder; every token sees every token;
      masked decoder self-attention Q, K, V from the decoder; look-ahead mask (no peeking at later tokens);
      encoder-decoder attention    Q from the decoder, K and V from the encoder; rows are target tokens,
                                   columns source tokens, so the weight matrix is n_target x n_source."""
    if not encoder_tokens or not decoder_tokens:
        raise ValueError("both sentences need at least one token")
    enc = embed([encoder_tokens], d_model, seed)
    dec = embed([decoder_tokens], d_model, seed)
    setups = {
        "encoder_self": (enc, None, False, encoder_tokens, encoder_tokens),
        "decoder_self": (dec, None, True, decoder_tokens, decoder_tokens),
        "cross": (dec, enc, False, decoder_tokens, encoder_tokens),
    }
    out = []
    for i, kind in enumerate(ATTENTION_KINDS):
        x, context, is_causal, q_tokens, k_tokens = setups[kind]
        mha = random_attention(d_model, n_heads, seed + 1 + i)
        with torch.no_grad():
            q, k, v = mha.project(x, context)
            y = mha(x, context, is_causal=is_causal)
        weights = mha.weights(x, context, is_causal=is_causal)
        n_q, n_k = len(q_tokens), len(k_tokens)
        allowed = causal_mask(n_q, n_k).numpy() if is_causal else np.ones((n_q, n_k), dtype=bool)
        shapes = {
            "x": tuple(x.shape),
            "context": tuple((x if context is None else context).shape),
            "Q": tuple(q.shape),
            "K": tuple(k.shape),
            "V": tuple(v.shape),
            "weights": tuple(weights.shape),
            "output": tuple(y.shape),
        }
        out.append(
            AttentionKind(
                kind=kind,
                query_tokens=list(q_tokens),
                key_tokens=list(k_tokens),
                allowed=allowed,
                weights=weights[0].numpy(),
                shapes=shapes,
                sdpa_diff=sdpa_check(mha, x, context, is_causal=is_causal),
            )
        )
    return out
