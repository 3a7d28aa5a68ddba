"""/positions: RoPE's rotation at the link's d, base (log10) and position m; the sinusoidal, relative and ALiBi
parts at their sliders; the extrapolation part's committed run."""

from __future__ import annotations

import math

import numpy as np

from core.lessons.answers.base import mixed, model, number, pair_index, register
from core.lessons.kinds import Answer
from core.positions import alibi, extrapolation, learned, relative, rope, sinusoidal
from core.positions.state import STATE, base_from_log10
from core.state import Choice, Float, Int, Many, State, Word

PAGE = "positions"
PAIR = State(Word("pair", 0))


def _rotation(s, log_base: float | None = None):
    return rope.rotation_view(s.rope_d, base_from_log10(s.rope_base if log_base is None else log_base), s.m, s.layout)


@register("positions.rope_angle", "number", PAGE, STATE, PAIR, model_pass=False)
def positions_rope_angle(params, s):
    """The angle m·θ_i (radians, not reduced mod 2π) by which RoPE turns pair `pair` at the page's position m."""
    rot = _rotation(s)
    i = pair_index(params.pair, rot.d // 2)
    value = rot.m * float(rot.inv_freq[i])
    return number(value, params, max(0.01, abs(value) * 0.005), pair=i, theta=float(rot.inv_freq[i]), m=rot.m)


def _wavelength(rot, i: int) -> float:
    return 2 * math.pi / float(rot.inv_freq[i])


@register("positions.rope_wavelength", "number", PAGE, STATE, PAIR, model_pass=False)
def positions_rope_wavelength(params, s):
    """Positions pair `pair` takes to turn a full circle: 2π/θ_i."""
    rot = _rotation(s)
    i = pair_index(params.pair, rot.d // 2)
    value = _wavelength(rot, i)
    return number(value, params, abs(value) * 0.01, pair=i)


@register("positions.wavelength_growth", "number", PAGE, STATE,
          State(Word("pair", "last"), Float("to_base", 5.0, 1.0, 6.0, step=0.1)), model_pass=False)  # fmt: skip
def positions_wavelength_growth(params, s):
    """A prediction: how many times longer pair `pair`'s wavelength gets when the base slider (log10 of the base)
    moves from the page's value to `to_base` (theory: (base'/base)^(2i/d))."""
    before, after = _rotation(s), _rotation(s, params.to_base)
    i = pair_index(params.pair, before.d // 2)
    value = _wavelength(after, i) / _wavelength(before, i)
    return number(value, params, abs(value) * 0.05, pair=i, d=before.d, to_base=params.to_base,
                  exponent=f"{2 * i}/{before.d}")  # fmt: skip


@register("positions.relative_only", "choice", PAGE, STATE, model_pass=False)
def positions_relative_only(params, s):
    """Does the score q_m·k_n of RoPE-rotated vectors depend on 'offset' (m - n) only, or on 'both' positions?"""
    rot = _rotation(s)
    check = rope.check_view(rot.inv_freq, s.rope_n, rot.m)
    correct = "offset" if check.max_spread <= 1e-9 * max(1.0, check.score_range) else "both"
    return Answer("choice", correct, ("offset", "both"), None, {"spread": check.max_spread})


# ---- the other parts: sinusoidal, learned, relative (Shaw et al.), ALiBi and the measured extrapolation ----------


@register("positions.sinusoidal_dot", "number", PAGE, STATE, State(Int("distance", 0, 0)), model_pass=False)
def positions_sinusoidal_dot(params, s):
    """PE(p)·PE(p + `distance`) of the sinusoidal part's encoding at the page's d and base: the same for every p
    (each sin/cos pair adds cos(distance·ω_i), so distance 0 gives d/2)."""
    d = sinusoidal.even(s.d)
    if params.distance >= s.n:
        raise ValueError(f"distance {params.distance} is past the page's {s.n} positions")
    value = float(sinusoidal.pe_dot_by_distance([params.distance], d, base_from_log10(s.base))[0])
    return number(value, params, 0.01, d=d, pairs=d // 2, distance=params.distance)


@register("positions.learned_has_vector", "choice", PAGE, STATE)
def positions_learned_has_vector(params, s):
    """The learned part: does the picked model's table of position vectors have a row for the page's position
    `pastpos`: 'yes', or 'no' (the lookup fails: no token can sit there)?"""
    past = learned.past_table_view(model(s.model), s.pastpos)
    return Answer("choice", "yes" if past.exists else "no", ("yes", "no"), None,
                  {"position": past.position, "rows": past.table_size, "last": past.table_size - 1})  # fmt: skip


@register("positions.relative_vectors", "number", PAGE, STATE, model_pass=False)
def positions_relative_vectors(params, s):
    """Distinct learned offset vectors E the relative part's n × n scores use: offsets clip(i - j, -k, k), so 2k + 1
    (fewer when n is shorter than the clip)."""
    view = relative.shaw_view(s.rel_n, s.rel_d, s.clip, s.seed)
    return number(len(np.unique(view.offsets)), params, 0, k=s.clip, n=s.rel_n, offsets=2 * s.clip + 1)


@register("positions.alibi_bias", "number", PAGE, STATE, State(Int("distance", 4, 0)), model_pass=False)
def positions_alibi_bias(params, s):
    """The bias ALiBi adds to the picked head's score of a key `distance` positions back: -m_h · distance."""
    view = alibi.alibi_view(s.heads, s.al_n, s.al_head)
    if params.distance >= s.al_n:
        raise ValueError(f"distance {params.distance} is past the page's {s.al_n} positions")
    slope = float(view.slopes[view.head])
    value = float(view.bias[params.distance, 0])  # query `distance`, key 0
    return number(value, params, 0.01, slope=slope, slope_label=view.slope_labels[view.head], head=view.head,
                  heads=s.heads, distance=params.distance)  # fmt: skip


def _extrapolation():
    data = extrapolation.load_extrapolation()
    if data is None:
        raise ValueError(
            f"results/{extrapolation.RESULT_NAME}.json is missing: run scripts/train_position_extrapolation.py"
        )
    return extrapolation.extrapolation_view(data)


RUNNABLE_PAST = tuple(k for k in extrapolation.KINDS if k != "learned")  # a learned table has no rows past its length


@register("positions.extrapolation_order", "order", PAGE, STATE,
          State(Many("kinds", RUNNABLE_PAST, options=RUNNABLE_PAST)), model_pass=False)  # fmt: skip
def positions_extrapolation_order(params, s):
    """A prediction, in the committed run (extrapolation part): `kinds` from the highest to the lowest accuracy
    past the training length (mean over seeds); learned absolute positions cannot run there at all."""
    view = _extrapolation()
    kinds = tuple(params.kinds)
    ranked = tuple(sorted(kinds, key=lambda k: -view.past[k]))
    return Answer("order", ranked, mixed(kinds), None,
                  {"train": view.train_length, "test": len(view.positions), "seeds": len(view.seeds),
                   **{f"{k}_past": round(100 * view.past[k], 1) for k in kinds}})  # fmt: skip


@register("positions.extrapolation_accuracy", "number", PAGE, STATE,
          State(Choice("kind", "rope", options=extrapolation.KINDS),
                Choice("where", "past", options=("inside", "past"))), model_pass=False)  # fmt: skip
def positions_extrapolation_accuracy(params, s):
    """In the committed run: the mean accuracy (percent, mean over seeds) of `kind` inside or past the training
    length; 5 percentage points either way count as right."""
    view = _extrapolation()
    share = (view.inside if params.where == "inside" else view.past)[params.kind]
    if share is None:
        raise ValueError(f"{params.kind} positions cannot run past the training length: there is no number to ask")
    seeds = view.past_by_seed[params.kind] if params.where == "past" else [share]
    return number(100 * share, params, 5.0, kind=params.kind, train=view.train_length,
                  test=len(view.positions), chance=round(100 * view.chance), inside=round(100 * view.inside[params.kind], 1),
                  seed_low=round(100 * min(seeds), 1), seed_high=round(100 * max(seeds), 1))  # fmt: skip
