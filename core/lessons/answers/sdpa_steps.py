"""/sdpa-steps: the walkthrough the link picks (preset, d_k, d_v) and the saturation part (sdk, keys)."""

from __future__ import annotations

import functools

from core import sdpa_steps as core
from core.lessons.answers.base import mixed, number, register
from core.lessons.kinds import Answer
from core.state import Choice, Flag, Int, State

PAGE = "sdpa-steps"
MATRICES = ("scores", "scaled", "weights", "output")


def _steps(s):
    view = core.preset_view(s.preset, s.dk, s.dv)
    if view.steps is None:
        raise ValueError(f"the walkthrough {s.preset} has no valid steps at d_k = {s.dk}, d_v = {s.dv}")
    return view


def _index(value: int, size: int, what: str) -> int:
    if not 0 <= value < size:
        raise ValueError(f"{what} {value} is outside 0 .. {size - 1} at this state")
    return value


@register("sdpa_steps.cell", "number", PAGE, core.STATE,
          State(Choice("matrix", "scaled", options=MATRICES), Int("row", 0, 0), Int("col", 0, 0)), model_pass=False)  # fmt: skip
def sdpa_cell(params, s):
    """A cell of scores (QKᵀ), scaled (QKᵀ/√d_k), weights (softmax) or output of the link's walkthrough (preset,
    d_k, d_v) as the page starts it."""
    view = _steps(s)
    matrix = getattr(view.steps, params.matrix)
    i, j = _index(params.row, matrix.shape[0], "row"), _index(params.col, matrix.shape[1], "col")
    value = float(matrix[i, j])
    return number(value, params, 0.01 if abs(value) < 10 else abs(value) * 0.001, row=i, col=j, d_k=view.d_k)


QUERY = State(Int("query", 0, 0))


@register("sdpa_steps.top_key", "choice", PAGE, core.STATE, QUERY, model_pass=False)
def sdpa_top_key(params, s):
    """The key query `query` of the link's walkthrough gives most weight (details: its dot products and cosines
    with every key, and the key closest in direction)."""
    view = _steps(s)
    i = _index(params.query, len(view.q_labels), "query")
    w = view.steps.weights[i]
    keys = core.compare_keys(view.steps.q[i], view.steps.k)
    return Answer("choice", view.k_labels[int(w.argmax())], tuple(view.k_labels), None,
                  {"weight": float(w.max()), "query": view.q_labels[i], "dots": [round(x, 4) for x in keys.dots],
                   "cosines": [f"{x:.5f}" for x in keys.cosines], "closest": view.k_labels[keys.by_direction]})  # fmt: skip


@register("sdpa_steps.key_order", "order", PAGE, core.STATE, QUERY, model_pass=False)
def sdpa_key_order(params, s):
    """The keys of the link's walkthrough from most to least weight for query `query`."""
    view = _steps(s)
    i = _index(params.query, len(view.q_labels), "query")
    w = view.steps.weights[i]
    order = tuple(view.k_labels[j] for j in sorted(range(len(w)), key=lambda j: (-w[j], j)))
    return Answer("order", order, mixed(view.k_labels), None, {"weights": [round(float(x), 4) for x in w]})


@functools.lru_cache(maxsize=16)
def _saturation(d_k: int, n_keys: int):
    return core.saturation_view(d_k, n_keys, seed=0)


@register("sdpa_steps.variance", "number", PAGE, core.STATE, State(Flag("scaled", False)), model_pass=False)
def sdpa_variance(params, s):
    """The measured variance of q·k (entries N(0, 1)) at the page's d_k; scaled=true: of q·k/√d_k."""
    var = _saturation(s.sdk, s.keys).variance
    value = var.var_scaled if params.scaled else var.var_raw
    return number(value, params, max(0.15, 0.1 * value), d_k=s.sdk)


@register("sdpa_steps.max_weight", "number", PAGE, core.STATE, State(Flag("scaled", True)), model_pass=False)
def sdpa_max_weight(params, s):
    """The mean largest softmax weight of a row at the page's d_k and number of keys, scaled or not."""
    view = _saturation(s.sdk, s.keys)
    curve = view.curve.max_weight_scaled if params.scaled else view.curve.max_weight_unscaled
    return number(float(curve[view.index]), params, 0.05, d_k=s.sdk, n=s.keys)


@register("sdpa_steps.more_peaked", "choice", PAGE, core.STATE, model_pass=False)
def sdpa_more_peaked(params, s):
    """Which softmax puts more weight on its largest key on average: 'scaled' or 'unscaled' ('same' within 1%)."""
    view = _saturation(s.sdk, s.keys)
    a, u = view.curve.max_weight_scaled[view.index], view.curve.max_weight_unscaled[view.index]
    correct = "same" if abs(a - u) <= 0.01 else ("scaled" if a > u else "unscaled")
    return Answer("choice", correct, ("scaled", "unscaled", "same"), None, {"scaled": float(a), "unscaled": float(u)})


@register("sdpa_steps.variance_growth", "number", PAGE, core.STATE, State(Int("to", 256, 1, 1024)), model_pass=False)
def sdpa_variance_growth(params, s):
    """A prediction: how many times the measured variance of q·k (unscaled) grows when the page's d_k is moved to
    `to` (theory: to / d_k)."""
    before = _saturation(s.sdk, s.keys).variance.var_raw
    after = _saturation(params.to, s.keys).variance.var_raw
    value = after / before
    return number(value, params, max(0.5, 0.15 * value), d_k=s.sdk, to=params.to, from_var=before, to_var=after)


CHANGES = ("higher", "lower", "same")


@register("sdpa_steps.max_weight_change", "choice", PAGE, core.STATE,
          State(Int("to", 1024, 1, 1024), Flag("scaled", True)), model_pass=False)  # fmt: skip
def sdpa_max_weight_change(params, s):
    """A prediction: when the page's d_k is moved to `to`, does the mean largest softmax weight of a row (scaled or
    not) go 'higher', 'lower' or stay the 'same' (within 0.02)?"""

    def largest(d_k):
        view = _saturation(d_k, s.keys)
        curve = view.curve.max_weight_scaled if params.scaled else view.curve.max_weight_unscaled
        return float(curve[view.index])

    before, after = largest(s.sdk), largest(params.to)
    correct = "same" if abs(after - before) <= 0.02 else ("higher" if after > before else "lower")
    return Answer("choice", correct, CHANGES, None, {"before": before, "after": after, "d_k": s.sdk, "to": params.to})
