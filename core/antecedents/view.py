"""The view data of /antecedents: the stored sentences by text, the live ranking of heads for one sentence, the
pair partner's verdict, and the stored evaluation (results/antecedents.json) ready to draw."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..results import load_result
from ..stats import wilson_interval
from . import PAIRS_PATH, Analysis, find_candidates, load_pairs, locate, measure_sentence, rank_heads

RESULTS = "antecedents"  # results/antecedents.json, written by scripts/antecedent_eval.py


@lru_cache(maxsize=1)
def builtin_sentences() -> dict[str, dict]:
    """Every stored sentence by its text: pair id, pronoun, candidates, answer, and the pair's other sentence."""
    data = load_pairs()
    out = {}
    for group in (data["examples"], data["pairs"]):
        for pair in group:
            for k, s in enumerate(pair["sentences"]):
                other = pair["sentences"][1 - k] if len(pair["sentences"]) == 2 else None
                out[s["text"]] = {
                    "pair": pair["id"],
                    "pronoun": pair["pronoun"],
                    "candidates": pair["candidates"],
                    "answer": s["answer"],
                    "other": other,
                }
    return out


def default_choice(text: str, words, pronouns: list[int], info: dict | None) -> tuple[int, list[int]]:
    """The pronoun and candidates a sentence starts with: a stored sentence's own, else the first pronoun with a
    candidate before it (candidates by the find_candidates rule)."""
    if info:
        _, p, cands = locate(text, info["pronoun"], info["candidates"])
        return p, cands
    p = next((p for p in pronouns if find_candidates(text, words, p)), pronouns[0])
    return p, find_candidates(text, words, p)


@dataclass
class Ranking:
    heads: list[tuple[int, int, float]]  # every head, best first: (layer, head, weight on the ranked candidate)
    shown: np.ndarray  # (top, n_candidates): the top heads' weights on every candidate
    names: list[str]  # the candidates' words

    @property
    def best(self) -> tuple[int, int]:
        return self.heads[0][:2]


def ranking(analysis: Analysis, by: int, top: int) -> Ranking:
    """Heads ranked by their weight from the pronoun on candidate `by`; the top ones' weights on all candidates."""
    heads = rank_heads(analysis.weights, by)
    shown = np.array(
        [[float(analysis.weights[l, h, c]) for c in range(len(analysis.candidates))] for l, h, _ in heads[:top]]
    )
    return Ranking(heads, shown, [analysis.words[c].text for c in analysis.candidates])


@dataclass
class Partner:
    """The same head on the other sentence of a stored pair."""

    sentence: str
    answer: str
    weights: list[float]  # on each candidate
    outcome: str  # 'stays' (same noun in both), 'switches' (to the right noun), 'wrong_way'
    picked: str  # the candidate the head prefers in this sentence


def partner(model, info: dict, best: tuple[int, int], here: np.ndarray, names: list[str]) -> Partner:
    """here: the best head's weights on the candidates in this sentence."""
    other = info["other"]
    w = measure_sentence(model, other["text"], info["pronoun"], info["candidates"])[best]
    pick_here, pick_there = int(np.argmax(here)), int(w.argmax())
    if pick_here == pick_there:
        outcome = "stays"
    elif names[pick_here] == info["answer"]:
        outcome = "switches"
    else:
        outcome = "wrong_way"
    return Partner(other["text"], other["answer"], w.tolist(), outcome, names[pick_here])


# --- the stored evaluation -------------------------------------------------------------------------------------------


def load_results() -> dict | None:
    return load_result(RESULTS, required=lambda d: isinstance(d["models"], dict))


def results_are_fresh(results: dict) -> bool:
    """Were the results computed from the pairs file as it is now?"""
    return results.get("pairs_sha256") == hashlib.sha256(PAIRS_PATH.read_bytes()).hexdigest()


@dataclass
class Bar:
    model: str  # results key
    kind: str  # 'head' (the selected head) or 'choice' (the model's own next-token answer)
    head: tuple[int, int] | None
    accuracy: float
    low: float
    high: float


def accuracy_bars(results: dict) -> tuple[list[Bar], int]:
    """One bar per model's selected head (and per decoder's own answer), held-out accuracy with its 95% interval;
    and the number of held-out sentences."""
    bars, n_held = [], 0
    for key, res in results["models"].items():
        held = res["halves"]["held_out"]
        n_held = held["n_sentences"]
        bars.append(Bar(key, "head", tuple(res["best_head"]), held["head_accuracy"], *held["head_interval"]))
        if "choice_accuracy" in held:
            bars.append(Bar(key, "choice", None, held["choice_accuracy"], *held["choice_interval"]))
    return bars, n_held


FIRST_NOUN_BASELINE = 0.5  # always picking the first-mentioned noun: right on one sentence of every pair


def against_baseline(lo: float, hi: float) -> str:
    """'chance', 'above' or 'below': where a 95% interval of an accuracy lies against the first-noun baseline."""
    return "chance" if lo <= FIRST_NOUN_BASELINE <= hi else "above" if lo > FIRST_NOUN_BASELINE else "below"


def verdict(result: dict) -> str:
    """Where the held-out interval of the selected head lies against the first-noun baseline (against_baseline)."""
    return against_baseline(*result["halves"]["held_out"]["head_interval"])


@dataclass(frozen=True)
class HeldOut:
    """One head on the held-out half: right on `right` of `n` sentences, its 95% Wilson interval, and where that
    lies against the first-noun baseline."""

    right: int
    n: int
    interval: tuple[float, float]
    verdict: str

    @property
    def accuracy(self) -> float:
        return self.right / self.n


def head_on_held_out(result: dict, layer: int, head: int) -> HeldOut:
    """Any head of the model on the held-out half (the stored per-head accuracies, 4 decimals: the count is exact)."""
    n = result["halves"]["held_out"]["n_sentences"]
    right = round(float(per_head_accuracy(result)[layer, head]) * n)
    lo, hi = wilson_interval(right, n)
    return HeldOut(right, n, (lo, hi), against_baseline(lo, hi))


def head_count(result: dict) -> int:
    return result["n_layers"] * result["n_heads"]


def never_switches(result: dict) -> bool:
    """A decoder whose heads never change their preferred noun within a pair, on either half."""
    halves = result["halves"]
    return bool(result.get("is_causal")) and all(halves[h].get("heads_that_ever_switch") == 0 for h in halves)


def per_head_accuracy(result: dict) -> np.ndarray:
    """(L, H) accuracy of every head on the held-out half."""
    return np.array(result["per_head"]["held_out"]["accuracy"])


def grid_labels(grid: np.ndarray) -> tuple[list[str], list[str]]:
    """The layers and heads naming the rows and columns of a (L, H) per-head grid, in its figure and CSV."""
    return [str(i) for i in range(grid.shape[0])], [str(j) for j in range(grid.shape[1])]


def same_best_head(stored: dict, live: dict) -> bool:
    """Does the recomputation pick the stored run's best head (layer, head)?"""
    return list(stored["best_head"]) == list(live["best_head"])


def largest_difference(stored: dict, live: dict) -> float | None:
    """Largest difference between stored and recomputed best-head weights per sentence (None: not comparable)."""
    if stored is None or len(stored["sentences"]) != len(live["sentences"]):
        return None
    return max(
        abs(a - b)
        for r0, r1 in zip(stored["sentences"], live["sentences"])
        for a, b in zip(r0["best_head_weights"], r1["best_head_weights"])
    )


SENTENCE_COLUMNS = ("pair", "half", "text", "answer", "first_mentioned", "weight_right", "weight_other", "heads_right",
                    "choice_right", "choice_other")  # fmt: skip


def sentences_table(result: dict) -> dict[str, list]:
    """A model's stored sentences as the table's columns (SENTENCE_COLUMNS, those the file has): the half each pair
    is in ('selection', 'held_out'), the best head's weight on the right and the other noun, how many heads prefer
    the right one, and the model's own answer's log-probabilities where it gave one."""
    rows = result["sentences"]
    pairs = {
        "weight_right": [r["best_head_weights"][0] for r in rows],
        "weight_other": [r["best_head_weights"][1] for r in rows],
    }
    if any(r.get("choice_logprob") for r in rows):
        pairs |= {
            "choice_right": [(r.get("choice_logprob") or [None, None])[0] for r in rows],
            "choice_other": [(r.get("choice_logprob") or [None, None])[1] for r in rows],
        }
    table = {k: [r[k] for r in rows] for k in ("pair", "half", "text", "answer", "first_mentioned", "heads_right")}
    return {k: (table | pairs)[k] for k in SENTENCE_COLUMNS if k in table | pairs}
