"""Ablation inside the real model: remove a set of heads and measure the metric a claim about them is about,
against a placebo of as many random heads from the same layers.

Removing a head. In both Llama (SmolLM2) and BERT (MiniLM) the heads' outputs Z_1 .. Z_H (each (n, d)) are laid
side by side, (B, n, H d), and go through one linear map W^O (Llama's o_proj, BERT's attention.output.dense).
A forward pre-hook on that map replaces head h's d columns, h d .. (h+1) d, before W^O:
    zero ablation  Z_h := 0
    mean ablation  Z_h := its mean over every real position of the evaluation batch, from a clean pass
Everything else is transformers' own forward, unchanged.

Claims (CLAIMS), each with its held-out metric:
    induction        top-k heads on the induction detector    loss on the repeated half of fresh random sequences
    previous_token   top-k heads on the previous-token detector   the same loss
    antecedent       top-k candidate heads: those above chance (50%) on the selection half of
                     data/antecedent_pairs.json, best first. A model with none (SmolLM2: every head ties at 50%)
                     has no antecedent heads to test, and its card says so instead of removing heads by index
                     (that would compare random heads with random heads)
                     the model's own held-out accuracy: does "<sentence> In this sentence, '<pronoun>' refers to
                     the" give the right candidate's first token a higher log-probability than the other's?
The heads are chosen on other data (detector sequences of another seed; the selection half) than the metric is
measured on (evaluation sequences; the held-out half).

Verdict (`verdict`): harm = how much worse the metric got (loss up, accuracy down). Removing the heads hurts "far
more than random heads" when the harm exceeds every placebo draw and twice the placebo mean; "more" when it
exceeds the upper end of the placebo draws' central 95%; otherwise "no more than random heads". A harm below the
metric's noise floor (MIN_HARM) is never more than random.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from . import antecedents, head_detectors
from .models.needs import PAGE_NEEDS
from .results import load_result
from .state import Choice, Int, State, model_choice
from .stats import wilson_interval

RESULT_NAME = "ablation"
CLAIMS = ("induction", "previous_token", "antecedent")
CLAIM_METRIC = {"induction": "repeated_loss", "previous_token": "repeated_loss", "antecedent": "antecedent_accuracy"}
MODES = ("zero", "mean")
EVAL_SETTINGS = {"n_sequences": 8, "half_length": 32, "seed": 1}  # held out: the detectors use seed 0
LIVE_EVAL_SETTINGS = {"n_sequences": 4, "half_length": 24, "seed": 1}  # the page's live runs: a smaller set
DEFAULT_HEADS, DEFAULT_DRAWS, DEFAULT_SEED = 5, 20, 0
MIN_HARM = {"repeated_loss": 0.05, "antecedent_accuracy": 0.04}  # nats; two sentences of 54
CHANCE = 0.5  # the antecedent choice is between two candidates


def by_layer(heads: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for layer, head in heads:
        out.setdefault(int(layer), []).append(int(head))
    return out


def removable_heads(model) -> int:
    """How many heads there are to remove: every head of every layer (of a model, or of a state's context)."""
    return model.n_layers * model.n_heads


def check_heads(model, heads: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, de-duplicated (layer, head) pairs; ValueError for one out of range."""
    out = sorted({(int(a), int(b)) for a, b in heads})
    for layer, head in out:
        if not (0 <= layer < model.n_layers and 0 <= head < model.n_heads):
            raise ValueError(f"{model.name} has layers 0..{model.n_layers - 1}, heads 0..{model.n_heads - 1}")
    return out


@contextmanager
def ablated(model, heads: Iterable[tuple[int, int]], mode: str = "zero", means: torch.Tensor | None = None):
    """Within the block, the model runs with `heads` removed (see the module docstring). means: (L, H, d) for
    mode "mean". Through the model's one hook layer (model.hooked): only this thread's passes are changed."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if mode == "mean" and means is None:
        raise ValueError("mean ablation needs the heads' means (head_means)")

    def edit_for(layer: int, removed: list[int]):
        def edit(z):  # (B, n, H, d)
            z = z.clone()
            for h in removed:
                z[..., h, :] = 0.0 if mode == "zero" else means[layer, h].to(z.dtype)
            return z

        return edit

    edits = {layer: edit_for(layer, removed) for layer, removed in by_layer(heads).items()}
    with model.hooked(head_edits=edits):
        yield


@torch.no_grad()
def head_means(model, batch) -> torch.Tensor:
    """(L, H, d): each head's output Z_h averaged over every real position of the batch (for mean ablation)."""
    kept: dict[int, torch.Tensor] = {}
    real = batch.attention_mask.bool()  # (B, n)

    def reader(layer: int):
        def read(z):  # (B, n, H, d); returns None: the pass goes on unchanged
            kept[layer] = z[real].mean(0).float()

        return read

    with model.hooked(head_edits={layer: reader(layer) for layer in range(model.n_layers)}):
        model.forward(batch, logits=False)
    return torch.stack([kept[i] for i in range(model.n_layers)])


def _logits_at(model, batch, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """(k, V) logits at positions (rows[i], cols[i]) only: the vocabulary-sized output layer runs on those alone."""
    if not model.is_causal:
        raise ValueError(f"{model.name} has no language-model head: this metric needs next-token predictions")
    hidden = model.forward(batch, logits=False).last_hidden_state  # (B, n, D), after the final norm
    return model.lm_head(hidden[rows, cols]).cpu()  # beside the CPU targets, wherever the model ran


# --- evaluation sets and metrics ------------------------------------------------------------------------------


@dataclass
class EvalSet:
    """What a claim's metric is measured on: a batch and, per metric, where to read it."""

    metric: str
    batch: object
    rows: torch.Tensor  # (k,) sequence index of each prediction read
    cols: torch.Tensor  # (k,) position whose next-token prediction is read
    targets: torch.Tensor  # repeated_loss: (k,) the next token; antecedent_accuracy: (k, 2) correct, other first ids
    description: str = ""


def repeated_eval_set(model, n_sequences: int, half_length: int, seed: int) -> EvalSet:
    """Fresh repeated random sequences; predictions from the second copy's positions p+T .. p+2T-2, whose next
    token the first copy already showed (the first token of the second copy cannot be predicted)."""
    batch, layout = head_detectors.repeated_random_batch(model, n_sequences, half_length, seed)
    cols = torch.arange(layout.prefix + layout.half, layout.end - 1)
    rows = torch.arange(n_sequences).repeat_interleave(len(cols))
    cols = cols.repeat(n_sequences)
    return EvalSet("repeated_loss", batch, rows, cols, batch.input_ids[rows, cols + 1])


def antecedent_eval_set(model, half: str = "held_out") -> EvalSet:
    """Every sentence of one half of data/antecedent_pairs.json as a choice prompt (core/antecedents)."""
    if not model.is_causal:
        raise ValueError(f"{model.name} has no language-model head: the antecedent claim needs its own choice")
    selection, held_out = antecedents.split_pairs(antecedents.load_pairs()["pairs"])
    prompts, targets = [], []
    for pair in held_out if half == "held_out" else selection:
        for s in pair["sentences"]:
            correct = pair["candidates"].index(s["answer"])
            firsts = [model.encode(" " + c)[0] for c in pair["candidates"]]
            prompts.append(antecedents.CHOICE_PROMPT.format(sentence=s["text"], pronoun=pair["pronoun"]))
            targets.append([firsts[correct], firsts[1 - correct]])
    batch = model.tokenize(prompts)  # right-padded: each prompt's last real token is at length - 1
    rows = torch.arange(len(prompts))
    return EvalSet("antecedent_accuracy", batch, rows, batch.attention_mask.sum(-1) - 1, torch.tensor(targets))


@torch.no_grad()
def measure(model, evalset: EvalSet) -> dict:
    """{"value": the metric, plus "successes"/"n" for an accuracy} with the model as it is (hooks included)."""
    logits = _logits_at(model, evalset.batch, evalset.rows, evalset.cols)  # (k, V)
    if evalset.metric == "repeated_loss":
        return {"value": float(F.cross_entropy(logits, evalset.targets))}
    pair = choice_logprobs(logits, evalset)  # (k, 2)
    right = pair[:, 0] > pair[:, 1]
    successes, n = int(right.sum()), len(right)
    return {"value": successes / n, "successes": successes, "n": n}


def choice_logprobs(logits: torch.Tensor, evalset: EvalSet) -> torch.Tensor:
    """(k, 2) log-probabilities of the correct and the other candidate's first token, from logits (k, V)."""
    return torch.log_softmax(logits.double(), -1).gather(1, evalset.targets)


def harm_of(metric: str, clean: float, ablated_value: float) -> float:
    """How much worse the metric got: loss up, accuracy down (positive = worse)."""
    return ablated_value - clean if metric == "repeated_loss" else clean - ablated_value


# --- placebo and verdict --------------------------------------------------------------------------------------


def placebo_sets(heads: list[tuple[int, int]], n_heads: int, draws: int, seed: int) -> list[list[tuple[int, int]]]:
    """`draws` sets of random heads, as many from each layer as `heads` has there, none of them one of `heads`
    unless the layer has too few others (then drawn from all of its heads). Seeded: same seed, same draws."""
    rng = np.random.default_rng(seed)
    layers = by_layer(heads)
    out = []
    for _ in range(draws):
        drawn = []
        for layer, chosen in sorted(layers.items()):
            others = [h for h in range(n_heads) if h not in chosen]
            pool = others if len(others) >= len(chosen) else list(range(n_heads))
            drawn += [(layer, int(h)) for h in rng.choice(pool, size=len(chosen), replace=False)]
        out.append(sorted(drawn))
    return out


def verdict(metric: str, harm: float, placebo: list[float]) -> str:
    """far_more / more / no_more (see the module docstring), or no_placebo without draws."""
    if not placebo:
        return "no_placebo"
    p = np.asarray(placebo, dtype=np.float64)
    if harm < MIN_HARM[metric]:
        return "no_more"
    if harm > p.max() and harm > 2 * max(float(p.mean()), 0.0):
        return "far_more"
    if harm > float(np.percentile(p, 97.5)):
        return "more"
    return "no_more"


# --- choosing heads -------------------------------------------------------------------------------------------


def claim_heads(model_key: str, model, claim: str, k: int) -> tuple[list[tuple[int, int]], list[float], str]:
    """The top-k heads for a claim, their scores, and where they came from ("committed", "live")."""
    if claim not in CLAIMS:
        raise ValueError(f"claim must be one of {CLAIMS}")
    k = max(0, min(int(k), model.n_layers * model.n_heads))
    if claim == "antecedent":
        heads, scores = antecedent_candidates(model_key)
        return heads[:k], scores[:k], "committed"
    found = head_detectors.committed_map(model_key)
    source = "committed"
    if found is None:
        found, source = head_detectors.detector_map(model, **head_detectors.LIVE_SETTINGS), "live"
    top = found.top(claim, k)
    return [(a, b) for a, b, _ in top], [s for _, _, s in top], source


def selection_accuracy(model_key: str) -> torch.Tensor | None:
    """(L, H) each head's accuracy on the selection half of the pronoun pairs (results/antecedents.json); None for a
    model not measured there (a learner's own: the page says so in the reader's words, "not_measured")."""
    data = load_result("antecedents", required=lambda d: d["models"][model_key]["per_head"]["selection"])
    if data is None:
        return None
    return torch.tensor(data["models"][model_key]["per_head"]["selection"]["accuracy"])


def antecedent_candidates(model_key: str) -> tuple[list[tuple[int, int]], list[float]]:
    """The candidate antecedent heads: those whose selection-half accuracy is above chance, best first (ties to
    the lower layer, then head), with their accuracies. Empty when no head is above chance or none was measured."""
    grid = selection_accuracy(model_key)
    if grid is None:
        return [], []
    ranked = sorted(((float(grid[a, b]), a, b) for a in range(grid.shape[0]) for b in range(grid.shape[1])),
                    key=lambda r: (-r[0], r[1], r[2]))  # fmt: skip
    above = [(s, a, b) for s, a, b in ranked if s > CHANCE]
    return [(a, b) for _, a, b in above], [s for s, _, _ in above]


# --- one claim card -------------------------------------------------------------------------------------------


@dataclass
class ClaimCard:
    claim: str
    model: str
    metric: str
    mode: str
    heads: list[tuple[int, int]]
    head_scores: list[float]  # each head's detector score (antecedent: selection-half accuracy)
    heads_from: str  # "committed" or "live" detector map
    clean: dict
    ablated: dict
    harm: float
    placebo_harms: list[float]
    placebo_sets: list[list[tuple[int, int]]]
    verdict: str
    seed: int
    seconds: float
    notes: list[str] = field(default_factory=list)  # "all_heads_of_layers", "no_heads", "no_candidates", "chance"

    @property
    def detector_score(self) -> float | None:
        return float(np.mean(self.head_scores)) if self.head_scores else None

    @property
    def placebo_mean(self) -> float | None:
        return float(np.mean(self.placebo_harms)) if self.placebo_harms else None

    @property
    def placebo_interval(self) -> tuple[float, float] | None:
        """The central 95% of the placebo draws' harms."""
        if not self.placebo_harms:
            return None
        return (float(np.percentile(self.placebo_harms, 2.5)), float(np.percentile(self.placebo_harms, 97.5)))

    def interval(self, which: str) -> tuple[float, float] | None:
        """95% Wilson interval of an accuracy ("clean" or "ablated"); None for a loss."""
        d = self.clean if which == "clean" else self.ablated
        return wilson_interval(d["successes"], d["n"]) if "n" in d else None

    def to_json(self) -> dict:
        out = asdict(self)
        out |= {"detector_score": self.detector_score, "placebo_mean": self.placebo_mean,
                "placebo_interval": self.placebo_interval}  # fmt: skip
        if self.metric == "antecedent_accuracy":
            out |= {"clean_interval": self.interval("clean"), "ablated_interval": self.interval("ablated")}
        return out


def eval_set_for(model, claim: str) -> EvalSet:
    if CLAIM_METRIC[claim] == "repeated_loss":
        return repeated_eval_set(model, **EVAL_SETTINGS)
    return antecedent_eval_set(model)


def live_card(model, model_key: str, claim: str, k: int, mode: str, draws: int, seed: int, eval_settings: tuple):
    """The /ablation page's live card: claim_card on the repeated-token evaluation set of `eval_settings`
    ((n_sequences, half_length, seed); the antecedent claim ignores it and uses its own)."""
    evalset = repeated_eval_set(model, *eval_settings) if CLAIM_METRIC[claim] == "repeated_loss" else None
    return claim_card(model_key, model, claim, k, mode, draws, seed, evalset=evalset)


def forward_runs(draws: int) -> int:
    """How many times a card measures the model: unchanged, with the claim's heads removed, then once per placebo."""
    return draws + 2


@torch.no_grad()
def claim_card(
    model_key: str,
    model,
    claim: str,
    k: int = DEFAULT_HEADS,
    mode: str = "zero",
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    heads: list[tuple[int, int]] | None = None,
    evalset: EvalSet | None = None,
) -> ClaimCard:
    """Remove the claim's top-k heads (or `heads`), measure the held-out metric, and `draws` placebo sets."""
    t0 = time.perf_counter()
    if heads is None:
        heads, scores, source = claim_heads(model_key, model, claim, k)
        if claim == "antecedent" and not heads and k > 0:  # no head to test: nothing is run
            return ClaimCard(claim, model.name, CLAIM_METRIC[claim], mode, [], [], source, {}, {}, 0.0, [], [],
                             "no_candidates", seed, time.perf_counter() - t0, ["no_candidates"])  # fmt: skip
    else:
        heads, scores, source = check_heads(model, heads), [], "chosen"
    evalset = evalset or eval_set_for(model, claim)
    metric = evalset.metric
    means = head_means(model, evalset.batch) if mode == "mean" else None
    clean = measure(model, evalset)
    with ablated(model, heads, mode, means):
        after = measure(model, evalset)
    harm = harm_of(metric, clean["value"], after["value"])
    notes = []
    sets = placebo_sets(heads, model.n_heads, draws, seed) if heads else []
    if not heads:
        notes.append("no_heads")
    elif all(len(c) >= model.n_heads for c in by_layer(heads).values()):
        notes.append("all_heads_of_layers")  # every placebo draw is the same set: nothing to compare with
    placebo = []
    for drawn in sets:
        with ablated(model, drawn, mode, means):
            placebo.append(harm_of(metric, clean["value"], measure(model, evalset)["value"]))
    if metric == "antecedent_accuracy":
        lo, hi = wilson_interval(clean["successes"], clean["n"])
        lo2, hi2 = wilson_interval(after["successes"], after["n"])
        if lo <= 0.5 <= hi and lo2 <= 0.5 <= hi2:
            notes.append("chance")
    decided = "no_placebo" if "all_heads_of_layers" in notes or not heads else verdict(metric, harm, placebo)
    return ClaimCard(
        claim, model.name, metric, mode, heads, scores, source, clean, after, harm, placebo, sets, decided, seed,
        time.perf_counter() - t0, notes,
    )  # fmt: skip


def load_results() -> dict | None:
    """results/ablation.json, or None when missing or of another shape."""
    return load_result(RESULT_NAME, required=lambda d: all("verdict" in c for c in d["cards"]))


# --- the page's view of a card ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardView:
    """One claim card as /ablation shows it, verdict included. status: "tested"; "no_heads" (k = 0); or
    "no_candidates" (the antecedent claim on a model with no head above chance: no claim is tested, even where
    a committed card removed heads chosen by index among ties)."""

    key: str  # "<claim>-<mode>"
    claim: str
    mode: str
    metric: str
    model: str
    status: str
    heads: tuple[tuple[int, int], ...]
    heads_text: str  # "L17H3, L18H6"
    score: float | None  # mean detector score of the heads (antecedent: selection-half accuracy)
    clean: float | None
    after: float | None
    harm: float | None
    intervals: tuple[tuple[float, float], tuple[float, float]] | None  # 95% Wilson, before and after (accuracy)
    n: int | None  # sentences the accuracy is over
    placebo_harms: tuple[float, ...]
    placebo_mean: float | None
    placebo_interval: tuple[float, float] | None  # the central 95% of the draws
    verdict: str  # far_more / more / no_more / no_placebo / no_candidates
    notes: tuple[str, ...]
    candidates: dict | None  # no_candidates: {"reason": "tied", "below_chance" or "not_measured", "n": heads,
    # "best": accuracy}
    provenance: dict | None  # a committed card: command, date, device, seconds, draws, load

    @property
    def strong(self) -> bool:
        return self.verdict == "far_more"


def _candidates_note(model_key: str) -> dict:
    grid = selection_accuracy(model_key)
    if grid is None:
        return {"reason": "not_measured", "n": 0, "best": 0.0}
    best, worst = float(grid.max()), float(grid.min())
    return {"reason": "tied" if best == worst else "below_chance", "n": int(grid.numel()), "best": best}


def card_view(card, model_key: str = "smollm2", provenance: dict | None = None) -> CardView:
    """The view of a ClaimCard, or of its JSON (a committed card of results/ablation.json)."""
    c = card.to_json() if isinstance(card, ClaimCard) else card
    heads = tuple((int(a), int(b)) for a, b in c["heads"])
    scores = c.get("head_scores") or []
    untested = c["claim"] == "antecedent" and (
        "no_candidates" in c["notes"] or (heads and max(scores, default=0.0) <= CHANCE)
    )
    status = "no_candidates" if untested else "no_heads" if not heads else "tested"
    tested = status == "tested"
    intervals = (tuple(c["clean_interval"]), tuple(c["ablated_interval"])) if c.get("clean_interval") else None
    return CardView(
        key=f"{c['claim']}-{c['mode']}",
        claim=c["claim"],
        mode=c["mode"],
        metric=c["metric"],
        model=c["model"],
        status=status,
        heads=heads if tested else (),
        heads_text=", ".join(f"L{a}H{b}" for a, b in heads),
        score=c.get("detector_score"),
        clean=c["clean"].get("value") if tested else None,
        after=c["ablated"].get("value") if tested else None,
        harm=c["harm"] if tested else None,
        intervals=intervals if tested else None,
        n=c["clean"].get("n") if tested else None,
        placebo_harms=tuple(c["placebo_harms"]) if tested else (),
        placebo_mean=c.get("placebo_mean") if tested else None,
        placebo_interval=tuple(c["placebo_interval"]) if tested and c.get("placebo_interval") else None,
        verdict="no_candidates" if untested else c["verdict"],
        notes=tuple(n for n in c["notes"] if n != "no_candidates") if tested else (),
        candidates=_candidates_note(model_key) if untested else None,
        provenance=provenance,
    )


def committed_cards() -> dict[str, CardView] | None:
    """The committed cards (results/ablation.json) by key, in file order; None when there are none."""
    data = load_results()
    if data is None:
        return None
    device = data["device"]
    out = {}
    for c in data["cards"]:
        provenance = {
            "command": c.get("command", data["command"]),
            "date": device.get("date", data["date"]),
            "device": device.get("device_name", "?"),
            "seconds": c["seconds"],
            "draws": c["draws"],
            "load": c.get("load_average", "?"),
        }
        view = card_view(c, c.get("model_key", "smollm2"), provenance)
        out[view.key] = view
    return out


# --- the page's link, declared once (app/ui.py binds the widgets from it; the lessons read a step's state with it)

PARTS = ("cards", "live")
LIVE_MODELS = ("smollm2",)  # the committed cards are SmolLM2's; the live part also takes learners' decoders
MAX_LIVE_DRAWS = 10
LIVE_DRAWS = 5  # the live part's default: fewer than the committed cards' 20, so a rerun takes seconds


def card_keys() -> tuple[str, ...]:
    """The committed cards' keys ("<claim>-<mode>"), in file order; none when results/ablation.json is missing."""
    data = load_results()
    return tuple(f"{c['claim']}-{c['mode']}" for c in data["cards"]) if data else ()


def default_card() -> str | None:
    """The card /ablation opens on: the first committed card that tests its claim. The file's first, the antecedent
    card, tests none on SmolLM2 (no head above chance): opened first, the page showed only that sentence."""
    cards = committed_cards() or {}
    return next((key for key, view in cards.items() if view.status == "tested"), next(iter(cards), None))


def _context(c):
    from .attention import ModelContext

    return ModelContext(c, LIVE_MODELS, PAGE_NEEDS["ablation"])  # next-token predictions: a decoder


STATE = State(
    Choice("part", "cards", options=PARTS),
    Choice("card", lambda c: default_card(), options=lambda c: card_keys()),
    Choice("claim", "induction", options=CLAIMS),
    Choice("mode", "zero", options=MODES),
    model_choice(LIVE_MODELS),
    Int("k", DEFAULT_HEADS, 0, removable_heads),  # of the picked model (its context, or the page's loaded model)
    Int("draws", LIVE_DRAWS, 1, MAX_LIVE_DRAWS),
    Int("seed", DEFAULT_SEED, 0, 9999),
    context=_context,
)
