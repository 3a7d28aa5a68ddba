"""/sdpa-gqa: the KV cache of the picked model (cfg or a typed-in one) at the page's context, batch and format."""

from __future__ import annotations

from core.lessons.answers.base import number, register
from core.sdpa_gqa.state import STATE, model_config
from core.sdpa_gqa.views import kv_cache_view
from core.state import Choice, Int, State

PAGE = "sdpa-gqa"
UNITS = {"GiB": 1024**3, "MiB": 1024**2, "bytes": 1}


def _view(s, ctx: int | None = None, batch: int | None = None):
    cfg = model_config(s)
    if cfg is None:
        raise ValueError("the query heads must divide by the key/value heads")
    return kv_cache_view(cfg, ctx or s.ctx, batch or s.batch, s.dtype)


@register("sdpa_gqa.kv_bytes", "number", PAGE, STATE,
          State(Choice("unit", "GiB", options=tuple(UNITS)), Int("ctx", None, 1, 10_000_000),
                Int("batch", None, 1, 4096)), model_pass=False)  # fmt: skip
def sdpa_gqa_kv_bytes(params, s):
    """The KV cache of the page's model at its context, batch and number format, in `unit` (GiB, MiB or bytes).
    With params ctx and/or batch: a prediction of the cache at that context and batch (the learner then sets them)."""
    view = _view(s, params.ctx, params.batch)
    value = view.total / UNITS[params.unit]
    return number(value, params, abs(value) * 0.01, unit=params.unit, model=view.cfg.name, ctx=view.context,
                  batch=view.batch)  # fmt: skip


@register("sdpa_gqa.group_size", "number", PAGE, STATE, model_pass=False)
def sdpa_gqa_group_size(params, s):
    """Query heads sharing one key/value head in the page's model (= how many times smaller than MHA its cache is)."""
    view = _view(s)
    return number(view.cfg.group_size, params, 0, heads=view.cfg.heads, kv=view.cfg.kv_heads)
