"""/antecedents: a sentence's heads ranked live (the link's model, text, pronoun and candidate), and the committed
held-out evaluation (results/antecedents.json) against the first-noun baseline."""

from __future__ import annotations

from core import antecedents as ante
from core.antecedents import view as data
from core.antecedents.state import STATE
from core.attention import page_trace
from core.lessons.answers.base import number, register
from core.lessons.kinds import Answer
from core.state import Choice, State

PAGE = "antecedents"
AGAINST_BASELINE = ("above", "chance", "below")


def percent(share: float) -> float:
    """A share as the explanations quote it: per cent, 1 decimal (0.5556 -> 55.6)."""
    return round(100 * share, 1)


def _result(key: str) -> dict:
    results = data.load_results()
    if results is None or key not in results["models"]:
        raise ValueError(f"results/antecedents.json has no evaluation of {key}")
    return results["models"][key]


def _ranking(s) -> data.Ranking:
    """The page's ranking for the link's text, pronoun and candidate (the default candidates of that pronoun)."""
    p = int(s.pron)
    model = s.model_object
    analysis = ante.measure(model, page_trace(model, s.text), p, s.sentence.candidates(p))
    if analysis is None:
        raise ValueError(f"nothing to rank in {s.text!r}")
    return data.ranking(analysis, int(s.rank), s.top)


@register("antecedents.held_out_verdict", "choice", PAGE, STATE, model_pass=False)
def antecedents_held_out_verdict(params, s):
    """The head the link's model's evaluation chose on the selection half, on the held-out half: its 95% interval
    lies 'above', around ('chance') or 'below' the first-noun baseline, 50% (details: `l`, `h`, `selection`,
    `held_out`, `lo`, `hi`)."""
    res = _result(s.model)
    sel, held = res["halves"]["selection"], res["halves"]["held_out"]
    (lo, hi), (l, h) = held["head_interval"], res["best_head"]
    return Answer("choice", data.verdict(res), AGAINST_BASELINE, None,
                  {"l": l, "h": h, "selection": percent(sel["head_accuracy"]),
                   "held_out": percent(held["head_accuracy"]), "lo": percent(lo), "hi": percent(hi)})  # fmt: skip


@register("antecedents.held_out_change", "choice", PAGE, STATE, model_pass=False)
def antecedents_held_out_change(params, s):
    """A prediction: the head chosen on the selection half (the link's model), scored on the held-out half where
    nothing was chosen: is its accuracy 'higher', 'lower' or the 'same' (details in per cent: `selection`, `held_out`)?"""
    res = _result(s.model)
    sel, held = res["halves"]["selection"]["head_accuracy"], res["halves"]["held_out"]["head_accuracy"]
    correct = "same" if abs(held - sel) < 1e-9 else "higher" if held > sel else "lower"
    return Answer("choice", correct, ("higher", "lower", "same"), None,
                  {"selection": percent(sel), "held_out": percent(held)})  # fmt: skip


@register("antecedents.switching_heads", "number", PAGE, STATE,
          State(Choice("model", "smollm2", options=lambda c: tuple((data.load_results() or {"models": {}})["models"]))), model_pass=False)  # fmt: skip
def antecedents_switching_heads(params, s):
    """How many heads of model `model` change their preferred noun between the two sentences of at least one held-out
    pair (details: `total`, its heads)."""
    res = _result(params.model)
    return number(res["halves"]["held_out"]["heads_that_ever_switch"], params, 0, total=data.head_count(res))


@register("antecedents.head_beats_baseline", "choice", PAGE, STATE)
def antecedents_head_beats_baseline(params, s):
    """The head at the top of the link's sentence's ranking, on the held-out pairs: its 95% interval lies 'above',
    around ('chance') or 'below' the first-noun baseline, 50% (details: `l`, `h`, and in per cent `accuracy`, `lo`, `hi`)."""
    ranked = _ranking(s)
    l, h = ranked.best
    held = data.head_on_held_out(_result(s.model), l, h)
    lo, hi = held.interval
    return Answer("choice", held.verdict, AGAINST_BASELINE, None,
                  {"l": l, "h": h, "accuracy": percent(held.accuracy), "lo": percent(lo), "hi": percent(hi)})  # fmt: skip


@register("antecedents.partner_outcome", "choice", PAGE, STATE)
def antecedents_partner_outcome(params, s):
    """A prediction, on a stored pair's sentence (the link's text, its own pronoun and candidates): the head at the top
    of the ranking, on the pair's other sentence, where the answer flips: it 'stays' on the same noun, 'switches' to
    the right one in both, or prefers the wrong one in both ('wrong_way'). Details: `l`, `h`, `picked`, `other`."""
    sentence, p = s.sentence, int(s.pron)
    if not (sentence.stored and sentence.stored["other"]) or not sentence.is_stored_choice(p, sentence.candidates(p)):
        raise ValueError("the partner is compared for a stored pair's sentence, with its own pronoun and candidates")
    ranked = _ranking(s)
    other = data.partner(s.model_object, sentence.stored, ranked.best, ranked.shown[0], ranked.names)
    l, h = ranked.best
    return Answer("choice", other.outcome, ("stays", "switches", "wrong_way"), None,
                  {"l": l, "h": h, "picked": other.picked, "other": other.sentence})  # fmt: skip
