"""/linear-attention: the associativity part (n, d) and the implied-matrix part (im_n, im_d, spread, seed, causal)."""

from __future__ import annotations

from core.lessons.answers.base import number, register
from core.lessons.kinds import Answer
from core.linear_attention.state import COST_SIZES, STATE
from core.linear_attention.views import associativity_view, implied_view
from core.state import Choice, State

PAGE = "linear-attention"


def _assoc(s):
    return associativity_view(s.n, s.d, list(COST_SIZES))


@register("linear_attention.cost", "number", PAGE, STATE,
          State(Choice("order", "linear", options=("quadratic", "linear")),
                Choice("what", "intermediate_numbers", options=("multiply_adds", "intermediate_numbers"))), model_pass=False)  # fmt: skip
def linear_attention_cost(params, s):
    """For the page's n and d: "multiply_adds" or "intermediate_numbers" of `order` (quadratic or linear)."""
    view = _assoc(s)
    value = view.costs[params.order][params.what]
    return number(value, params, abs(value) * 0.01, n=view.n, d=view.d)


@register("linear_attention.crossover", "number", PAGE, STATE, model_pass=False)
def linear_attention_crossover(params, s):
    """The smallest n from which the d x d order costs fewer multiply-adds, at the page's d. Exact: one n less and
    the n x n order is not more expensive."""
    view = _assoc(s)
    return number(view.crossover, params, 0, d=view.d)


@register("linear_attention.cheaper", "choice", PAGE, STATE, model_pass=False)
def linear_attention_cheaper(params, s):
    """Which order costs fewer multiply-adds at the page's n and d: 'quadratic' or 'linear'."""
    view = _assoc(s)
    q, lin = view.costs["quadratic"]["multiply_adds"], view.costs["linear"]["multiply_adds"]
    return Answer("choice", "linear" if lin < q else "quadratic", ("quadratic", "linear"), None, {"ratio": view.ratio})


@register("linear_attention.more_spread", "choice", PAGE, STATE, model_pass=False)
def linear_attention_more_spread(params, s):
    """On the implied-matrix part's random q, k: whose rows spread wider (higher mean entropy), 'softmax' or 'linear'."""
    view = implied_view(s.im_n, s.im_d, s.spread, s.causal, s.seed)
    a, lin = view.stats["entropy_softmax"], view.stats["entropy_linear"]
    return Answer("choice", "linear" if lin > a else "softmax", ("softmax", "linear"), None,
                  {"softmax": a, "linear": lin, "uniform": view.uniform_entropy})  # fmt: skip
