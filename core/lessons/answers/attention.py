"""/attention: one head of the link's model, on its text, layer and head."""

from __future__ import annotations

from core import attention
from core.lessons.answers.base import argmax_label, register, word_position
from core.lessons.kinds import Answer
from core.state import State, Word

PAGE = "attention"


@register("attention.top_key", "token", PAGE, attention.STATE, State(Word("query", None)))
def attention_top_key(params, s):
    """The key this head gives most weight from the query word `query` (params), on the page's text, model, layer
    and head (defaults: the last layer, head 0, the page's sentence)."""
    trace = attention.page_trace(s.model_object, s.text)
    tokens = attention.select_tokens(trace, 0, s.nospecial)
    shown = [trace.batch.tokens[0][int(p)] for p in tokens.positions]
    q = word_position(shown, params.query, len(shown) - 1)
    w = attention.head_weights(trace, tokens, s.layer, s.head)[q]
    return Answer("token", argmax_label(w.numpy(), tokens.labels), tuple(tokens.labels), None,
                  {"query": tokens.labels[q], "weight": float(w.max()), "layer": s.layer, "head": s.head})  # fmt: skip
