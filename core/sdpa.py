"""Scaled dot-product attention with exact, displayable weights.

The output of a layer always comes from torch's fused `scaled_dot_product_attention` (SDPA), which never
materialises the (n x n) weight matrix. A page that *shows* weights asks `attention_weights` for exactly the
heads and rows on screen; a test checks weights @ V against the SDPA output.
"""

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .masks import causal_mask, combine_masks


def scale_or_default(scale: float | None, head_dim: int) -> float:
    """The scale a model passes to its attention (a float), or 1/sqrt(d_k) when it passes none: the default of the
    paper, of torch's SDPA and of transformers' attention functions. The one place this fallback is written."""
    return float(scale) if scale is not None else 1.0 / math.sqrt(head_dim)


def broadcast_shape(*shapes) -> tuple[int, ...]:
    """torch.broadcast_shapes' answer, and its RuntimeError for shapes that do not broadcast, from numpy: torch's
    function imports torch._refs and sympy on its first call, 0.3 s of a fresh server's first /masks."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError as err:
        raise RuntimeError(str(err)) from None


def attention_scores(q: torch.Tensor, k: torch.Tensor, scale: float | None = None) -> torch.Tensor:
    """QK^T * scale, with scale = 1/sqrt(d_k) by default. q (..., n_q, d), k (..., n_k, d) -> (..., n_q, n_k)."""
    scale = scale_or_default(scale, q.shape[-1])
    return (q @ k.transpose(-2, -1)).mul_(scale)  # the product's own tensor: scaled in place


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over keys with masked keys at exactly 0. A row with every key masked gets all zeros
    (not NaN): there is nothing it may attend to."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    any_allowed = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~any_allowed, 0.0), dim=-1)
    return weights.masked_fill(~mask, 0.0)


def attention_weights(q, k, mask=None, scale=None, softcap=None, sinks=None, bias=None) -> torch.Tensor:
    """softmax(QK^T / sqrt(d_k) + mask), computed in float32 for display.

    bias (broadcast to the scores, e.g. (H, n_q, n_k)): added to the scaled scores (ALiBi's -m_h (i - j)).
    Two features some models add (both as transformers' eager attention computes them):
    softcap c (Gemma 2): scores -> c * tanh(scores / c) before the mask, so no score exceeds c in size.
    sinks (gpt-oss): one learned logit per head (shape (H,), broadcast over the leading head dimension of q) joins
    every row's softmax as an extra column that attends to nothing and is then dropped, so a row sums to < 1.

    The scores are this function's own, so every step before the softmax rewrites them in place (and, where no
    gradient is asked for, the softmax's output is masked in place too): at most two score-sized tensors are alive
    at once, the scores and the weights (core/models/local.py's memory estimate counts them so)."""
    scores = attention_scores(q.float(), k.float(), scale)
    shape = broadcast_shape(scores.shape, *(t.shape for t in (mask, bias) if t is not None))
    if shape != scores.shape:  # a mask or bias of more dimensions than q and k: the scores take its shape
        scores = scores.expand(shape).clone()
    if bias is not None:
        scores.add_(bias.float())
    if softcap is not None:
        grad = scores.requires_grad  # tanh keeps its output for the gradient: then not rewritten in place
        scores = torch.tanh(scores / softcap) * softcap if grad else scores.div_(softcap).tanh_().mul_(softcap)
    if sinks is None:
        return _masked_softmax_of_own(scores, mask)
    if mask is not None:
        scores.masked_fill_(~mask, float("-inf"))
    sink = sinks.float().reshape(-1, 1, 1).expand(*scores.shape[:-1], 1)  # (H, n_q, 1)
    joined = torch.cat([scores, sink], dim=-1)
    del scores
    return torch.softmax(joined, dim=-1)[..., :-1]


def _masked_softmax_of_own(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """masked_softmax of scores the caller hands over, of the mask's shape or more (they are overwritten): the same
    numbers with one score-sized tensor fewer."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores.masked_fill_(~mask, float("-inf"))
    scores.masked_fill_(~mask.any(dim=-1, keepdim=True), 0.0)
    weights = torch.softmax(scores, dim=-1)
    return weights.masked_fill(~mask, 0.0) if weights.requires_grad else weights.masked_fill_(~mask, 0.0)


def entropy(weights: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Shannon entropy in nats of probability rows (0 log 0 = 0)."""
    return -(weights * torch.log(weights.clamp_min(1e-30))).sum(dim)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(B, H_kv, n, d) -> (B, H_kv * n_rep, n, d): query head h uses key/value head h // n_rep (GQA/MQA)."""
    return x if n_rep == 1 else x.repeat_interleave(n_rep, dim=1)


def sdpa(q, k, v, mask=None, scale=None) -> torch.Tensor:
    """torch SDPA with GQA handled by repeating K/V, and fully masked rows returning 0 instead of NaN."""
    n_rep = q.shape[1] // k.shape[1]
    k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v, scale=scale)
    any_allowed = mask.any(dim=-1, keepdim=True)
    safe = mask | ~any_allowed  # let an empty row attend anywhere, then zero its output
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe, scale=scale)
    return out.masked_fill(~any_allowed, 0.0)


class MultiHeadAttention(nn.Module):
    """Multi-head attention (Vaswani et al. 2017) with grouped key/value heads (GQA; n_kv_heads=1 is MQA).

    Self-attention when `context` is None, cross-attention otherwise (Q from x, K and V from context).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        n_kv_heads: int | None = None,
        d_context: int | None = None,
        bias: bool = False,
    ):
        super().__init__()
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        if d_model % n_heads or n_heads % n_kv_heads:
            raise ValueError("d_model must divide by n_heads, and n_heads by n_kv_heads")
        self.d_model, self.n_heads, self.n_kv_heads = d_model, n_heads, n_kv_heads
        self.d_head = d_model // n_heads
        d_context = d_model if d_context is None else d_context
        self.w_q = nn.Linear(d_model, n_heads * self.d_head, bias=bias)
        self.w_k = nn.Linear(d_context, n_kv_heads * self.d_head, bias=bias)
        self.w_v = nn.Linear(d_context, n_kv_heads * self.d_head, bias=bias)
        self.w_o = nn.Linear(n_heads * self.d_head, d_model, bias=bias)

    def _split(self, x: torch.Tensor, n_heads: int) -> torch.Tensor:
        b, n, _ = x.shape
        return x.view(b, n, n_heads, self.d_head).transpose(1, 2)  # (B, heads, n, d_head)

    def project(self, x: torch.Tensor, context: torch.Tensor | None = None):
        """q (B, H, n_q, d_head), k and v (B, H_kv, n_k, d_head)."""
        context = x if context is None else context
        return (
            self._split(self.w_q(x), self.n_heads),
            self._split(self.w_k(context), self.n_kv_heads),
            self._split(self.w_v(context), self.n_kv_heads),
        )

    def full_mask(self, n_q: int, n_k: int, mask=None, is_causal: bool = False, device=None):
        return combine_masks(mask, causal_mask(n_q, n_k, device=device) if is_causal else None)

    def forward(self, x, context=None, mask=None, is_causal: bool = False) -> torch.Tensor:
        """(B, n_q, d_model). mask: boolean, broadcastable to (B, H, n_q, n_k)."""
        q, k, v = self.project(x, context)
        m = self.full_mask(q.shape[-2], k.shape[-2], mask, is_causal, x.device)
        out = sdpa(q, k, v, m)
        b, _, n, _ = out.shape
        return self.w_o(out.transpose(1, 2).reshape(b, n, self.d_model))

    @torch.no_grad()
    def weights(self, x, context=None, mask=None, is_causal: bool = False, heads=None, rows=None) -> torch.Tensor:
        """Exact weights (B, len(heads), len(rows), n_k), only for the heads and query rows asked for."""
        q, k, _ = self.project(x, context)
        heads = list(range(self.n_heads)) if heads is None else list(heads)
        n_rep = self.n_heads // self.n_kv_heads
        m = self.full_mask(q.shape[-2], k.shape[-2], mask, is_causal, x.device)
        q, k = q[:, heads], k[:, [h // n_rep for h in heads]]
        if m is not None:
            m = m.reshape((1,) * (4 - m.dim()) + tuple(m.shape))
            m = m.expand(q.shape[0], m.shape[1], q.shape[-2], k.shape[-2])
            m = m[:, heads] if m.shape[1] > 1 else m
        if rows is not None:
            q = q[:, :, rows]
            m = None if m is None else m[:, :, rows]
        return attention_weights(q, k, m)
