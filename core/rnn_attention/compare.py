"""The GRU beside the Transformer: the longest path between two positions, the cost of one layer, the gradient that
reaches a source word from the loss against its distance, and the modules timed against length.

Path length (Vaswani et al. 2017, Table 1): in a recurrent layer, position i reaches position j (> i) through j - i
applications of the cell, so the longest path over n positions is n - 1 (O(n)); in self-attention every position
reads every other directly: 1 (O(1)).

Cost per layer, counted in floating-point operations of the matrix products (2 per multiply-add), width d:
    GRU (input d, state d)   per step 3 gates x (W_i x + W_h h) = 6 d^2 multiply-adds     -> 12 n d^2
    self-attention           Q, K, V, O projections 4 n d^2 multiply-adds, QK^T n^2 d, AV n^2 d
                                                                                          -> 8 n d^2 + 4 n^2 d
The orders are Table 1's O(n d^2) and O(n^2 d); with these constants the two are equal exactly where
12 n d^2 = 8 n d^2 + 4 n^2 d, i.e. n = d: shorter sentences than the width are cheaper in attention, longer ones in
the recurrence. (Element-wise work, softmax and the feed-forward block left out; the test counts the products with
torch's FlopCounterMode.) The recurrence cannot be spread over positions: n steps one after another, where
attention's n positions are one matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import model as rm

RECURRENT, ATTENTION = "recurrent", "attention"


def path_length(n: int, kind: str) -> int:
    """The most layer applications between two of n positions (n >= 1)."""
    return max(n - 1, 0) if kind == RECURRENT else min(1, n - 1)


def layer_flops(n: int, d: int, kind: str) -> int:
    """Matrix-product floating-point operations of one layer over n positions of width d (module docstring)."""
    if kind == RECURRENT:
        return 12 * n * d * d
    return 8 * n * d * d + 4 * n * n * d


def crossover(d: int) -> int:
    """The length n at which the two layers cost the same: d."""
    return d


@dataclass(frozen=True)
class CostView:
    d: int
    lengths: list[int]
    recurrent: list[int]  # layer_flops per length
    attention: list[int]
    crossover: int
    n: int  # the chosen length
    path_recurrent: int
    path_attention: int
    cheaper: str  # RECURRENT, ATTENTION or "equal" at the chosen n


def cost_view(n: int, d: int, max_length: int | None = None) -> CostView:
    top = max(max_length or 4 * max(n, d), n, 2)
    lengths = sorted({max(1, round(top * k / 64)) for k in range(1, 65)} | {n, d})
    rec, att = layer_flops(n, d, RECURRENT), layer_flops(n, d, ATTENTION)
    cheaper = "equal" if rec == att else (RECURRENT if rec < att else ATTENTION)
    return CostView(d, lengths, [layer_flops(x, d, RECURRENT) for x in lengths],
                    [layer_flops(x, d, ATTENTION) for x in lengths], crossover(d), n, path_length(n, RECURRENT),
                    path_length(n, ATTENTION), cheaper)  # fmt: skip


# --- the gradient that reaches a source word --------------------------------------------------------------------------


def source_gradients(model: rm.RNNSearch, tokenizer, pairs, recurrence_only: bool = False) -> list[torch.Tensor]:
    """For each pair: the norm of d(loss)/d(x_j) at every source token j (x_j its embedding; the loss summed over
    the pair's target tokens, reference fed in), with autograd. recurrence_only: the attention's context carries no
    gradient, so what reaches x_j went through the forward encoder's steps j+1..S-1, s_0 and the decoder's steps:
    the only path a seq2seq model without attention has. -> list of (S,) tensors, S the pair's source length."""
    b = rm.batch(tokenizer, pairs)
    x = model.embed(b["source_ids"]).detach().requires_grad_(True)
    logits, _ = model(b["source_ids"], b["decoder_ids"], inputs=x, detach_context=recurrence_only)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), b["labels"].flatten(), ignore_index=-100,
                                             reduction="sum")  # fmt: skip
    (grad,) = torch.autograd.grad(loss, x)  # the pairs do not interact: row i is pair i's own gradient
    lengths = (b["source_ids"] != tokenizer.pad_token_id).sum(-1)
    return [grad[i, : int(lengths[i])].norm(dim=-1) for i in range(len(pairs))]


@dataclass(frozen=True)
class GradientView:
    distances: list[int]  # steps from the source word to the last source token (</s>)
    with_attention: list[float]  # mean gradient norm at that distance
    recurrence_only: list[float]
    counts: list[int]  # source words measured at that distance
    decay: float  # recurrence only: mean norm at the largest distance / at distance 0
    decay_attention: float  # the same with attention


def by_distance(per_pair: list[torch.Tensor]) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for g in per_pair:
        S = len(g)
        for j in range(S):
            out.setdefault(S - 1 - j, []).append(float(g[j]))
    return out


def gradient_view(model, tokenizer, pairs) -> GradientView:
    full = by_distance(source_gradients(model, tokenizer, pairs))
    rec = by_distance(source_gradients(model, tokenizer, pairs, recurrence_only=True))
    distances = sorted(full)
    mean = {k: sum(v) / len(v) for k, v in full.items()}
    mean_rec = {k: sum(v) / len(v) for k, v in rec.items()}
    far = distances[-1]
    return GradientView(distances, [mean[k] for k in distances], [mean_rec[k] for k in distances],
                        [len(full[k]) for k in distances], mean_rec[far] / mean_rec[0], mean[far] / mean[0])  # fmt: skip


# --- timing (scripts/rnn_attention_compare.py times these) -------------------------------------------------------------


def torch_gru(model: rm.RNNSearch) -> torch.nn.GRU:
    """torch.nn.GRU (bidirectional, one layer) holding the model's encoder weights: the same steps as
    RNNSearch.encode on an unpadded sentence, looped in C++ instead of Python."""
    H = model.shape.hidden
    gru = torch.nn.GRU(model.shape.embed, H, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for suffix, cell in (("", model.enc_fwd), ("_reverse", model.enc_bwd)):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(gru, f"{name}_l0{suffix}").copy_(getattr(cell, name))
    return gru.eval()


def transformer_encoder(d: int = 128, heads: int = 4, ffn: int = 256, layers: int = 2) -> torch.nn.Module:
    """A Transformer encoder of the shipped model's shape (timing only: the values of the weights do not matter)."""
    layer = torch.nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()
