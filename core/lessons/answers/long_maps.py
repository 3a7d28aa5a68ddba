"""/long-maps: one layer's pooled maps of the link's source (random q and k, SmolLM2 or a learner's model) on its
document, read as the page reads them: a head's map at the chosen resolution and statistic, the head shares, and
what the full matrices would weigh."""

from __future__ import annotations

import functools

import numpy as np

from core import long_maps
from core.lessons.answers.base import number, register
from core.lessons.kinds import Answer
from core.long_maps import views
from core.long_maps.state import RANDOM, SIDES, STATE
from core.rope_scaling.long_context import load_long_text
from core.state import Choice, Int, State

PAGE = "long-maps"
UNITS = {"MiB": 2**20, "GiB": 2**30, "bytes": 1}


@functools.lru_cache(maxsize=2)
def _computed(source: str, serial: int, n: int, layer: int, seed: int, text: str | None, causal: bool):
    """(q, k, scale, causal) and the pooled maps of every head, as the page computes them after its button."""
    if source == RANDOM:
        q, k, scale = long_maps.random_qk(n, seed=seed)
    else:
        from core.models import registry

        model = registry.shared(source)
        causal = model.is_causal or causal
        q, k, scale = model.layer_qk(long_maps.document_batch(model, text, n), layer)
    return long_maps.layer_maps(q, k, scale, causal=causal), q.shape[1] // k.shape[1]


def _maps(s) -> tuple[long_maps.LayerMaps, int]:
    """The step's maps and its key/value heads' group size (read: the document and the source's shape)."""
    from core.models import registry

    text = None if s.src == RANDOM else (load_long_text() if s.doc == "licences" else s.text)
    if s.src != RANDOM:
        registry.shared(s.src)  # loaded first, so the serial is the loaded one's
    serial = 0 if s.src == RANDOM else registry.serial(s.src)
    return _computed(s.src, serial, int(s.n), s.layer, s.seed, text, s.causal)


def runs_a_model(s) -> bool:
    """Random q and k are arithmetic on small tensors; a model's maps need its forward to the layer."""
    return s.src != RANDOM


def _map(s, side: int) -> views.MapView:
    maps, group = _maps(s)
    return views.map_view(maps, s.head, s.stat, side, maps.mean.shape[0] // group)


@register("long_maps.cell_tokens", "number", PAGE, STATE, model_pass=runs_a_model)
def long_maps_cell_tokens(params, s):
    """Tokens one cell of the head's map covers on each side (rounded mean), at the page's length and resolution
    (details: `cells`, the cells a side)."""
    view = _map(s, int(s.side))
    return number(view.cell_rows, params, 0, cells=len(view.row_edges) - 1)


@register("long_maps.cell", "number", PAGE, STATE, State(Int("row", 0, 0), Int("col", 0, 0)), model_pass=runs_a_model)
def long_maps_cell(params, s):
    """The value of cell (row, col) of the head's map (the page's statistic and resolution): the mean or the largest
    weight of that block of the full n x n matrix (details: `rows`, `cols`: the tokens of the block)."""
    view = _map(s, int(s.side))
    r, c = params.row, params.col
    rows, cols = (f"{int(e[i])}–{int(e[i + 1]) - 1}" for e, i in ((view.row_edges, r), (view.col_edges, c)))
    return number(float(view.values[r, c]), params, 1e-3, rows=rows, cols=cols)


@register(
    "long_maps.peak_change", "choice", PAGE, STATE, State(Choice("to", "64", options=SIDES)), model_pass=runs_a_model
)
def long_maps_peak_change(params, s):
    """A prediction: does the head map's largest cell go 'higher', 'lower' or stay the 'same' (within 1e-6) when the
    resolution moves from the page's to `to` cells a side (details: `before`, `after`)?"""
    before = float(np.nanmax(_map(s, int(s.side)).values))
    after = float(np.nanmax(_map(s, int(params.to)).values))
    verdict = "same" if abs(after - before) <= 1e-6 else "higher" if after > before else "lower"
    return Answer("choice", verdict, ("higher", "lower", "same"), None,
                  {"before": round(before, 4), "after": round(after, 4)})  # fmt: skip


@register(
    "long_maps.full_bytes",
    "number",
    PAGE,
    STATE,
    State(Choice("unit", "MiB", options=tuple(UNITS))),
    model_pass=runs_a_model,
)
def long_maps_full_bytes(params, s):
    """What the full n x n float32 weight matrices of every head of the layer would weigh, in `unit` (the page sends
    the pooled maps instead; details: `heads`, `n`)."""
    maps, _ = _maps(s)
    heads = maps.mean.shape[0]
    return number(maps.full_bytes / UNITS[params.unit], params, 0.01, heads=heads, n=maps.n)


@register("long_maps.mass_where", "choice", PAGE, STATE, model_pass=runs_a_model)
def long_maps_mass_where(params, s):
    """Where the head's average query puts most of its weight: on the 'first' key bin (an attention sink), on keys
    in its 'own' bin (local attention) or 'elsewhere' (the rest), read off the exact pooled means (details: the
    three shares `first`, `own`, `rest`)."""
    maps, _ = _maps(s)
    shares = views.head_shares(maps, s.head)
    first, own = float(shares.first_share[s.head]), float(shares.own_bin_share[s.head])
    parts = {"first": first, "own": own, "elsewhere": 1.0 - first - own}
    return Answer("choice", max(parts, key=parts.get), ("first", "own", "elsewhere"), None,
                  {"first": round(first, 3), "own": round(own, 3), "rest": round(parts["elsewhere"], 3)})  # fmt: skip
