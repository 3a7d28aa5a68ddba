"""/transformer-xl: the window and sinks of the effective-context part, and the committed SmolLM2 run."""

from __future__ import annotations

from core import transformer_xl as tx
from core.kv_cache.eviction import POLICIES, visible_positions
from core.lessons.answers.base import mixed, number, register
from core.lessons.kinds import Answer
from core.state import Choice, Int, Many, State

PAGE = "transformer-xl"


@register("transformer_xl.visible_keys", "number", PAGE, tx.STATE,
          State(Choice("policy", "sinks_window", options=tuple(POLICIES)), Int("query", 100, 0)), model_pass=False)  # fmt: skip
def transformer_xl_visible_keys(params, s):
    """Keys the token at position `query` still sees when the cache keeps the last W (the page's window, its own
    key included) and, with policy sinks_window, the first S (the page's sinks)."""
    seen = visible_positions(params.policy, params.query, s.win, s.sinks)
    return number(len(seen), params, 0, window=s.win, sinks=s.sinks, query=params.query)


def _measured():
    view = tx.measured_view()
    if view is None:
        raise ValueError("no committed results/transformer_xl.json")
    return view


@register("transformer_xl.loss_order", "order", PAGE, tx.STATE,
          State(Many("methods", ("full", "sinks_window", "window"), options=tx.METHODS)), model_pass=False)  # fmt: skip
def transformer_xl_loss_order(params, s):
    """A prediction, in the committed SmolLM2 run: `methods` from the lowest to the highest mean loss once the first
    tokens have left the window."""
    view = _measured()
    loss = {m: view.mean_past[m] for m in params.methods}
    return Answer("order", tuple(sorted(loss, key=loss.get)), mixed(loss), None,
                  {**loss, "past_from": view.past_from})  # fmt: skip


@register("transformer_xl.best_after_eviction", "choice", PAGE, tx.STATE, model_pass=False)
def transformer_xl_best_after_eviction(params, s):
    """In the committed run: of the methods that evict or cut (not full attention), the lowest mean loss once the
    first tokens have left the window."""
    view = _measured()
    options = tuple(m for m in view.mean_past if m != "full")
    best = min(options, key=view.mean_past.get)
    return Answer("choice", best, options, None, {"loss": view.mean_past[best], "full": view.mean_past["full"]})
