"""/multi-head: the layer walk of the link's model (layer part) and the head-count table (heads part)."""

from __future__ import annotations

import functools

from core import multi_head as mh
from core.lessons.answers.base import argmax_label, number, register, word_position
from core.lessons.kinds import Answer
from core.models import registry
from core.pooling import indexed_labels
from core.state import Choice, Flag, Int, State, Word

PAGE = "multi-head"


@functools.lru_cache(maxsize=8)
def _walk(key: str, serial: int, text: str, layer: int):
    """serial: which load of the model (registry.serial), so a folder retrained in place is walked anew."""
    return mh.layer_walk(registry.shared(key), text, layer)


def walk_of(s):
    registry.shared(s.model)  # loaded (and given its serial) before the walk is looked up
    return _walk(s.model, registry.serial(s.model), s.text, s.layer)


@register("multi_head.top_key", "token", PAGE, mh.STATE, State(Word("query", None)))
def multi_head_top_key(params, s):
    """The key head `head` of layer `layer` gives most weight from the query word (the page's layer part)."""
    walk = walk_of(s)
    labels = indexed_labels(walk.tokens)
    q = word_position(walk.tokens, params.query, len(walk.tokens) - 1)
    w = walk.weights[s.head, q].numpy()
    return Answer("token", argmax_label(w, labels), tuple(labels), None,
                  {"query": labels[q], "weight": float(w.max()), "head": s.head})  # fmt: skip


@register("multi_head.shape", "number", PAGE, mh.STATE,
          State(Choice("what", "d_k", options=("d_k", "concat", "heads", "tokens"))))  # fmt: skip
def multi_head_shape(params, s):
    """A width in the layer walk: "d_k" (one head's Z_i), "concat" (the concatenation), "heads" (H), "tokens" (n)."""
    walk = walk_of(s)
    values = {"d_k": walk.head_dim, "concat": walk.concat.shape[-1], "heads": walk.n_heads,
              "tokens": walk.x.shape[0]}  # fmt: skip
    return number(values[params.what], params, 0, **values)


@register("multi_head.head_count", "number", PAGE, mh.STATE,
          State(Int("heads", 8, 1, mh.PAPER_D_MODEL),
                Choice("what", "score_rank", options=("head_dim", "parameters", "flops", "score_rank",
                                                      "score_entries"))), model_pass=False)  # fmt: skip
def multi_head_head_count(params, s):
    """For d_model = 512 (the paper's) and h = params heads on n tokens (the heads part's slider): "head_dim",
    "parameters", "flops", "score_rank" (largest rank of one head's n x n score matrix) or "score_entries"."""
    rows = {r.heads: r for r in mh.head_count_rows(mh.PAPER_D_MODEL, s.n)}
    row = rows.get(params.heads) or next(iter(mh.head_count_rows(mh.PAPER_D_MODEL, s.n, (params.heads,))))
    few, many = min(rows.values(), key=lambda r: r.heads), max(rows.values(), key=lambda r: r.heads)
    return number(getattr(row, params.what), params, 0, n=s.n, heads=params.heads, d_k=row.head_dim,
                  parameters=row.parameters, flops=row.flops, h_few=few.heads, h_many=many.heads,
                  entries_few=few.score_entries, entries_many=many.score_entries)  # fmt: skip


MOVED_WITHIN = 1e-4  # float32 rounding of one layer is ~1e-6; with positions the outputs differ by ~0.1 and more


@functools.lru_cache(maxsize=8)
def _permutation(key: str, serial: int, text: str, seed: int):
    return mh.permutation_check(registry.shared(key), text, seed)


@register("multi_head.shuffled_output", "choice", PAGE, mh.STATE, State(Flag("positions", False)))
def multi_head_shuffled_output(params, s):
    """A prediction on the order part: the page's tokens shuffled (its seed) through layer 0, on the word embeddings
    alone or (`positions`) with the model's position vectors added by position: does each token get the output it
    had before, only 'moves' with it (every number within 1e-4), or does its output 'change'?"""
    registry.shared(s.model)
    check = _permutation(s.model, registry.serial(s.model), s.text, s.seed)
    error = check.error_with_positions if params.positions else check.error_without_positions
    return Answer("choice", "moves" if error <= MOVED_WITHIN else "changes", ("moves", "changes"), None,
                  {"error": f"{error:.1e}", "tokens": len(check.permutation)})  # fmt: skip
