"""/masks: the padded batch of the link's sentences, one sentence's masks and head, and the three kinds."""

from __future__ import annotations

import functools

from core.lessons.answers.base import argmax_label, mixed, number, register, word_position
from core.lessons.kinds import Answer
from core.masks import batch as core
from core.masks import encoder_decoder
from core.masks.state import STATE
from core.pooling import indexed_labels
from core.state import Choice, State, Word

PAGE = "masks"


@register("masks.allowed_count", "number", PAGE, STATE,
          State(Choice("mask", None, options=tuple(core.MASK_KINDS))), model_pass=False)  # fmt: skip
def masks_allowed_count(params, s):
    """Cells (query, key) a mask kind (params mask, else the page's) lets through for the picked sentence of the
    padded batch (the padded length: every sentence is padded to the longest)."""
    lists = s.token_lists
    kind = params.mask or s.mask
    allowed = core.mask_of_kind(kind, core.pad_batch(lists).attention_mask)[int(s.row), 0]
    return number(int(allowed.sum()), params, 0, kind=kind, n=int(allowed.shape[0]), real=len(lists[int(s.row)]))


@register("masks.top_key", "token", PAGE, STATE, State(Word("query", None)), model_pass=False)
def masks_top_key(params, s):
    """The key the picked head gives most weight from a query of the picked sentence under the page's mask
    (params query: a position or a word; default the sentence's last real token)."""
    view = core.mask_steps_view(s.token_lists, int(s.row), s.head, s.mask, seed=0)
    labels = indexed_labels(view.tokens)
    q = word_position(view.tokens[: view.n_real], params.query, view.n_real - 1)
    return Answer("token", argmax_label(view.weights[q], labels), tuple(labels), None,
                  {"query": labels[q], "weight": float(view.weights[q].max())})  # fmt: skip


@functools.lru_cache(maxsize=8)
def _three_kinds(src: tuple, tgt: tuple):
    return encoder_decoder.encoder_decoder(list(src), list(tgt), seed=0)


def _kinds(s):
    lists = s.token_lists
    return _three_kinds(tuple(lists[int(s.src)]), tuple(lists[int(s.tgt)]))


@register("masks.kind_order", "order", PAGE, STATE, model_pass=False)
def masks_kind_order(params, s):
    """The three kinds of attention (encoder_self, decoder_self, cross) from most to fewest allowed cells, for the
    page's source and target sentences."""
    counts = {k.kind: int(k.allowed.sum()) for k in _kinds(s).kinds}
    return Answer("order", tuple(sorted(counts, key=lambda k: -counts[k])), mixed(counts), None, counts)


@register("masks.cross_shape", "number", PAGE, STATE,
          State(Choice("what", "keys", options=("queries", "keys"))), model_pass=False)  # fmt: skip
def masks_cross_shape(params, s):
    """Rows ("queries") or columns ("keys") of one head's cross-attention weights for the page's sentences."""
    cross = next(k for k in _kinds(s).kinds if k.kind == "cross")
    n_q, n_k = cross.weights.shape[-2:]
    return number(n_k if params.what == "keys" else n_q, params, 0, queries=n_q, keys=n_k)
