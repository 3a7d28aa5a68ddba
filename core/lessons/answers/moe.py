"""/moe: the routing of the link's text by the picked checkpoint, at its layer and capacity factor."""

from __future__ import annotations

import functools

import numpy as np

from core.lessons.answers.base import number, register, word_position
from core.lessons.kinds import Answer
from core.models import moe_model, registry
from core.moe import views
from core.moe.state import STATE
from core.state import Choice, State, Word

PAGE = "moe"


@functools.lru_cache(maxsize=8)
def _run(variant: str, serial: int, text: str):
    return views.run_text(registry.shared(registry.moe_key(variant)), text)


def routing(s, variant: str | None = None):
    """The page's routing view; `variant`: another checkpoint at the same text, layer and capacity factor."""
    variant = variant or s.ckpt
    key = registry.moe_key(variant)
    registry.shared(key)
    return views.text_routing({variant: _run(variant, registry.serial(key), s.text)}, variant, s.layer, s.cf)


@register("moe.expert", "number", PAGE, STATE, State(Word("word", None)))
def moe_expert(params, s):
    """The expert (0-based) the router sends word `word` to first, at the page's checkpoint and layer."""
    view = routing(s)
    t = word_position(view.tokens, params.word, len(view.tokens) - 1)
    first = int(np.argmax(view.probs[t]))
    return number(first, params, 0, token=view.tokens[t], p=float(view.probs[t, first]), layer=view.layer)


@register("moe.capacity", "number", PAGE, STATE)
def moe_capacity(params, s):
    """Assignments one expert may take at the page's capacity factor: ceil(cf · T · k / E)."""
    view = routing(s)
    return number(view.capacity, params, 0, tokens=len(view.tokens), k=view.top_k, experts=view.n_experts)


@register("moe.dropped", "number", PAGE, STATE)
def moe_dropped(params, s):
    """Assignments dropped because their expert was full, at the page's capacity factor."""
    view = routing(s)
    return number(view.n_dropped, params, 0, capacity=view.capacity, assignments=view.n_assignments)


@register("moe.dropped_change", "choice", PAGE, STATE,
          State(Choice("ckpt", "collapsed", options=tuple(moe_model.VARIANTS))))  # fmt: skip
def moe_dropped_change(params, s):
    """A prediction: switched to checkpoint `ckpt` (same text, layer and capacity factor), does the page drop
    'more', 'fewer' or the 'same' number of assignments?"""
    now, then = routing(s), routing(s, params.ckpt)
    correct = "same" if then.n_dropped == now.n_dropped else ("more" if then.n_dropped > now.n_dropped else "fewer")
    return Answer("choice", correct, ("more", "fewer", "same"), None,
                  {"before": now.n_dropped, "after": then.n_dropped, "capacity": now.capacity,
                   "deviation_before": now.deviation, "deviation_after": then.deviation})  # fmt: skip
