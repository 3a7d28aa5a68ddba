"""/ablation: the committed claim cards (results/ablation.json), each a set of heads removed against a placebo of as
many random heads from the same layers."""

from __future__ import annotations

import math

from core import ablation as ab
from core.lessons.answers.base import register
from core.lessons.kinds import Answer
from core.state import Choice, State

PAGE = "ablation"
# the card's verdict (core.ablation.verdict, CardView.verdict) as a lesson's option: "more" alone would read as a
# bare comparative among the lessons' choice words
CHOICE_OF_VERDICT = {"far_more": "far_more", "more": "somewhat_more", "no_more": "no_more",
                     "no_candidates": "no_candidates", "no_placebo": "no_placebo"}  # fmt: skip
RATIO_BINS = ((2.0, "under_2x"), (10.0, "2x_to_10x"), (math.inf, "over_10x"))  # harm / mean placebo harm, below


def _card(key: str) -> ab.CardView:
    """The committed card the page shows for `key`."""
    cards = ab.committed_cards() or {}
    if key not in cards:
        raise ValueError(f"no committed ablation card {key!r} (results/ablation.json)")
    return cards[key]


def _tested(key: str) -> ab.CardView:
    view = _card(key)
    if view.status != "tested":
        raise ValueError(f"the card {key!r} tests no heads ({view.status})")
    return view


def _numbers(view: ab.CardView) -> dict:
    return {"harm": view.harm, "placebo_mean": view.placebo_mean, "draws": len(view.placebo_harms),
            "heads": view.heads_text, "k": len(view.heads)}  # fmt: skip


@register("ablation.verdict", "choice", PAGE, ab.STATE, model_pass=False)
def ablation_verdict(params, s):
    """The link's committed card: removing its heads hurts 'far_more' or 'somewhat_more' than removing as many random
    heads from the same layers, or 'no_more'; 'no_candidates' when no head was singled out to test, 'no_placebo' when
    no random heads are left to draw (details of a tested card: its `harm`, the draws' mean harm `placebo_mean`,
    `draws`, the removed `heads` and their number `k`)."""
    view = _card(s.card)
    correct = CHOICE_OF_VERDICT[view.verdict]
    options = tuple(dict.fromkeys(CHOICE_OF_VERDICT.values()))  # every verdict, whichever is right: none stands out
    return Answer("choice", correct, options, None, _numbers(view) if view.status == "tested" else {})


@register("ablation.harm_ratio", "choice", PAGE, ab.STATE, model_pass=False)
def ablation_harm_ratio(params, s):
    """How many times the placebo draws' mean harm the harm of removing the link's card's heads is: 'under_2x',
    '2x_to_10x' or 'over_10x' (details: `ratio`, `harm`, `placebo_mean`, `draws`, `heads`, `k`)."""
    view = _tested(s.card)
    ratio = view.harm / view.placebo_mean if view.placebo_mean > 0 else math.inf
    correct = next(name for bound, name in RATIO_BINS if ratio < bound)
    return Answer("choice", correct, tuple(name for _, name in RATIO_BINS), None, {"ratio": ratio, **_numbers(view)})


@register("ablation.larger_placebo", "choice", PAGE, ab.STATE,
          State(Choice("other", "induction-zero", options=lambda c: ab.card_keys())), model_pass=False)  # fmt: skip
def ablation_larger_placebo(params, s):
    """Whose placebo hurts more on average: random heads from the layers of the link's card's heads, or from those
    of card `other`'s (another claim): '<claim>_layers' (details: each card's `placebo_mean` and layers)."""
    here, there = _tested(s.card), _tested(params.other)
    if here.claim == there.claim:
        raise ValueError(f"{s.card} and {params.other} remove the same claim's heads: their layers are the same")
    means = {here.claim: here.placebo_mean, there.claim: there.placebo_mean}
    larger = max(means, key=means.get)

    def layers(view) -> str:
        return ", ".join(str(layer) for layer in sorted({layer for layer, _ in view.heads}))

    return Answer("choice", f"{larger}_layers", tuple(f"{claim}_layers" for claim in means), None,
                  {"placebo_mean": here.placebo_mean, "other_placebo_mean": there.placebo_mean,
                   "layers": layers(here), "other_layers": layers(there)})  # fmt: skip


@register(
    "ablation.mode_change", "choice", PAGE, ab.STATE, State(Choice("mode", "mean", options=ab.MODES)), model_pass=False
)
def ablation_mode_change(params, s):
    """A prediction: the link's card's heads removed by `mode` ablation instead: is the harm 'higher', 'lower' or
    the 'same' (within the metric's noise floor, core.ablation.MIN_HARM)? Details: `harm`, `other_harm`."""
    here = _tested(s.card)
    other = _tested(f"{here.claim}-{params.mode}")
    change = other.harm - here.harm
    correct = "same" if abs(change) < ab.MIN_HARM[here.metric] else "higher" if change > 0 else "lower"
    return Answer("choice", correct, ("higher", "lower", "same"), None, {"harm": here.harm, "other_harm": other.harm})
