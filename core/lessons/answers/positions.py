"""/positions, RoPE part: the rotation at the link's d, base (log10) and position m."""

from __future__ import annotations

import math

from core.lessons import Answer
from core.lessons.answers import number, register
from core.lessons.answers.rope_scaling import pair_index
from core.positions import rope
from core.positions.state import STATE
from core.state import Float, State, Word

PAGE = "positions"
PAIR = State(Word("pair", 0))


def _rotation(s, log_base: float | None = None):
    return rope.rotation_view(s.rope_d, 10 ** (s.rope_base if log_base is None else log_base), s.m, s.layout)


@register("positions.rope_angle", "number", PAGE, STATE, PAIR)
def positions_rope_angle(params, s):
    """The angle m·θ_i (radians, not reduced mod 2π) by which RoPE turns pair `pair` at the page's position m."""
    rot = _rotation(s)
    i = pair_index(params.pair, rot.d // 2)
    value = rot.m * float(rot.inv_freq[i])
    return number(value, params, max(0.01, abs(value) * 0.005), pair=i, theta=float(rot.inv_freq[i]), m=rot.m)


def _wavelength(rot, i: int) -> float:
    return 2 * math.pi / float(rot.inv_freq[i])


@register("positions.rope_wavelength", "number", PAGE, STATE, PAIR)
def positions_rope_wavelength(params, s):
    """Positions pair `pair` takes to turn a full circle: 2π/θ_i."""
    rot = _rotation(s)
    i = pair_index(params.pair, rot.d // 2)
    value = _wavelength(rot, i)
    return number(value, params, abs(value) * 0.01, pair=i)


@register("positions.wavelength_growth", "number", PAGE, STATE,
          State(Word("pair", "last"), Float("to_base", 5.0, 1.0, 6.0, step=0.1)))  # fmt: skip
def positions_wavelength_growth(params, s):
    """A prediction: how many times longer pair `pair`'s wavelength gets when the base slider (log10 of the base)
    moves from the page's value to `to_base` (theory: (base'/base)^(2i/d))."""
    before, after = _rotation(s), _rotation(s, params.to_base)
    i = pair_index(params.pair, before.d // 2)
    value = _wavelength(after, i) / _wavelength(before, i)
    return number(value, params, abs(value) * 0.05, pair=i, d=before.d, to_base=params.to_base,
                  exponent=f"{2 * i}/{before.d}")  # fmt: skip


@register("positions.relative_only", "choice", PAGE, STATE)
def positions_relative_only(params, s):
    """Does the score q_m·k_n of RoPE-rotated vectors depend on 'offset' (m - n) only, or on 'both' positions?"""
    rot = _rotation(s)
    check = rope.check_view(rot.inv_freq, s.rope_n, rot.m)
    correct = "offset" if check.max_spread <= 1e-9 * max(1.0, check.score_range) else "both"
    return Answer("choice", correct, ("offset", "both"), None, {"spread": check.max_spread})
