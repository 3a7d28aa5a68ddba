"""/rope-scaling: the formula part at the link's scale factor and distance."""

from __future__ import annotations

import functools

import numpy as np

from core.lessons.answers.base import mixed, number, pair_index, register
from core.lessons.kinds import Answer
from core.rope_scaling import formulas
from core.rope_scaling.state import STATE
from core.state import Choice, Many, State, Word

PAGE = "rope-scaling"
METHODS = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")


@functools.lru_cache(maxsize=16)
def _frequencies(factor: float, seq_len: int):
    return formulas.frequency_view(factor, seq_len)


def _rows(s) -> dict:
    return {r["method"]: r for r in _frequencies(float(s.factor), s.maxd).rows}


@register("rope_scaling.ratio", "number", PAGE, STATE,
          State(Choice("method", "linear", options=METHODS), Word("pair", 0)), model_pass=False)  # fmt: skip
def rope_scaling_ratio(params, s):
    """How many times longer pair `pair`'s wavelength is under `method` than under plain RoPE (the ratio curve)."""
    ratio = np.asarray(_rows(s)[params.method]["ratio"])
    i = pair_index(params.pair, len(ratio))
    value = float(ratio[i])
    return number(value, params, max(0.01, abs(value) * 0.01), pair=i, factor=float(s.factor))


@register(
    "rope_scaling.attention_factor",
    "number",
    PAGE,
    STATE,
    State(Choice("method", "yarn", options=METHODS)),
    model_pass=False,
)
def rope_scaling_attention_factor(params, s):
    """The factor `method` multiplies cos and sin by (YaRN: 0.1 ln s + 1)."""
    return number(float(_rows(s)[params.method]["attention_factor"]), params, 0.005, factor=float(s.factor))


@register(
    "rope_scaling.kept_pairs", "number", PAGE, STATE, State(Choice("method", "yarn", options=METHODS)), model_pass=False
)
def rope_scaling_kept_pairs(params, s):
    """How many of the 32 pairs `method` leaves unchanged (ratio 1) at the page's factor."""
    row = _rows(s)[params.method]
    return number(int(row["kept"]), params, 0, factor=float(s.factor), interpolated=int(row["interpolated"]))


@register("rope_scaling.slowest_order", "order", PAGE, STATE,
          State(Many("methods", ("default", "linear", "dynamic"), options=METHODS)), model_pass=False)  # fmt: skip
def rope_scaling_slowest_order(params, s):
    """Methods from the longest to the shortest wavelength of their slowest pair."""
    rows = _rows(s)
    slowest = {m: float(np.asarray(rows[m]["wavelength"])[-1]) for m in params.methods}
    return Answer("order", tuple(sorted(params.methods, key=lambda m: -slowest[m])), mixed(params.methods), None,
                  slowest)  # fmt: skip
