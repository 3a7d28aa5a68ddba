"""The three kinds of attention of the original Transformer (Vaswani et al., 2017), chained as in the model:
a one-layer encoder, then a one-layer decoder that reads the encoder's output.

    x_src (1, n_src, d)  --encoder self-attention (no mask)-->            memory (1, n_src, d)
    x_tgt (1, n_tgt, d)  --masked decoder self-attention (look-ahead)-->  h      (1, n_tgt, d)
    h, memory            --cross-attention: Q from h, K and V from memory-->  y  (1, n_tgt, d)

Each sublayer is post-LN as in the paper: LayerNorm(x + Attention(x)) (LayerNorm without learned scale and
shift). The position-wise feed-forward sublayers are left out: they act on each token alone and change no shape
and no attention. Weights are random (core.masks.layers), so the patterns mean nothing; the shapes and the flow
are the point. tests/test_masks_encoder_decoder.py checks every step against torch.nn.MultiheadAttention.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..sdpa import MultiHeadAttention
from . import causal_mask
from .layers import D_MODEL, N_HEADS, embed, random_attention, sdpa_check

ATTENTION_KINDS = ("encoder_self", "decoder_self", "cross")
# where each layer's queries (x) and keys/values (context) come from, as catalog keys a page translates
SOURCES = {
    "encoder_self": ("src_embeddings", "src_embeddings"),
    "decoder_self": ("tgt_embeddings", "tgt_embeddings"),
    "cross": ("decoder_self_output", "encoder_output"),
}


@dataclass(frozen=True)
class AttentionKind:
    kind: str  # one of ATTENTION_KINDS
    query_tokens: list[str]
    key_tokens: list[str]
    allowed: np.ndarray  # (n_q, n_k) bool
    weights: np.ndarray  # (H, n_q, n_k)
    shapes: dict[str, tuple]  # name -> shape, in the order data flows
    sdpa_diff: float
    x_from: str = ""  # SOURCES: what the queries are computed from
    context_from: str = ""  # SOURCES: what the keys and values are computed from


@dataclass(frozen=True)
class EncoderDecoder:
    kinds: list[AttentionKind]  # in ATTENTION_KINDS order
    layers: dict[str, MultiHeadAttention]  # kind -> its random attention layer
    x_src: torch.Tensor  # (1, n_src, d) source embeddings
    x_tgt: torch.Tensor  # (1, n_tgt, d) target embeddings
    memory: torch.Tensor  # (1, n_src, d) encoder output
    decoder_self_output: torch.Tensor  # (1, n_tgt, d)
    output: torch.Tensor  # (1, n_tgt, d) after cross-attention


def sublayer(mha: MultiHeadAttention, x: torch.Tensor, context=None, is_causal: bool = False):
    """LayerNorm(x + Attention(x, context)) and the attention output alone; both (B, n_q, d)."""
    with torch.no_grad():
        attended = mha(x, context, is_causal=is_causal)
        return F.layer_norm(x + attended, x.shape[-1:]), attended


def encoder_decoder(
    encoder_tokens: list[str],
    decoder_tokens: list[str],
    seed: int = 0,
    d_model: int = D_MODEL,
    n_heads: int = N_HEADS,
) -> EncoderDecoder:
    """One source (encoder) and one target (decoder) sentence, batch size 1, through a one-layer encoder and a
    one-layer decoder with random weights (layer i of ATTENTION_KINDS uses seed + 1 + i):
      encoder self-attention        Q, K, V from the source embeddings; every token sees every token;
      masked decoder self-attention Q, K, V from the target embeddings; look-ahead mask (no peeking ahead);
      encoder-decoder attention     Q from the decoder self-attention's output, K and V from the encoder's
                                    output; rows are target tokens, columns source tokens (n_tgt x n_src)."""
    if not encoder_tokens or not decoder_tokens:
        raise ValueError("both sentences need at least one token")
    x_src = embed([encoder_tokens], d_model, seed)  # (1, n_src, d)
    x_tgt = embed([decoder_tokens], d_model, seed)  # (1, n_tgt, d)
    layers = {kind: random_attention(d_model, n_heads, seed + 1 + i) for i, kind in enumerate(ATTENTION_KINDS)}
    memory, enc_att = sublayer(layers["encoder_self"], x_src)
    h, dec_att = sublayer(layers["decoder_self"], x_tgt, is_causal=True)
    y, cross_att = sublayer(layers["cross"], h, memory)
    setups = {  # x, context, is_causal, attention output, query tokens, key tokens
        "encoder_self": (x_src, None, False, enc_att, encoder_tokens, encoder_tokens),
        "decoder_self": (x_tgt, None, True, dec_att, decoder_tokens, decoder_tokens),
        "cross": (h, memory, False, cross_att, decoder_tokens, encoder_tokens),
    }
    kinds = []
    for kind in ATTENTION_KINDS:
        x, context, is_causal, attended, q_tokens, k_tokens = setups[kind]
        mha = layers[kind]
        with torch.no_grad():
            q, k, v = mha.project(x, context)  # (1, H, n_q, d_head), (1, H, n_k, d_head) twice
        weights = mha.weights(x, context, is_causal=is_causal)  # (1, H, n_q, n_k)
        n_q, n_k = len(q_tokens), len(k_tokens)
        allowed = causal_mask(n_q, n_k).numpy() if is_causal else np.ones((n_q, n_k), dtype=bool)
        shapes = {
            "x": tuple(x.shape),
            "context": tuple((x if context is None else context).shape),
            "Q": tuple(q.shape),
            "K": tuple(k.shape),
            "V": tuple(v.shape),
            "weights": tuple(weights.shape),
            "output": tuple(attended.shape),
        }
        kinds.append(
            AttentionKind(
                kind=kind,
                query_tokens=list(q_tokens),
                key_tokens=list(k_tokens),
                allowed=allowed,
                weights=weights[0].numpy(),
                shapes=shapes,
                sdpa_diff=sdpa_check(mha, x, context, is_causal=is_causal),
                x_from=SOURCES[kind][0],
                context_from=SOURCES[kind][1],
            )
        )
    return EncoderDecoder(
        kinds=kinds, layers=layers, x_src=x_src, x_tgt=x_tgt, memory=memory, decoder_self_output=h, output=y
    )


def three_kinds(
    encoder_tokens: list[str], decoder_tokens: list[str], seed: int = 0, d_model: int = D_MODEL, n_heads: int = N_HEADS
) -> list[AttentionKind]:
    """The three attention layers of `encoder_decoder`, in ATTENTION_KINDS order."""
    return encoder_decoder(encoder_tokens, decoder_tokens, seed, d_model, n_heads).kinds
