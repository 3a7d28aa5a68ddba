"""Head detectors: one number per head saying how closely its attention follows a known pattern.

Inputs (Olsson et al. 2022, "In-context learning and induction heads"): B sequences of T random tokens repeated
once, r_1 .. r_T r_1 .. r_T, with the model's own special tokens around them (MiniLM: [CLS] ... [SEP]; SmolLM2
adds none). Random tokens carry no meaning, so a head that attends to the right place can only be following
position or repetition. With p the number of tokens before the first copy (the prefix), the first copy sits at
positions p .. p+T-1 and the second at p+T .. p+2T-1.

Each detector averages one quantity of the weights A (rows = queries, columns = keys) over queries and sequences:

    previous_token   A[i, i-1]                                 queries 1 .. p+2T-1
    duplicate_token  A[p+T+i, p+i]  (second copy -> the same token's first occurrence)   i = 0 .. T-1
    induction        A[p+T+i, p+i+1] (second copy -> the token AFTER its first occurrence) i = 0 .. T-2
    first_token      A[i, 0]  (the first position as a sink)    queries 1 .. p+2T-1
    local_window     sum of A[i, j] over |i - j| <= W           queries W+1 .. p+2T-1 (their window misses
                                                                position 0, so a sink does not count as local)

Each is a share of attention mass, so it lies in [0, 1]: 1 for a head that does exactly that, 0 for one that
never does. `uniform_scores` gives what a head spreading its attention evenly over what it may see would score:
the level to beat.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from .models.base import Batch
from .models.needs import PAGE_NEEDS
from .results import load_result
from .state import Choice, Flag, State, model_choice

RESULT_NAME = "head_detectors"
DETECTORS = ("previous_token", "duplicate_token", "induction", "first_token", "local_window")
WINDOW = 3  # local_window: keys within 3 positions either side
SCRIPT_SETTINGS = {"n_sequences": 16, "half_length": 48, "seed": 0}  # scripts/head_detectors.py
LIVE_SETTINGS = {"n_sequences": 4, "half_length": 24, "seed": 0}  # the page's small live version


@dataclass(frozen=True)
class Layout:
    """Where the two copies sit in each sequence: prefix p tokens, then T, then T again (then any suffix)."""

    prefix: int
    half: int

    @property
    def end(self) -> int:
        """One past the last token of the second copy."""
        return self.prefix + 2 * self.half


# --- the detectors: weights (..., n, n) -> scores (...) -------------------------------------------------------


def previous_token(weights: torch.Tensor, layout: Layout) -> torch.Tensor:
    q = torch.arange(1, layout.end)
    return weights[..., q, q - 1].mean(-1)


def duplicate_token(weights: torch.Tensor, layout: Layout) -> torch.Tensor:
    i = torch.arange(layout.half)
    return weights[..., layout.prefix + layout.half + i, layout.prefix + i].mean(-1)


def induction(weights: torch.Tensor, layout: Layout) -> torch.Tensor:
    i = torch.arange(layout.half - 1)
    return weights[..., layout.prefix + layout.half + i, layout.prefix + i + 1].mean(-1)


def first_token(weights: torch.Tensor, layout: Layout) -> torch.Tensor:
    return weights[..., 1 : layout.end, 0].mean(-1)


def local_window(weights: torch.Tensor, layout: Layout, window: int = WINDOW) -> torch.Tensor:
    n = weights.shape[-1]
    pos = torch.arange(n)
    near = ((pos[:, None] - pos[None, :]).abs() <= window).to(weights.dtype)  # (n, n)
    rows = slice(window + 1, layout.end)
    return (weights[..., rows, :] * near[rows]).sum(-1).mean(-1)


# One function per detector, one signature: (weights (..., n, n), layout) -> (...).
DETECTOR_FUNCTIONS = {
    "previous_token": previous_token,
    "duplicate_token": duplicate_token,
    "induction": induction,
    "first_token": first_token,
    "local_window": local_window,
}


def score_all(weights: torch.Tensor, layout: Layout) -> dict[str, torch.Tensor]:
    """{detector: scores (...)} for weights (..., n, n)."""
    return {name: DETECTOR_FUNCTIONS[name](weights, layout) for name in DETECTORS}


def uniform_weights(n: int, causal: bool) -> torch.Tensor:
    """(n, n): each query spreads its attention evenly over the keys it may see."""
    allowed = torch.tril(torch.ones(n, n)) if causal else torch.ones(n, n)
    return allowed / allowed.sum(-1, keepdim=True)


def uniform_scores(layout: Layout, n: int, causal: bool) -> dict[str, float]:
    """What an evenly spreading head scores on each detector: the level a real pattern must beat."""
    return {k: float(v) for k, v in score_all(uniform_weights(n, causal), layout).items()}


# --- inputs ---------------------------------------------------------------------------------------------------


def repeated_random_batch(model, n_sequences: int, half_length: int, seed: int) -> tuple[Batch, Layout]:
    """B sequences [prefix] r_1..r_T r_1..r_T [suffix] of random ids (seeded: the same seed gives the same batch)."""
    if n_sequences < 1 or half_length < 2:
        raise ValueError("need at least one sequence of at least two random tokens")
    pool = model.ordinary_ids()
    gen = torch.Generator().manual_seed(int(seed))
    halves = pool[torch.randint(len(pool), (n_sequences, half_length), generator=gen)]  # (B, T)
    before, after = model.affixes()
    rows = [before + half + half + after for half in halves.tolist()]
    if len(rows[0]) > model.max_positions:
        raise ValueError(f"{2 * half_length} tokens do not fit {model.name}'s {model.max_positions} positions")
    return model.batch_of_ids(rows), Layout(len(before), half_length)


# --- the map over every head ----------------------------------------------------------------------------------


@dataclass
class DetectorMap:
    """Detector scores of every head of one model: scores[detector] is (L, H)."""

    model: str
    scores: dict[str, torch.Tensor]
    uniform: dict[str, float]
    settings: dict
    seconds: float
    example_tokens: list[str] = field(default_factory=list)  # the first sequence, for the page to show

    def top(self, detector: str, k: int = 5) -> list[tuple[int, int, float]]:
        """The k best heads on a detector: (layer, head, score), ties to the lower layer then head."""
        s = self.scores[detector]
        flat = [(layer, h, float(s[layer, h])) for layer in range(s.shape[0]) for h in range(s.shape[1])]
        flat.sort(key=lambda r: (-r[2], r[0], r[1]))
        return flat[:k]

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "n_layers": int(self.scores[DETECTORS[0]].shape[0]),
            "n_heads": int(self.scores[DETECTORS[0]].shape[1]),
            "settings": self.settings,
            "seconds": round(self.seconds, 2),
            "uniform": {k: round(v, 4) for k, v in self.uniform.items()},
            "scores": {k: v.round(decimals=4).tolist() for k, v in self.scores.items()},
            "top": {k: [[layer, h, round(s, 4)] for layer, h, s in self.top(k, 10)] for k in DETECTORS},
        }


@torch.no_grad()
def detector_map(model, n_sequences: int, half_length: int, seed: int) -> DetectorMap:
    """Every detector on every head of `model`, averaged over n_sequences repeated random sequences."""
    t0 = time.perf_counter()
    batch, layout = repeated_random_batch(model, n_sequences, half_length, seed)
    trace = model.run(batch, logits=False, hidden_states=False)
    sums = {k: torch.zeros(trace.n_layers, trace.n_heads) for k in DETECTORS}
    for layer in range(trace.n_layers):
        for b in range(n_sequences):
            for k, v in score_all(trace.layer_attention(layer, b), layout).items():  # (H, n, n) -> (H,)
                sums[k][layer] += v
    scores = {k: v / n_sequences for k, v in sums.items()}
    n = batch.input_ids.shape[1]
    settings = {"n_sequences": n_sequences, "half_length": half_length, "seed": seed, "window": WINDOW,
                "prefix": layout.prefix, "tokens_per_sequence": n}  # fmt: skip
    return DetectorMap(
        model.name, scores, uniform_scores(layout, n, model.is_causal), settings, time.perf_counter() - t0,
        batch.tokens[0],
    )  # fmt: skip


def from_json(entry: dict) -> DetectorMap:
    """A DetectorMap from its results/head_detectors.json entry."""
    return DetectorMap(
        entry["model"],
        {k: torch.tensor(entry["scores"][k]) for k in DETECTORS},
        dict(entry["uniform"]),
        dict(entry["settings"]),
        float(entry["seconds"]),
    )


def _has_models(data: dict) -> bool:
    return all(set(DETECTORS) <= set(m["scores"]) for m in data["models"].values())


def load_results() -> dict | None:
    """results/head_detectors.json, or None when missing or of another shape."""
    return load_result(RESULT_NAME, required=_has_models)


def committed_map(model_key: str) -> DetectorMap | None:
    data = load_results()
    entry = None if data is None else data["models"].get(model_key)
    return None if entry is None else from_json(entry)


def detector_scores_for(model_key: str, layer: int, head: int) -> dict | None:
    """{detector: score, ...} of one head from results/head_detectors.json, plus "uniform" (what an evenly spread
    head scores) and "rank" (1 = the model's best head on that detector); None when there is no committed result
    for the model or the head is out of range. For /attention's head view."""
    data = load_results()
    entry = None if data is None else data["models"].get(model_key)
    if entry is None or not (0 <= layer < entry["n_layers"] and 0 <= head < entry["n_heads"]):
        return None
    out = {}
    for k in DETECTORS:
        grid = torch.tensor(entry["scores"][k])
        score = float(grid[layer, head])
        out[k] = {"score": score, "uniform": entry["uniform"][k], "rank": int((grid > score).sum()) + 1}
    return out


# --- the page's view of one detector ------------------------------------------------------------------------

STRONG_SCORE, STRONG_FACTOR = 0.5, 5.0  # a clear head: the best scores >= 0.5 and >= 5 x an evenly spreading head's


@dataclass(frozen=True)
class DetectorView:
    """One detector's score on every head of one model, its best heads and the finding (verdict)."""

    model_key: str
    detector: str
    scores: np.ndarray  # (L, H) in [0, 1]
    uniform: float  # what an evenly spreading head scores: the level to beat
    top_layers: list[int]  # the best heads, best first (ties to the lower layer, then head)
    top_heads: list[int]
    top_scores: list[float]  # rounded to 3 places
    best: float  # 0 when the map has no head
    finding: str  # "finding_strong" or "finding_weak"
    settings: dict  # n_sequences, half_length, seed
    seconds: float
    provenance: dict | None = None  # a committed map: command, date, device, threads, seconds, load

    @property
    def layer_labels(self) -> list[int]:
        """The rows of `scores`, numbered as the figure's layer axis and the map's CSV number them."""
        return list(range(self.scores.shape[0]))

    @property
    def head_labels(self) -> list[int]:
        """The columns of `scores`: the heads of each layer."""
        return list(range(self.scores.shape[1]))


def detector_view(found: DetectorMap, detector: str, model_key: str, top: int = 8,
                  provenance: dict | None = None) -> DetectorView:  # fmt: skip
    best_heads = found.top(detector, top)
    best = best_heads[0][2] if best_heads else 0.0
    uniform = found.uniform[detector]
    strong = best >= max(STRONG_SCORE, STRONG_FACTOR * uniform)
    return DetectorView(
        model_key=model_key,
        detector=detector,
        scores=found.scores[detector].numpy(),
        uniform=uniform,
        top_layers=[a for a, _, _ in best_heads],
        top_heads=[b for _, b, _ in best_heads],
        top_scores=[round(s, 3) for _, _, s in best_heads],
        best=best,
        finding="finding_strong" if strong else "finding_weak",
        settings={k: found.settings[k] for k in ("n_sequences", "half_length", "seed")},
        seconds=found.seconds,
        provenance=provenance,
    )


def committed_view(model_key: str, detector: str, top: int = 8) -> DetectorView | None:
    """The committed map's view (results/head_detectors.json), with where and how it was measured; None when
    there is no committed map for the model."""
    data = load_results()
    entry = None if data is None else data["models"].get(model_key)
    if entry is None:
        return None
    provenance = {
        "command": data["command"],
        "date": data["date"],
        "device": data["device"].get("device_name", "?"),
        "threads": data.get("torch_threads", "?"),
        "seconds": entry["seconds"],
        "load": entry.get("load_average", "?"),
    }
    return detector_view(from_json(entry), detector, model_key, top, provenance)


# --- the page's link, declared once (app/ui.py binds the widgets from it; the lessons read a step's state with it)

SHIPPED_MODELS = ("minilm", "smollm2")  # the models with a committed map


def _context(c):
    from .attention import ModelContext

    return ModelContext(c, SHIPPED_MODELS, PAGE_NEEDS["head-detectors"])


STATE = State(
    model_choice(SHIPPED_MODELS),
    Choice("detector", "induction", options=tuple(DETECTORS)),
    Flag("live", lambda c: c.model not in SHIPPED_MODELS),  # a learner's folder has no committed map: live first
    context=_context,
)
