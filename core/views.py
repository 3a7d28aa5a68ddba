"""What the attention views draw, computed from a Trace (core/models/base.py) for one sequence of a batch.

Everything here works on the real tokens of that sequence (padding dropped) and, optionally, with special
tokens ([CLS], [SEP], BOS, ...) hidden: their rows and columns are removed and every remaining row is divided
by the weight it kept, so rows sum to 1 again ("renormalised"). The pages say so whenever it is on.

Big matrices are shrunk here, before anything goes to the browser: `block_pool` averages (nearly) equal
blocks of queries and keys, ignoring masked cells, with the same bins as core.downsample.pool_matrix.
"""

from __future__ import annotations

import torch

from .downsample import bin_edges
from .sdpa import attention_weights, entropy, repeat_kv

# --- which tokens are on screen ---------------------------------------------------------------------------------


def real_length(trace, index: int = 0) -> int:
    return int(trace.batch.attention_mask[index].sum())


def shown_tokens(trace, index: int = 0, hide_special: bool = False) -> torch.Tensor:
    """Indices (into the padded sequence) of the tokens on screen: real tokens, minus special ones if asked."""
    n = real_length(trace, index)
    keep = torch.ones(n, dtype=torch.bool)
    if hide_special:
        keep &= ~trace.batch.special[index, :n].bool()
    idx = torch.nonzero(keep).flatten()
    return idx if len(idx) else torch.arange(n)  # a text of only special tokens: show them anyway


def renormalise(weights: torch.Tensor) -> torch.Tensor:
    """Rows divided by their sum (a row that kept no weight stays 0)."""
    total = weights.sum(-1, keepdim=True)
    return torch.where(total > 0, weights / total.clamp_min(1e-30), torch.zeros_like(weights))


def _select(weights: torch.Tensor, rows: torch.Tensor | None, cols: torch.Tensor, renorm: bool) -> torch.Tensor:
    w = weights if _is_prefix(cols, weights.shape[-1]) else weights[..., cols]
    if rows is not None and not _is_prefix(rows, w.shape[-2]):
        w = w[..., rows, :]
    return renormalise(w) if renorm else w


def _is_prefix(idx: torch.Tensor, size: int) -> bool:
    """idx == arange(size): selecting it would only copy."""
    return len(idx) == size and (size == 0 or bool(idx[-1] == size - 1))


# --- exact weights ------------------------------------------------------------------------------------------------


def layer_weights(trace, layer: int, index: int = 0, rows: torch.Tensor | None = None) -> torch.Tensor:
    """(H, n_rows, n) exact weights of every head of one layer for sequence `index` (padded length n):
    the same numbers as trace.attention(layer, h, index, rows) for each h, computed in one call."""
    q = trace.queries[layer][index]  # (H, n, d)
    k = repeat_kv(trace.keys[layer][index][None], trace.n_heads // trace.n_kv_heads)[0]
    m = trace.mask(index)
    if rows is not None:
        q, m = q[:, rows], m[rows]
    return attention_weights(q, k, m[None], trace.scale)


def head_weights(trace, layer: int, head: int, index: int = 0, hide_special: bool = False):
    """(m, m) weights of one head over the shown tokens, and the (m, m) 'masked' map (True = may not attend)."""
    shown = shown_tokens(trace, index, hide_special)
    w = trace.attention(layer, head, index)
    allowed = trace.mask(index)[shown][:, shown]
    return _select(w, shown, shown, hide_special), ~allowed


def token_weights(trace, query: int, index: int = 0, hide_special: bool = False) -> torch.Tensor:
    """(L, H, m): the weights of ONE query token (position `query` in the padded sequence) in every head of
    every layer, over the shown keys."""
    shown = shown_tokens(trace, index, hide_special)
    rows = torch.tensor([query])
    out = torch.stack([layer_weights(trace, l, index, rows)[:, 0] for l in range(trace.n_layers)])
    return _select(out, None, shown, hide_special)


def mean_over_heads(trace, layer: int, index: int = 0, hide_special: bool = False) -> torch.Tensor:
    """(m, m) average of the layer's heads (each head renormalised first when specials are hidden)."""
    shown = shown_tokens(trace, index, hide_special)
    return _select(layer_weights(trace, layer, index), shown, shown, hide_special).mean(0)


def rollout(
    trace, index: int = 0, last_layer: int | None = None, hide_special: bool = False, residual: float = 0.5
) -> torch.Tensor:
    """Attention rollout (Abnar & Zuidema 2020): per layer A = mean over heads, mixed with the residual
    connection as 0.5 A + 0.5 I, rows renormalised; then multiplied from the first layer up:
    R = A_last ... A_1. R[i, j] estimates how much token j's input flows into token i's output at `last_layer`.
    Computed over all real tokens (information does flow through [CLS]/[SEP]); hiding specials afterwards
    drops their rows and columns and renormalises."""
    n = real_length(trace, index)
    last = trace.n_layers - 1 if last_layer is None else last_layer
    eye = torch.eye(n)
    r = eye
    for layer in range(last + 1):
        a = layer_weights(trace, layer, index)[:, :n, :n].mean(0)
        a = renormalise((1 - residual) * a + residual * eye)
        r = a @ r
    shown = shown_tokens(trace, index, hide_special)
    return _select(r, shown, shown, hide_special)


def head_entropy(trace, index: int = 0, hide_special: bool = False) -> torch.Tensor:
    """(L, H): mean entropy (nats) of each head's rows over the shown queries. Low = focused on few keys."""
    shown = shown_tokens(trace, index, hide_special)
    out = torch.empty(trace.n_layers, trace.n_heads)
    for layer in range(trace.n_layers):
        w = _select(layer_weights(trace, layer, index), shown, shown, hide_special)
        out[layer] = entropy(w).mean(-1)
    return out


def uniform_entropy(trace, index: int = 0, hide_special: bool = False) -> float:
    """The reference for head_entropy: mean over shown queries of log(number of shown keys the query may see),
    the entropy of a row spread evenly over everything it is allowed to attend to."""
    shown = shown_tokens(trace, index, hide_special)
    allowed = trace.mask(index)[shown][:, shown].sum(-1).clamp_min(1)
    return float(torch.log(allowed.double()).mean())


# --- shrinking for the browser ------------------------------------------------------------------------------------


def pooling_matrix(n: int, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(bins, n) 0/1 matrix assigning each of n positions to its bin, and the bin edges (as pool_matrix)."""
    edges = torch.as_tensor(bin_edges(n, size))
    pos = torch.arange(n)
    member = (pos[None, :] >= edges[:-1, None]) & (pos[None, :] < edges[1:, None])
    return member.float(), edges


def block_pool(
    weights: torch.Tensor, masked: torch.Tensor | None, size: int, size_cols: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Block means of (..., n_q, n_k) down to at most (size, size_cols): masked cells are left out of each
    mean; a block with no allowed cell is NaN. Equal to core.downsample.pool_matrix with masked cells set to
    NaN (a test checks), but a couple of matrix products instead of a Python loop over blocks."""
    n_q, n_k = weights.shape[-2:]
    pr, r_edges = pooling_matrix(n_q, size)
    pc, c_edges = pooling_matrix(n_k, size if size_cols is None else size_cols)
    allowed = torch.ones(n_q, n_k) if masked is None else (~masked).float()
    w = weights.float() * allowed
    sums = pr @ w @ pc.T
    counts = pr @ allowed @ pc.T
    pooled = torch.where(counts > 0, sums / counts.clamp_min(1), torch.full_like(sums, float("nan")))
    return pooled, r_edges, c_edges


def thumbnails(trace, size: int, index: int = 0, hide_special: bool = False) -> torch.Tensor:
    """(L, H, s, s) block-mean thumbnails of every head (s = min(size, shown tokens))."""
    shown = shown_tokens(trace, index, hide_special)
    masked = ~trace.mask(index)[shown][:, shown]
    out = []
    for layer in range(trace.n_layers):
        w = _select(layer_weights(trace, layer, index), shown, shown, hide_special)
        out.append(block_pool(w, masked, size)[0])
    return torch.stack(out)


def token_count(model, text: str) -> int:
    """How many tokens the model's tokenizer makes of the whole text (specials included), before any cut."""
    return len(model.tokenizer(text, truncation=False)["input_ids"])


# --- padded batches ------------------------------------------------------------------------------------------------


def padding_report(model, batch_trace, max_tokens: int | None = None) -> list[dict]:
    """For each sequence of a padded batch: how many real and padding tokens it has, the largest weight any
    real query puts on a padding key (should be exactly 0), and the largest difference, over every layer and
    head, between its weights in the batch and in a run of that text alone (should be float rounding)."""
    out = []
    width = batch_trace.batch.input_ids.shape[1]
    for i, text in enumerate(batch_trace.batch.texts):
        n = real_length(batch_trace, i)
        alone = model.run(model.tokenize([text], max_tokens))
        same_ids = torch.equal(alone.batch.input_ids[0], batch_trace.batch.input_ids[i, :n])
        pad_weight, diff = 0.0, 0.0
        for layer in range(batch_trace.n_layers):
            w = layer_weights(batch_trace, layer, i)  # (H, width, width)
            pad_weight = max(pad_weight, float(w[:, :n, n:].max()) if n < width else 0.0)
            if same_ids:
                diff = max(diff, float((w[:, :n, :n] - layer_weights(alone, layer, 0)).abs().max()))
        out.append(
            {
                "tokens": n,
                "padding": width - n,
                "max_pad_weight": pad_weight,
                "max_diff_alone": diff if same_ids else float("nan"),
                "same_tokens": same_ids,
            }
        )
    return out
