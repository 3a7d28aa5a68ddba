"""/kv-cache: the generation the link's settings ask for (the page's: same prompt ids, same options), read at the
link's step and layer; the cache's bytes at the link's context."""

from __future__ import annotations

import numpy as np

from core.kv_cache import views
from core.kv_cache.state import STATE
from core.lessons.answers.base import number, register
from core.lessons.kinds import Answer
from core.state import Choice, State

PAGE = "kv-cache"
UNITS = {"GiB": 1024**3, "MiB": 1024**2, "KiB": 1024, "bytes": 1}


@register("kv_cache.bytes_at", "number", PAGE, STATE,
          State(Choice("unit", "MiB", options=tuple(UNITS)), Choice("heads", "kv", options=("kv", "query"))))  # fmt: skip
def kv_cache_bytes_at(params, s):
    """The bytes the model's cache holds once the link's context `ctx` is in it, in `unit`: with its own key/value
    heads (heads "kv": grouped-query attention where it shares them; a sliding-window layer keeps at most W - 1
    positions) or with one per query head (heads "query": multi-head attention)."""
    at = views.cache_at(s.generation, s.ctx)
    value = (at.bytes if params.heads == "kv" else at.bytes_mha) / UNITS[params.unit]
    gen = s.generation
    return number(value, params, abs(value) * 0.01, unit=params.unit, ctx=s.ctx, layers=gen.layers,
                  kv=gen.kv_heads, heads=gen.heads, head_dim=gen.head_dim, b=gen.bytes_per_value)  # fmt: skip


@register("kv_cache.work_ratio", "number", PAGE, STATE)
def kv_cache_work_ratio(params, s):
    """How many times the multiply-adds of the link's step would grow without the cache (the whole text through
    every layer again, n x n scores per layer) against with it (one token, one row of scores)."""
    work = views.step_work(s.generation, s.step)
    return number(work.ratio, params, work.ratio * 0.15, n=work.n, with_cache=work.with_cache, without=work.without)


@register("kv_cache.next_token", "choice", PAGE, STATE)
def kv_cache_next_token(params, s):
    """The token the model rates most likely at the link's step (full cache), among its five most likely (A-Z)."""
    top = views.next_tokens(s.generation, s.step)
    return Answer("choice", top.top_tokens[0], tuple(sorted(set(top.top_tokens))), None,
                  {"p": float(top.top_probs[0]), "step": top.step})  # fmt: skip


@register("kv_cache.top_key", "token", PAGE, STATE)
def kv_cache_top_key(params, s):
    """The position the new token of the link's step weighs most in the link's layer, mean over heads (the step
    figure's bottom row of weights)."""
    view = views.step_attention(s.generation, s.step, s.layer)
    if view.pooled:
        raise ValueError("the step's positions are pooled into columns: ask about a shorter text")
    labels = view.labels  # '3 cat': one per position (not pooled)
    best = int(np.argmax(view.mean))
    return Answer("token", labels[best], tuple(labels), None,
                  {"weight": float(view.mean[best]), "fed": labels[view.position], "layer": view.layer})  # fmt: skip
