"""/flash-attention: the tiles part (n, d, Br, Bc, the query tile and the key-tile step)."""

from __future__ import annotations

import math

from core import flash_attention as fa
from core.lessons.answers import number, register
from core.state import Choice, Int, State

PAGE = "flash-attention"


@register("flash_attention.tiles", "number", PAGE, fa.STATE,
          State(Choice("what", "all", options=("query", "key", "all"))))  # fmt: skip
def flash_attention_tiles(params, s):
    """Query tiles ("query"), key tiles ("key") or score tiles ("all" = both multiplied) for the page's n, Br, Bc."""
    tr, tc = len(fa.tile_ranges(s.n, s.br)), len(fa.tile_ranges(s.n, s.bc))
    return number({"query": tr, "key": tc, "all": tr * tc}[params.what], params, 0, tr=tr, tc=tc)


@register("flash_attention.running_max", "number", PAGE, fa.STATE, State(Int("row", 0, 0)))
def flash_attention_running_max(params, s):
    """The running maximum m of query row `row` of the picked query tile after the picked key-tile step."""
    view = s.walk
    rows = view.queries[1] - view.queries[0]
    if params.row >= rows:
        raise ValueError(f"row {params.row} is outside the query tile's {rows} rows")
    value = float(view.steps[s.step].m[params.row])
    if not math.isfinite(value):
        raise ValueError("this row has seen no key yet: pick another step or row")
    return number(value, params, 0.01, query=view.queries[0] + params.row, step=s.step)
