"""/models: what the model contract reports for the picked model (a shipped one or the operator's folder), read from
its config without loading it: its shape, its positions, the pages that can use it and its key/value cache."""

from __future__ import annotations

from core.kv_cache.memory import model_cache_bytes
from core.lessons.answers.base import number, register
from core.lessons.kinds import Answer
from core.models.needs import PAGE_NEEDS, pages_for
from core.models.state import MAX_ESTIMATE_TOKENS, STATE
from core.state import Choice, Int, State

PAGE = "models"
POSITION_KINDS = ("learned", "sinusoidal", "rope", "alibi", "relative-buckets", "none")
COUNTS = ("layers", "query_heads", "kv_heads", "head_dim")
UNITS = {"bytes": 1, "MiB": 2**20}
YES_NO = ("yes", "no")


def _capabilities(s):
    from core.models import registry

    caps = registry.capabilities(s.pick)
    if caps is None:
        raise ValueError(f"the capabilities of {s.pick} cannot be read here")
    return caps


@register("models.count", "number", PAGE, STATE, State(Choice("what", "head_dim", options=COUNTS)), model_pass=False)
def models_count(params, s):
    """A number of the picked model's contract: "layers", "query_heads", "kv_heads" or "head_dim" (the width d of
    one head's queries and keys)."""
    caps = _capabilities(s)
    value = {"layers": caps.n_layers, "query_heads": caps.n_heads, "kv_heads": caps.n_kv_heads,
             "head_dim": caps.head_dim}[params.what]  # fmt: skip
    return number(value, params, 0, d_model=caps.d_model, heads=caps.n_heads, kv=caps.n_kv_heads)


@register("models.positions", "choice", PAGE, STATE, model_pass=False)
def models_positions(params, s):
    """How the picked model knows where a token is: its position kind (learned, sinusoidal, rope, alibi,
    relative-buckets, none)."""
    caps = _capabilities(s)
    return Answer("choice", caps.positions.kind, POSITION_KINDS, None, {"kind": caps.kind})


@register("models.cache_bytes", "number", PAGE, STATE,
          State(Choice("unit", "MiB", options=tuple(UNITS)), Int("to_tokens", None, 1, MAX_ESTIMATE_TOKENS)), model_pass=False)  # fmt: skip
def models_cache_bytes(params, s):
    """The picked decoder's key/value cache after the page's tokens (with to_tokens: a prediction at that length),
    float32, in `unit` (bytes or MiB)."""
    caps = _capabilities(s)
    n = params.to_tokens or s.tokens
    cache = model_cache_bytes(caps, n)
    if cache is None:
        raise ValueError(f"{s.pick} keeps no key/value cache per head")
    value = cache / UNITS[params.unit]
    return number(value, params, abs(value) * 0.01, n=n, layers=caps.n_layers, kv=caps.n_kv_heads, d=caps.head_dim,
                  unit=params.unit)  # fmt: skip


@register("models.has_cache", "choice", PAGE, STATE, model_pass=False)
def models_has_cache(params, s):
    """Does the page report a key/value cache (keys and values per head, while generating) for the picked model:
    'yes' or 'no'?"""
    caps = _capabilities(s)
    return Answer("choice", "no" if model_cache_bytes(caps, 1) is None else "yes", YES_NO, None, {"kind": caps.kind})


@register("models.supports", "choice", PAGE, STATE,
          State(Choice("page", "logit-lens", options=tuple(dict.fromkeys(p.split("/")[0] for p in PAGE_NEEDS)))), model_pass=False)  # fmt: skip
def models_supports(params, s):
    """Can a folder with the picked model's capabilities be picked on page `page`: 'yes' or 'no'?"""
    caps = _capabilities(s)
    pages = pages_for(caps)
    return Answer("choice", "yes" if params.page in pages else "no", YES_NO, None,
                  {"page": params.page, "pages": ", ".join(f"/{p}" for p in pages), "kind": caps.kind})  # fmt: skip
