"""The view data of /attention: what each figure of the page draws, computed from a Trace (core/models/base.py)
for one sequence of a batch, in one call per view. viz/attention.py draws these objects; it computes nothing.

Which tokens are on screen (`select_tokens`, once per page run): the real tokens of the sequence (padding dropped).
"Hide special tokens" means they are not on screen at all: the rows and columns of [CLS], [SEP], BOS, ... are
removed, and every remaining row is divided by the weight it kept, so it sums to 1 again ("renormalised"): each
cell is then a query's share of attention among the shown keys, no longer the model's raw weight (the page says
so whenever it is on). A special token's row is dropped with its column: keeping it would show a query the reader
asked to hide. A text of only special tokens shows them anyway. Rollout runs over all real tokens (information
does flow through [CLS] and [SEP]) and is hidden the same way afterwards.

What goes to the browser (budget <= 1 MB per view; a float32 cell costs about 7.3 bytes of plotly JSON): one
matrix cell by cell up to FULL_RES_MAX tokens per side (256^2 ~ 0.5 MB); beyond that block means
(core.pooling.block_mean: masked cells left out of each mean, a block with no visible cell masked) or a
full-resolution window the reader moves; the model view's tiles are block means of at most TILE tokens a side.

Shapes: n padded length, m shown tokens, L layers, H query heads, s pooled side.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from .models.needs import PAGE_NEEDS
from .pooling import bin_edges, bin_labels, block_mean, indexed_labels
from .sdpa import entropy
from .state import Choice, Flag, Int, State, Text, model_choice

FULL_RES_MAX = 256  # tokens per side drawn cell by cell
TILE, TILE_MANY, MANY_HEADS = 24, 16, 100  # model-view tile side; smaller tiles when there are many heads


# --- which tokens are on screen -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tokens:
    """The shown tokens of sequence `index`: chosen once per page run, used by every view."""

    index: int
    positions: torch.Tensor  # (m,) long: indices into the padded sequence
    labels: list[str]  # (m,) unique '<position> <token>' labels (escaped by the figure builders)
    allowed: torch.Tensor  # (m, m) bool: may shown query a attend to shown key b
    hide_special: bool  # the reader asked to hide special tokens (rows renormalised)
    has_special: bool  # the model added special tokens to this text
    labels_all: tuple[str, ...]  # labels of every real token, specials included

    @property
    def m(self) -> int:
        return len(self.positions)


def select_tokens(trace, index: int = 0, hide_special: bool = False) -> Tokens:
    """The tokens on screen: real tokens, minus special ones when hide_special (all real tokens if that leaves
    none)."""
    n = trace.length(index)
    special = trace.batch.special[index, :n].bool()
    keep = ~special if hide_special else torch.ones(n, dtype=torch.bool)
    positions = torch.nonzero(keep).flatten()
    if not len(positions):  # a text of only special tokens: show them anyway
        positions = torch.arange(n)
    labels = indexed_labels(trace.batch.tokens[index][:n])
    allowed = trace.mask(index)[positions][:, positions]
    return Tokens(
        index=index,
        positions=positions,
        labels=[labels[int(i)] for i in positions],
        allowed=allowed,
        hide_special=hide_special,
        has_special=bool(special.any()),
        labels_all=tuple(labels),
    )


def renormalise(weights: torch.Tensor) -> torch.Tensor:
    """Rows divided by their sum (a row that kept no weight stays 0)."""
    total = weights.sum(-1, keepdim=True)
    return torch.where(total > 0, weights / total.clamp_min(1e-30), torch.zeros_like(weights))


def shown(weights: torch.Tensor, tokens: Tokens, rows: bool = True) -> torch.Tensor:
    """(..., n_rows, n) weights over the padded sequence -> (..., m, m) over the shown tokens (or (..., n_rows, m)
    with rows=False), renormalised when specials are hidden."""
    idx, size = tokens.positions, weights.shape[-1]
    is_prefix = len(idx) == size or (len(idx) and bool(idx[-1] == len(idx) - 1))  # arange(m): slicing copies less
    w = weights[..., : len(idx)] if is_prefix else weights[..., idx]
    if rows:
        w = w[..., : len(idx), :] if is_prefix else w[..., idx, :]
    return renormalise(w) if tokens.hide_special else w


# --- the analyses (one definition each) ------------------------------------------------------------------------------


def query_weights(trace, query: int, index: int = 0) -> torch.Tensor:
    """(L, H, n) exact weights of ONE query (position `query` of the padded sequence) in every head of every
    layer: the same numbers as trace.attention(layer, head, index)[query]."""
    rows = torch.tensor([query])
    return torch.stack([trace.layer_attention(layer, index, rows=rows)[:, 0] for layer in range(trace.n_layers)])


def head_weights(trace, tokens: Tokens, layer: int, head: int) -> torch.Tensor:
    """(m, m) weights of one head over the shown tokens."""
    return shown(trace.attention(layer, head, tokens.index), tokens)


def mean_over_heads(trace, tokens: Tokens, layer: int) -> torch.Tensor:
    """(m, m) plain average of the layer's heads (each head renormalised first when specials are hidden)."""
    return shown(trace.layer_attention(layer, tokens.index), tokens).mean(0)


def rollout(trace, tokens: Tokens, last_layer: int | None = None, residual: float = 0.5) -> torch.Tensor:
    """(m, m) attention rollout (Abnar & Zuidema 2020) up to `last_layer` (default: the last).

    Per layer l: A_l = the mean of its heads over all real tokens, mixed with the residual connection as
    residual * I + (1 - residual) * A_l (0.5 / 0.5, as in the paper), rows renormalised. Then
    R = A_last @ ... @ A_1 @ A_0: layer 0's matrix is applied first (rightmost), each later layer multiplies on
    the left. R[i, j] estimates how much of token j's input reaches token i's output. Special tokens take part in
    the product (information flows through them); hiding them drops their rows and columns of R afterwards and
    renormalises its rows."""
    index, n = tokens.index, trace.length(tokens.index)
    last = trace.n_layers - 1 if last_layer is None else last_layer
    eye = torch.eye(n)
    r = eye
    for layer in range(last + 1):
        a = trace.layer_attention(layer, index)[:, :n, :n].mean(0)  # (n, n)
        a = renormalise(residual * eye + (1 - residual) * a)
        r = a @ r  # A_layer @ (A_{layer-1} ... A_0)
    return shown(r, tokens)


def head_entropy(trace, tokens: Tokens) -> torch.Tensor:
    """(L, H): mean Shannon entropy (nats) of each head's rows over the shown queries, each row taken over the
    shown keys. 0 = every query puts all its weight on one key; log(k) = spread evenly over k keys. In a decoder
    query i sees only i + 1 keys, so early rows are low by construction (see `uniform_entropy`)."""
    out = torch.empty(trace.n_layers, trace.n_heads)
    for layer in range(trace.n_layers):
        out[layer] = entropy(shown(trace.layer_attention(layer, tokens.index), tokens)).mean(-1)
    return out


def uniform_entropy(tokens: Tokens) -> float:
    """The reference for head_entropy: mean over shown queries of log(number of shown keys the query may see),
    the entropy of a row spread evenly over everything it is allowed to attend to."""
    return float(torch.log(tokens.allowed.sum(-1).clamp_min(1).double()).mean())


def thumbnails(trace, tokens: Tokens, size: int) -> torch.Tensor:
    """(L, H, s, s) block-mean thumbnails of every head (s = min(size, m)); masked cells left out of each mean."""
    masked = ~tokens.allowed
    out = [
        block_mean(shown(trace.layer_attention(l, tokens.index), tokens), masked, size)[0]
        for l in range(trace.n_layers)
    ]
    return torch.stack(out)


# English pronouns: the token view starts on one, and core.antecedents looks for their antecedents
PRONOUNS = ("it", "its", "he", "him", "his", "she", "her", "they", "them", "their", "who", "whom", "whose", "which")


def default_query(trace, tokens: Tokens) -> int:
    """The token view's first query: the first shown pronoun (where attention to an antecedent is interesting),
    else the middle shown token. A position in the padded sequence."""
    words = trace.batch.tokens[tokens.index]
    for p in tokens.positions.tolist():
        if words[p].strip().lower() in PRONOUNS:
            return p
    return int(tokens.positions[tokens.m // 2])


def last_window_start(tokens: Tokens) -> int | None:
    """The largest first token of a full-resolution window, or None when the text fits without one."""
    return tokens.m - FULL_RES_MAX if tokens.m > FULL_RES_MAX else None


# --- the views: everything one figure draws ----------------------------------------------------------------------


@dataclass
class MatrixView:
    """A query x key matrix over the shown tokens: one head ('head'), the mean of a layer's heads ('mean') or
    the rollout up to a layer ('rollout')."""

    kind: str
    layer: int
    head: int
    n_heads: int
    cells: np.ndarray  # (r, c) float32, what is drawn; NaN = masked (or a block with no visible cell)
    row_labels: list[str]
    col_labels: list[str]
    m: int
    pooled: int | None  # s when the cells are s x s block means
    window: tuple[int, int] | None  # first and last token of a full-resolution window
    hide_special: bool
    weights: np.ndarray  # (m, m) the exact numbers, for the CSV download
    labels: list[str]  # (m,)


@dataclass
class GridView:
    """The model view: every head as a tile."""

    thumbs: np.ndarray  # (L, H, s, s) float32 block means; NaN = no visible cell
    m: int
    highlight: tuple[int, int]  # (layer, head) outlined
    head_names: list[str] | None  # GQA: '4·kv1' = query head 4 reads key/value head 1
    hide_special: bool
    labels: list[str]  # (s,) a tile's rows and columns: the token, or 'first…last (i–j)' for a pooled block


@dataclass
class TokenView:
    """One query's weights on every shown key, in every head of every layer."""

    cells: np.ndarray  # (L * H, c) float32; NaN = masked key (or a bin of masked keys)
    head_labels: list[str]  # 'L0 H3'
    key_labels: list[str]
    n_heads: int
    query_label: str
    hide_special: bool
    weights: np.ndarray  # (L * H, m) exact, for the CSV download
    labels: list[str]


@dataclass
class EntropyView:
    entropy: np.ndarray  # (L, H) nats
    uniform: float  # see uniform_entropy
    focused: tuple[int, int, float]  # (layer, head, entropy) of the lowest
    spread: tuple[int, int, float]  # ... and of the highest
    hide_special: bool
    row_labels: list[str]  # 'L0', ...
    col_labels: list[str]  # 'H0', ...


def matrix_view(
    kind: str, weights: torch.Tensor, tokens: Tokens, layer: int, head: int, n_heads: int, window: int | None
) -> MatrixView:
    """Shrink an (m, m) matrix for the browser: cell by cell up to FULL_RES_MAX, then block means, or the
    full-resolution window starting at token `window`."""
    m, labels, masked = tokens.m, tokens.labels, ~tokens.allowed
    rows = cols = labels
    pooled = win = None
    cells = weights
    if m > FULL_RES_MAX and window is None:
        cells, r_edges, c_edges = block_mean(weights, masked, FULL_RES_MAX)
        rows, cols, pooled = bin_labels(labels, r_edges), bin_labels(labels, c_edges), cells.shape[0]
    else:
        if m > FULL_RES_MAX:
            a = max(0, min(window, m - FULL_RES_MAX))
            sl = slice(a, a + FULL_RES_MAX)
            cells, masked, rows = weights[sl, sl], masked[sl, sl], labels[sl]
            cols, win = rows, (a, a + FULL_RES_MAX - 1)
        cells = cells.masked_fill(masked, float("nan"))
    return MatrixView(
        kind,
        layer,
        head,
        n_heads,
        cells.float().numpy(),
        rows,
        cols,
        m,
        pooled,
        win,
        tokens.hide_special,
        weights.numpy(),
        labels,
    )


def head_view(trace, tokens: Tokens, layer: int, head: int, window: int | None = None) -> MatrixView:
    """The head view: one head over the shown tokens."""
    return matrix_view("head", head_weights(trace, tokens, layer, head), tokens, layer, head, trace.n_heads, window)


def mean_view(trace, tokens: Tokens, layer: int, window: int | None = None) -> MatrixView:
    return matrix_view("mean", mean_over_heads(trace, tokens, layer), tokens, layer, 0, trace.n_heads, window)


def rollout_view(trace, tokens: Tokens, layer: int, window: int | None = None) -> MatrixView:
    return matrix_view("rollout", rollout(trace, tokens, layer), tokens, layer, 0, trace.n_heads, window)


def grid_view(trace, tokens: Tokens, highlight: tuple[int, int] = (0, 0)) -> GridView:
    size = TILE if trace.n_layers * trace.n_heads <= MANY_HEADS else TILE_MANY
    names = None
    if trace.grouped:  # GQA: say which key/value head each query head reads
        names = [f"{h}·kv{trace.kv_head(h)}" for h in range(trace.n_heads)]
    thumbs = thumbnails(trace, tokens, size).numpy()
    labels = bin_labels(tokens.labels, bin_edges(tokens.m, size))  # the blocks thumbnails() pools
    return GridView(thumbs, tokens.m, highlight, names, tokens.hide_special, labels)


def token_view(trace, tokens: Tokens, query: int) -> TokenView:
    """The token view for the query at position `query` of the padded sequence."""
    w = shown(query_weights(trace, query, tokens.index), tokens, rows=False)  # (L, H, m)
    L, H, m = w.shape
    exact = w.reshape(L * H, m)
    masked = ~trace.mask(tokens.index)[query][tokens.positions]  # (m,)
    key_labels = tokens.labels
    if m > FULL_RES_MAX:
        cells, _, c_edges = block_mean(exact, masked[None].expand(L * H, m), L * H, FULL_RES_MAX)
        key_labels = bin_labels(tokens.labels, c_edges)
    else:
        cells = exact.masked_fill(masked[None], float("nan"))
    query_label = tokens.labels_all[query] if query < len(tokens.labels_all) else str(query)
    head_labels = [f"L{l} H{h}" for l in range(L) for h in range(H)]
    return TokenView(
        cells.float().numpy(),
        head_labels,
        key_labels,
        H,
        query_label,
        tokens.hide_special,
        exact.numpy(),
        tokens.labels,
    )


def entropy_view(trace, tokens: Tokens) -> EntropyView:
    e = head_entropy(trace, tokens)
    lo, hi = divmod(int(e.argmin()), e.shape[1]), divmod(int(e.argmax()), e.shape[1])
    return EntropyView(
        e.numpy(),
        uniform_entropy(tokens),
        (*lo, float(e[lo])),
        (*hi, float(e[hi])),
        tokens.hide_special,
        [f"L{l}" for l in range(e.shape[0])],
        [f"H{h}" for h in range(e.shape[1])],
    )


AGGREGATES = {"mean": mean_view, "rollout": rollout_view}  # the aggregates drawn as a query x key matrix


# --- the page's link, declared once (app/ui.py binds the widgets from it; the lessons read a step's state with it)

DEFAULT_SENTENCE = "The cat sat on the mat because it was tired."  # the pages' example sentence
MAX_PAGE_TOKENS = 512  # what a page reads of a text (SmolLM2 itself reads 8,192)


def kept_trace(model, texts: tuple[str, ...], max_tokens: int):
    """The Trace a page draws of `texts` (each cut to max_tokens): q and k of every layer, without the hidden
    states and the vocabulary-sized logits, which would dominate a kept trace's memory."""
    trace = model.run(model.tokenize(list(texts), max_tokens))
    return dataclasses.replace(trace, hidden_states=[], logits=None)


SHIPPED_MODELS = ("minilm", "smollm2", "moe")
VIEWS = ("grid", "head", "token", "aggregate")
AGGREGATE_KINDS = ("mean", "rollout", "entropy")


class ModelContext:
    """What a model-reading page's state bounds depend on: the models offered (the shipped ones, then a learner's own
    folders that fit) and the picked one's shape (loaded once per process: the object the pages use). Built from
    the values being read, so the picked model is the one read before the bounds that need it."""

    def __init__(self, values, shipped: tuple[str, ...], fits, key: str = "model"):
        self._values, self._key = values, key
        self.models = offered_models(shipped, fits)

    @property
    def model_object(self):
        from core.models import registry

        return registry.shared(getattr(self._values, self._key))

    @property
    def n_layers(self) -> int:
        return self.model_object.n_layers

    @property
    def n_heads(self) -> int:
        return self.model_object.n_heads


def page_trace(model, text: str):
    """The trace of one text as a page reads it: at most MAX_PAGE_TOKENS tokens (and the model's positions)."""
    return model.run(model.tokenize([text], min(MAX_PAGE_TOKENS, model.max_positions)))


def offered_models(shipped: tuple[str, ...], fits) -> tuple[str, ...]:
    """`shipped`, then the learner's registered folders whose capabilities fit(caps) (app/models.own_keys)."""
    from core.models import registry

    return shipped + tuple(k for k, r in registry.folders().items() if fits(r.capabilities))


# The attention contract reads it: its attention goes through transformers' attention interface (not T5's): what
# /attention, /padded-batch, /head-detectors and /antecedents need of a model (core/models/needs.py).
through_contract = PAGE_NEEDS["attention"]


STATE = State(
    model_choice(SHIPPED_MODELS),
    Text("text", DEFAULT_SENTENCE),
    Choice("view", "grid", options=VIEWS),
    Flag("nospecial", False),
    Int("layer", lambda c: c.n_layers - 1, 0, lambda c: c.n_layers - 1),
    Int("head", 0, 0, lambda c: c.n_heads - 1),
    Choice("token", lambda c: c.default_token, options=lambda c: c.token_options),  # the token view's query
    Choice("agg", "mean", options=AGGREGATE_KINDS),
    Flag("win", False),
    Int("from", 0, 0, lambda c: c.last_window_start),
    context=lambda c: ModelContext(c, SHIPPED_MODELS, through_contract),
)
