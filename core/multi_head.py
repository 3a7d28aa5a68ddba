"""Multi-head attention end to end on one real encoder layer (MiniLM's BertLayer), every intermediate kept.

Read top to bottom as the layer computes (Vaswani et al. 2017, section 3.2.2; BERT's post-LayerNorm block):

    X (n, D)                                   the layer's input: the residual stream entering layer l
    Q_i = X W_i^Q + b_i^Q,  K_i, V_i likewise  (n, d_k) per head; W_i^Q is columns i*d_k:(i+1)*d_k of W^Q
    A_i = softmax(Q_i K_i^T / sqrt(d_k) + M)   (n, n)  M = -inf on padding keys
    Z_i = A_i V_i                              (n, d_k)
    Concat(Z_1 ... Z_h)                        (n, D)  heads side by side, D = h * d_k
    attention_out = Concat W^O + b^O           (n, D)
    post_attention = LayerNorm(X + attention_out)
    ffn_out = GELU(post_attention W_1 + b_1) W_2 + b_2       (n, D_ff) -> (n, D)
    output = LayerNorm(post_attention + ffn_out)             (n, D) = the input of layer l + 1

Everything is computed here with explicit matrix products from the layer's parameters (plain tensors the model
contract hands out: core/models/weights.py), never by calling the module's forward, so
tests/core/test_multi_head.py can hold it against transformers' own BertLayer.

Also here: what changes with the number of heads h at a fixed d_model (`head_count_rows`), and the
permutation check (`permutation_check`): attention without positions is permutation-equivariant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .attention import DEFAULT_SENTENCE, ModelContext
from .models.needs import PAGE_NEEDS
from .models.weights import EncoderLayerWeights
from .state import Choice, Int, State, Text, model_choice

MAX_TOKENS = 64  # the page draws n x 384 matrices: 64 rows keep each view well under the 1 MB budget
PAPER_D_MODEL, PAPER_HEADS = 512, 8  # "Attention Is All You Need": d_model = 512, h = 8, d_k = 64
PAPER_D_K = PAPER_D_MODEL // PAPER_HEADS
HEAD_COUNTS = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class LayerWalk:
    """Every intermediate of one BertLayer on one sequence of n real tokens (H heads of size d_k, D = H d_k)."""

    layer: int
    tokens: list[str]  # n display tokens
    x: torch.Tensor  # (n, D) layer input
    w_q: torch.Tensor  # (H, D, d_k) each head's slice of W^Q (as x @ w_q[i]); w_k, w_v likewise
    w_k: torch.Tensor
    w_v: torch.Tensor
    q: torch.Tensor  # (H, n, d_k)
    k: torch.Tensor  # (H, n, d_k)
    v: torch.Tensor  # (H, n, d_k)
    weights: torch.Tensor  # (H, n, n) rows = queries, columns = keys; each row sums to 1
    z: torch.Tensor  # (H, n, d_k) Z_i = A_i V_i
    concat: torch.Tensor  # (n, D) [Z_1 ... Z_H]
    attention_out: torch.Tensor  # (n, D) Concat W^O + b^O
    post_attention: torch.Tensor  # (n, D) LayerNorm(X + attention_out)
    ffn_hidden: torch.Tensor  # (n, D_ff) GELU(post_attention W_1 + b_1)
    ffn_out: torch.Tensor  # (n, D)
    output: torch.Tensor  # (n, D) LayerNorm(post_attention + ffn_out)
    reference: torch.Tensor | None = None  # (n, D) the model's own output of this layer, when known
    truncated: bool = False  # the text had more than the page's token limit
    attention_dropout: float = 0.0  # the layer's attention dropout probability in training (from its config)

    @property
    def n_heads(self) -> int:
        return self.q.shape[0]

    @property
    def head_dim(self) -> int:
        return self.q.shape[-1]

    @property
    def max_reference_error(self) -> float | None:
        """max |output - the model's own layer output|: float rounding when the chain above is the layer."""
        return None if self.reference is None else float((self.output - self.reference).abs().max())

    def shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """(step, shape) in order, for the page's diagram; steps are keys the page names in its language."""
        return [
            ("x", tuple(self.x.shape)),
            ("w_qkv", tuple(self.w_q[0].shape)),
            ("qkv", tuple(self.q[0].shape)),
            ("a", tuple(self.weights[0].shape)),
            ("z", tuple(self.z[0].shape)),
            ("concat", tuple(self.concat.shape)),
            ("w_o", (self.concat.shape[-1], self.attention_out.shape[-1])),
            ("add_norm", tuple(self.post_attention.shape)),
            ("ffn_hidden", tuple(self.ffn_hidden.shape)),
            ("ffn_out", tuple(self.ffn_out.shape)),
            ("output", tuple(self.output.shape)),
        ]


def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def _head_slices(weight: torch.Tensor, bias: torch.Tensor, n_heads: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A projection stored as nn.Linear does, W (out, in) with x W^T + b; per head: (H, D, d_k) and (H, d_k)."""
    d_out, d_in = weight.shape
    d_k = d_out // n_heads
    return weight.T.reshape(d_in, n_heads, d_k).permute(1, 0, 2), bias.reshape(n_heads, d_k)


@torch.no_grad()
def walk_bert_layer(weights: EncoderLayerWeights, x: torch.Tensor, key_mask: torch.Tensor | None = None) -> LayerWalk:
    """Run one BERT-style layer by hand on x (n, D) from its plain weights (model.encoder_layer(l),
    core/models/weights.py). key_mask (n,) bool: True = a real key (padding keys get weight exactly 0). Only
    BERT's 'gelu' (the exact erf form) is implemented: another activation is a ValueError."""
    if weights.activation != "gelu":
        raise ValueError(f"only BERT's exact GELU is implemented, not {weights.activation!r}")
    x = x.float()
    w_q, b_q = _head_slices(weights.w_q, weights.b_q, weights.n_heads)
    w_k, b_k = _head_slices(weights.w_k, weights.b_k, weights.n_heads)
    w_v, b_v = _head_slices(weights.w_v, weights.b_v, weights.n_heads)
    q = torch.einsum("nd,hdk->hnk", x, w_q) + b_q[:, None]  # (H, n, d_k)
    k = torch.einsum("nd,hdk->hnk", x, w_k) + b_k[:, None]
    v = torch.einsum("nd,hdk->hnk", x, w_v) + b_v[:, None]
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # (H, n, n)
    if key_mask is not None:
        scores = scores.masked_fill(~key_mask.bool()[None, None, :], float("-inf"))
    attention = torch.softmax(scores, dim=-1)
    z = attention @ v  # (H, n, d_k)
    concat = z.permute(1, 0, 2).reshape(x.shape[0], -1)  # (n, H d_k): head i in columns i*d_k:(i+1)*d_k
    attention_out = concat @ weights.w_o.T + weights.b_o
    post_attention = _layer_norm(
        x + attention_out, weights.attention_norm_weight, weights.attention_norm_bias, weights.attention_norm_eps
    )
    ffn_hidden = F.gelu(post_attention @ weights.ffn_up_weight.T + weights.ffn_up_bias)  # exact (erf) GELU
    ffn_out = ffn_hidden @ weights.ffn_down_weight.T + weights.ffn_down_bias
    output = _layer_norm(
        post_attention + ffn_out, weights.output_norm_weight, weights.output_norm_bias, weights.output_norm_eps
    )
    return LayerWalk(
        layer=-1,
        tokens=[],
        x=x,
        w_q=w_q,
        w_k=w_k,
        w_v=w_v,
        q=q,
        k=k,
        v=v,
        weights=attention,
        z=z,
        concat=concat,
        attention_out=attention_out,
        post_attention=post_attention,
        ffn_hidden=ffn_hidden,
        ffn_out=ffn_out,
        output=output,
        attention_dropout=weights.attention_dropout,
    )


@torch.no_grad()
def layer_walk(model, text: str, layer: int, max_tokens: int = MAX_TOKENS) -> LayerWalk:
    """The walk through layer `layer` of an encoder (MiniLM) on `text` (cut to max_tokens tokens, specials
    included), with the model's own output of that layer as `reference`. Raises ValueError for a text that
    gives no tokens or a layer out of range."""
    weights = model.encoder_layer(layer)  # ValueError for a model that is not a BERT-style encoder
    batch = model.tokenize([text], max_tokens)
    trace = model.run(batch, logits=False, hidden_states=True)
    n = int(batch.attention_mask[0].sum())
    x = trace.hidden_states[layer][0, :n]  # (n, D): the residual stream entering the layer
    walk = walk_bert_layer(weights, x)
    return LayerWalk(
        **{
            **walk.__dict__,
            "layer": layer,
            "tokens": batch.tokens[0][:n],
            "reference": trace.hidden_states[layer + 1][0, :n],
            "truncated": bool(batch.truncated[0]),
        }
    )


# --- the number of heads at a fixed d_model -------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadCountRow:
    heads: int
    head_dim: int  # d_k = d_model / h
    parameters: int  # W^Q, W^K, W^V, W^O with biases: 4 D^2 + 4 D, whatever h is
    flops: int  # one forward over n tokens, multiply-adds counted as 2
    score_rank: int  # the largest possible rank of one head's n x n score matrix: min(n, d_k)
    score_entries: int  # h n x n score matrices: h n^2 numbers to exponentiate in softmax and to hold as weights


def attention_parameters(d_model: int) -> int:
    """Q, K, V and output projections, D x D each, with biases."""
    return 4 * d_model * d_model + 4 * d_model


def attention_flops(d_model: int, n: int, heads: int) -> int:
    """Matrix-product FLOPs of one multi-head attention forward on n tokens: four projections 4 * 2 n D^2; per
    head scores 2 n^2 d_k and weighted sum 2 n^2 d_k, summed over h heads 4 n^2 D. h cancels here; the number
    of score entries does not (score_entries)."""
    d_k = d_model // heads
    return 4 * 2 * n * d_model * d_model + heads * (2 * n * n * d_k + 2 * n * n * d_k)


def score_entries(n: int, heads: int) -> int:
    """The attention weights of one forward on n tokens: one n x n matrix per head. Unlike parameters and
    matrix-product FLOPs, this grows with h: the softmax exponentiates h n^2 scores and the weights, when kept
    (for the backward pass, or to draw them), take h n^2 numbers of memory."""
    return heads * n * n


def head_count_rows(d_model: int = PAPER_D_MODEL, n: int = 64, counts=HEAD_COUNTS) -> list[HeadCountRow]:
    """One row per h that divides d_model."""
    return [
        HeadCountRow(
            h,
            d_model // h,
            attention_parameters(d_model),
            attention_flops(d_model, n, h),
            min(n, d_model // h),
            score_entries(n, h),
        )
        for h in counts
        if d_model % h == 0
    ]


def score_ranks(d_model: int, n: int, heads: int, seed: int = 0) -> list[int]:
    """The measured rank of each head's score matrix Q_i K_i^T on random X (n, D) and random projections: never
    above d_k (Q_i K_i^T is a product through a d_k-wide middle)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d_model, generator=g, dtype=torch.float64)
    w_q = torch.randn(heads, d_model, d_model // heads, generator=g, dtype=torch.float64)
    w_k = torch.randn(heads, d_model, d_model // heads, generator=g, dtype=torch.float64)
    scores = torch.einsum("nd,hdk->hnk", x, w_q) @ torch.einsum("nd,hdk->hnk", x, w_k).transpose(-1, -2)
    return [int(torch.linalg.matrix_rank(s)) for s in scores]


# --- permutation equivariance ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PermutationCheck:
    permutation: list[int]
    error_without_positions: float  # max |layer(X[P]) - layer(X)[P]|: rounding, attention ignores order
    error_with_positions: float  # the same with position vectors added by position: order now matters


@torch.no_grad()
def permutation_check(model, text: str, seed: int = 0, max_tokens: int = MAX_TOKENS) -> PermutationCheck:
    """Shuffle the tokens of `text` and run layer 0 of the encoder on word embeddings alone (no positions) and on
    word + position embeddings. Without positions the outputs are the unshuffled outputs, shuffled the same way;
    with positions they are not. A text of one token has only the identity permutation (both errors 0)."""
    layer0 = model.encoder_layer(0)  # ValueError for a model that is not a BERT-style encoder
    batch = model.tokenize([text], max_tokens)
    n = int(batch.attention_mask[0].sum())
    words = model.token_embeddings(batch.input_ids[0, :n])  # (n, D)
    positions = model.learned_position_embeddings()[:n]  # (n, D): a BERT-style encoder has a learned table
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(n, generator=g)
    if n > 1 and torch.equal(perm, torch.arange(n)):
        perm = torch.roll(perm, 1)  # a shuffle that moves something

    def out(x: torch.Tensor) -> torch.Tensor:
        return walk_bert_layer(layer0, x).output

    without = float((out(words[perm]) - out(words)[perm]).abs().max())
    # With positions: position p is added to whatever token now sits at p.
    with_pos = float((out(words[perm] + positions) - out(words + positions)[perm]).abs().max())
    return PermutationCheck(perm.tolist(), without, with_pos)


# --- attention dropout ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DropoutRow:
    """One query's attention weights in evaluation and in one training step with attention dropout."""

    query: int
    p: float  # dropout probability (the model's attention_probs_dropout_prob: MiniLM's is 0.1)
    seed: int
    evaluation: list[float]  # model.eval(): dropout is the identity, the row sums to 1
    training: list[float]  # each weight zeroed with probability p, the survivors divided by (1 - p)
    dropped: list[bool]

    @property
    def drops(self) -> bool:
        """The model trains with attention dropout (p > 0); without it training's row is evaluation's."""
        return self.p > 0

    @property
    def training_sum(self) -> float:
        """No longer 1: it is 1 only on average over the random draws."""
        return float(sum(self.training))


def dropout_row(weights: torch.Tensor, query: int, p: float, seed: int = 0) -> DropoutRow:
    """Attention dropout (as in BERT, and SDPA's dropout_p) on one row of softmax weights: applied AFTER the softmax,
    with torch's dropout semantics (inverted dropout: survivors scaled by 1 / (1 - p), so the expected row is
    unchanged); in evaluation nothing is dropped. weights: (n, n) one head's weights."""
    if not 0.0 <= p < 1.0:
        raise ValueError("p must be in [0, 1)")
    row = weights[query].detach().float()
    g = torch.Generator().manual_seed(seed)
    keep = torch.rand(row.shape, generator=g) >= p
    trained = torch.where(keep, row / (1.0 - p), torch.zeros_like(row))
    return DropoutRow(query, p, seed, row.tolist(), trained.tolist(), (~keep).tolist())


def last_token_dropout(walk: LayerWalk, head: int, seed: int = 0) -> DropoutRow:
    """The page's example row: head `head`'s weights of the last token ([SEP] in a BERT input, which may attend to
    every token), with the model's own dropout probability."""
    return dropout_row(walk.weights[head], len(walk.tokens) - 1, walk.attention_dropout, seed)


# --- the page's link, declared once (app/ui.py binds the widgets from it; the lessons read a step's state with it)

PARTS = ("layer", "heads", "order")
SHIPPED_MODELS = ("minilm",)


STATE = State(
    Choice("part", "layer", options=PARTS),
    model_choice(SHIPPED_MODELS),
    Text("text", DEFAULT_SENTENCE),
    Int("layer", 0, 0, lambda c: c.n_layers - 1),
    Int("head", 0, 0, lambda c: c.n_heads - 1),
    Int("n", 64, 2, 512),
    Int("seed", 0, 0, 9999),
    context=lambda c: ModelContext(c, SHIPPED_MODELS, PAGE_NEEDS["multi-head"]),
)
