"""/why-head: one head of the link's model taken apart, on its text, layer, head and split, as the page computes it."""

from __future__ import annotations

from core import why_head as wh
from core.lessons.answers.base import register
from core.lessons.kinds import Answer

PAGE = "why-head"
VERDICTS = ("position", "content", "mixed")


def _rope_view(s) -> wh.RopeView:
    if s.part != "rope":
        raise ValueError("this question is about the page's RoPE part (part = rope)")
    parts = wh.rope_parts_of(s.model_object, s.text, s.layer, s.split, s.bands, wh.MAX_TOKENS)
    return wh.rope_view(parts, s.head, 0, "own")


@register("why_head.carrier_band", "choice", PAGE, wh.STATE)
def why_head_carrier_band(params, s):
    """The band (its number, fastest first) that carries the largest share of the page's head's score magnitude."""
    view = _rope_view(s)
    options = tuple(str(b) for b in range(len(view.band_pairs)))
    return Answer("choice", str(view.carrier), options, None, {"share": view.carrier_share, "head": view.head})


@register("why_head.position_or_content", "choice", PAGE, wh.STATE)
def why_head_position_or_content(params, s):
    """Whether the page's head keeps clearly more of its pattern from 'position' alone (content removed) or from
    'content' alone (position removed), or 'mixed' (within core.why_head.MARGIN of each other)."""
    view = _rope_view(s)
    return Answer("choice", view.verdict, VERDICTS, None, {"head": view.head, **view.kept_here})


@register("why_head.largest_term", "choice", PAGE, wh.STATE)
def why_head_largest_term(params, s):
    """Of the four terms of the first layer's scores (absolute part), the one with the largest share of the page's
    head's score magnitude, split where the page's `where` says."""
    if s.part != "absolute":
        raise ValueError("this question is about the page's absolute-position part (part = absolute)")
    view = wh.absolute_view(wh.absolute_parts_of(s.model_object, s.text, s.where, wh.MAX_TOKENS), s.head, s.term)
    return Answer("choice", view.largest, wh.TERMS, None, {"share": view.largest_share, "head": view.head})
