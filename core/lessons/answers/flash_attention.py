"""/flash-attention: the tiles part (n, d, Br, Bc, the query tile and the key-tile step)."""

from __future__ import annotations

import math

from core import flash_attention as fa
from core.lessons.answers.base import number, register
from core.lessons.kinds import Answer
from core.state import Choice, Int, State

PAGE = "flash-attention"


@register("flash_attention.tiles", "number", PAGE, fa.STATE,
          State(Choice("what", "all", options=("query", "key", "all"))), model_pass=False)  # fmt: skip
def flash_attention_tiles(params, s):
    """Query tiles ("query"), key tiles ("key") or score tiles ("all" = both multiplied) for the page's n, Br, Bc."""
    tr, tc = len(fa.tile_ranges(s.n, s.br)), len(fa.tile_ranges(s.n, s.bc))
    return number({"query": tr, "key": tc, "all": tr * tc}[params.what], params, 0, tr=tr, tc=tc)


def _picked_step(params, s) -> fa.KeyTileStep:
    """The picked key-tile step of the picked query tile, once row `row` of it has seen a key."""
    view = s.walk
    rows = view.queries[1] - view.queries[0]
    if params.row >= rows:
        raise ValueError(f"row {params.row} is outside the query tile's {rows} rows")
    step = view.steps[s.step]
    if not math.isfinite(float(step.m[params.row])):
        raise ValueError("this row has seen no key yet: pick another step or row")
    return step


@register("flash_attention.running_max", "number", PAGE, fa.STATE, State(Int("row", 0, 0)), model_pass=False)
def flash_attention_running_max(params, s):
    """The running maximum m of query row `row` of the picked query tile after the picked key-tile step."""
    value = float(_picked_step(params, s).m[params.row])
    return number(value, params, 0.01, query=s.walk.queries[0] + params.row, step=s.step)


@register("flash_attention.running_sum", "number", PAGE, fa.STATE, State(Int("row", 0, 0)), model_pass=False)
def flash_attention_running_sum(params, s):
    """The running sum l of query row `row` of the picked query tile after the picked key-tile step: the sum before,
    rescaled by exp(m_before - m) when the tile raised the maximum, plus the tile's own sum of exp(score - m)."""
    step, r = _picked_step(params, s), params.row
    seen_before = math.isfinite(float(step.m_before[r]))
    l_before = float(step.l_before[r]) if seen_before else 0.0
    rescale = float(step.rescale[r]) if seen_before else 0.0
    value = float(step.l[r])
    return number(value, params, 0.01, query=s.walk.queries[0] + r, step=s.step,
                  m_before=round(float(step.m_before[r]), 4) if seen_before else "−∞", m=round(float(step.m[r]), 4),
                  tile_max=round(float(step.tile_max[r]), 4), l_before=round(l_before, 4), rescale=round(rescale, 4),
                  tile_sum=round(value - l_before * rescale, 4))  # fmt: skip


@register("flash_attention.exact", "choice", PAGE, fa.STATE, model_pass=False)
def flash_attention_exact(params, s):
    """Does the tiled output equal standard attention's (torch SDPA, float64) for the page's n, d, Br, Bc and masks:
    'rounding' (largest difference under 1e-9: the same numbers up to float rounding), 'approximate' (under 1e-3,
    as an approximation of attention would be) or 'different'?"""
    diff = s.walk.max_abs_diff
    correct = "rounding" if diff < 1e-9 else "approximate" if diff < 1e-3 else "different"
    return Answer("choice", correct, ("rounding", "approximate", "different"), None, {"diff": f"{diff:.1e}"})


UNITS = {"elements": 1, "bytes": 1, "MiB": 2**20}  # bytes and MiB count bytes, elements count numbers


@register("flash_attention.hbm_traffic", "number", PAGE, fa.STATE,
          State(Choice("algorithm", "naive", options=("naive", "flash1", "flash2")),
                Choice("unit", "MiB", options=tuple(UNITS))), model_pass=False)  # fmt: skip
def flash_attention_hbm_traffic(params, s):
    """The elements (or bytes, MiB) `algorithm` reads from and writes to HBM for the traffic part's n, d, on-chip
    memory and number format: standard attention ("naive"), the paper's Algorithm 1 ("flash1") or FlashAttention-2's
    loop order ("flash2"), at the paper's block sizes for that memory."""
    view = fa.traffic_view(s.tn, s.td, fa.sram_elements(s.sram, s.bytes), s.bytes)
    traffic = getattr(view, params.algorithm)
    value = (traffic.total if params.unit == "elements" else view.bytes_of(traffic)) / UNITS[params.unit]
    return number(value, params, abs(value) * 0.02, n=s.tn, d=s.td, br=view.br, bc=view.bc, sram=s.sram,
                  bytes=s.bytes, ratio=round(view.ratio, 1), reads=f"{traffic.reads:,}", writes=f"{traffic.writes:,}")  # fmt: skip
