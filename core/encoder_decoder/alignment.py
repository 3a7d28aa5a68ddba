"""Do the trained model's cross-attention heads align target words with their source words? Measured, not asserted.

For each cross-attention head (layer l, head h) and each held-out pair, the reference is fed in (teacher forcing);
for every target word that the generator aligned to a source word, the decoder position that PREDICTS that word
(position t reads target t-1 and outputs target t) is a hit when its largest cross-attention weight falls on the
aligned source word. Against two baselines on the same words:
    monotone (diagonal): predict source position 1 + round(t (S_w - 1) / (T_w - 1)), the word at the same relative
        place (S_w, T_w: source words after the language tag, target words); what a head that ignores meaning
        and just walks along the sentence would score;
    chance: 1 / S_w per word, a head that points anywhere.
Accuracies come with 95% Wilson intervals (core/stats.py).

Off the diagonal: the same heads scored again on the OFF-DIAGONAL words only, those whose aligned source word is
not the diagonal guess. The diagonal baseline scores 0 there by construction. Not all of them are reordered: some
are off the guess only because source and target differ in length. The REORDERED (crossing) words are those whose
alignment crosses another word's in the same pair (s < s' while t > t': the verb that Japanese and Korean put
last, the place before the object); the heads are scored on them too.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..stats import wilson_interval
from .translate import translate


@dataclass(frozen=True)
class HeadAlignment:
    layer: int
    head: int
    hits: int
    words: int

    @property
    def accuracy(self) -> float:
        return self.hits / self.words if self.words else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.hits, self.words)

    def to_dict(self) -> dict:
        low, high = self.interval
        return {"layer": self.layer, "head": self.head, "hits": self.hits, "words": self.words,
                "accuracy": self.accuracy, "low": low, "high": high}  # fmt: skip


@dataclass(frozen=True)
class AlignmentReport:
    heads: list[HeadAlignment]  # every (layer, head), layer-major
    diagonal: HeadAlignment  # the monotone baseline (layer = head = -1)
    chance: float  # mean 1 / S_w over the scored words
    pairs: int
    off_diagonal: list[HeadAlignment] | None = None  # every head on the off-diagonal words only, layer-major
    off_chance: float = 0.0  # mean 1 / S_w over the off-diagonal words
    crossing: list[HeadAlignment] | None = None  # every head on the reordered (crossing) words only, layer-major
    crossing_chance: float = 0.0
    off_crossing: int = 0  # off-diagonal words that are also reordered (the rest are off only by length)

    def accuracy_grid(self, layers: int, heads: int) -> list[list[float]]:
        """(layers, heads) accuracies for the page's map."""
        return [[self.heads[l * heads + h].accuracy for h in range(heads)] for l in range(layers)]

    def best(self, k: int = 3) -> list[HeadAlignment]:
        return sorted(self.heads, key=lambda a: -a.accuracy)[:k]

    def verdict(self) -> str:
        """'aligns' when the best head's interval lies above the diagonal baseline's, 'diagonal' when it overlaps
        it but beats chance, 'none' otherwise: the page says it in words."""
        best = self.best(1)[0]
        if best.interval[0] > self.diagonal.interval[1]:
            return "aligns"
        if best.interval[0] > self.chance:
            return "diagonal"
        return "none"

    def off_diagonal_of(self, head: HeadAlignment) -> HeadAlignment | None:
        """`head`'s score on the off-diagonal words (None when they were not counted)."""
        if not self.off_diagonal:
            return None
        return next(h for h in self.off_diagonal if (h.layer, h.head) == (head.layer, head.head))

    def to_dict(self, best: int = 3) -> dict:
        """The JSON form results/encoder_decoder_alignment.json and the page share."""
        top = self.best(1)[0]
        off = self.off_diagonal_of(top)
        extra = {} if off is None else {"off_diagonal": {"best_head": off.to_dict(), "chance": self.off_chance,
                                                          "heads": [h.to_dict() for h in self.off_diagonal]}}  # fmt: skip
        if self.crossing:
            cross = next(h for h in self.crossing if (h.layer, h.head) == (top.layer, top.head))
            extra["crossing"] = {"best_head": cross.to_dict(), "chance": self.crossing_chance,
                                 "off_diagonal_words": self.off_crossing,
                                 "heads": [h.to_dict() for h in self.crossing]}  # fmt: skip
        return {
            "pairs": self.pairs,
            "words": self.diagonal.words,
            "heads": [h.to_dict() for h in self.heads],
            "diagonal": self.diagonal.to_dict(),
            "chance": self.chance,
            "best": [h.to_dict() for h in self.best(best)],
            "verdict": self.verdict(),
            **extra,
        }


def diagonal_guess(t: int, source_words: int, target_words: int) -> int:
    """The source position (1-based after the language tag) at the same relative place as target word t."""
    return 1 + round(t * (source_words - 1) / max(target_words - 1, 1))


@torch.no_grad()
def measure(model, tokenizer, pairs) -> AlignmentReport:
    """Score every cross-attention head on `pairs` (grammar.Pair, held out from training)."""

    def cross(pair) -> torch.Tensor:  # (T, L, H, S): row t is the position that outputs target word t
        result = translate(model, tokenizer, pair.source_text, reference=pair.target)
        return torch.stack([step.cross_attention for step in result.steps])

    shape = (model.config.decoder_layers, model.config.decoder_attention_heads)
    return score(pairs, (cross(pair) for pair in pairs), shape)


def crossing_words(alignment) -> set[tuple[int, int]]:
    """The links (s, t) of one pair that cross another link: s < s' while t > t' (the word order changed)."""
    links = list(alignment)
    return {(s, t) for s, t in links if any((s - s2) * (t - t2) < 0 for s2, t2 in links)}


def score(pairs, attentions, shape: tuple[int, int]) -> AlignmentReport:
    """The hit rule, the diagonal baseline and chance, on all aligned words and on the off-diagonal ones.
    attentions: per pair, (T, L, H, S) weights over the source tokens of the decoder position that outputs target
    word t; shape: (L, H) (a model with one attention, like the GRU's: (1, 1))."""
    n_layers, n_heads = shape
    hits = torch.zeros(shape, dtype=torch.long)
    off_hits = torch.zeros(shape, dtype=torch.long)
    cross_hits = torch.zeros(shape, dtype=torch.long)
    words = diag_hits = off_words = cross_words = off_crossing = 0
    chance = off_chance = cross_chance = 0.0
    for pair, att in zip(pairs, attentions):
        source_words, target_words = len(pair.source) - 1, len(pair.target)
        crossing = crossing_words(pair.alignment)
        for s, t in pair.alignment:
            hit = (att[t].argmax(-1) == s).long()  # (L, H)
            hits += hit
            on_diagonal = diagonal_guess(t, source_words, target_words) == s
            diag_hits += on_diagonal
            chance += 1 / source_words
            words += 1
            if not on_diagonal:
                off_hits += hit
                off_chance += 1 / source_words
                off_words += 1
            if (s, t) in crossing:
                cross_hits += hit
                cross_chance += 1 / source_words
                cross_words += 1
                off_crossing += not on_diagonal
    cells = [(l, h) for l in range(n_layers) for h in range(n_heads)]
    heads = [HeadAlignment(l, h, int(hits[l, h]), words) for l, h in cells]
    off = [HeadAlignment(l, h, int(off_hits[l, h]), off_words) for l, h in cells]
    cross = [HeadAlignment(l, h, int(cross_hits[l, h]), cross_words) for l, h in cells]
    diagonal = HeadAlignment(-1, -1, int(diag_hits), words)
    return AlignmentReport(heads, diagonal, chance / max(words, 1), len(pairs), off, off_chance / max(off_words, 1),
                           cross, cross_chance / max(cross_words, 1), off_crossing)  # fmt: skip


def off_diagonal_result(data: dict) -> dict | None:
    """The best head's off-diagonal score from a results file ({"head", "chance", "words"}), or None when the file
    predates that measurement or has another shape."""
    return _best_head_on(data, "off_diagonal")


def crossing_result(data: dict) -> dict | None:
    """The best head's score on the reordered (crossing) words, as off_diagonal_result."""
    return _best_head_on(data, "crossing")


def off_diagonal_parts(data: dict) -> dict | None:
    """Both results together ({"off", "cross", "length_only"}): length_only counts the off-diagonal words that cross
    no other word's alignment (off the guess only because source and target differ in length). None when either
    result is missing."""
    off, cross = off_diagonal_result(data), crossing_result(data)
    if off is None or cross is None:
        return None
    return {"off": off, "cross": cross, "length_only": off["words"] - cross["off_diagonal_words"]}


def _best_head_on(data: dict, words: str) -> dict | None:
    part = data.get(words)
    if not isinstance(part, dict) or not isinstance(part.get("best_head"), dict):
        return None
    head = part["best_head"]
    if not all(isinstance(head.get(k), (int, float)) for k in ("layer", "head", "accuracy", "low", "high", "words")):
        return None
    return {
        "head": head,
        "chance": float(part.get("chance", 0.0)),
        "words": int(head["words"]),
        "off_diagonal_words": int(part.get("off_diagonal_words", 0)),
    }


def is_result(data: dict) -> bool:
    """Has results/encoder_decoder_alignment.json the shape the page reads? (core.results.load_result's check)"""
    heads = data["heads"]
    return (
        bool(heads)
        and len(heads) == data["layers"] * data["heads_per_layer"]
        and all(isinstance(h[k], (int, float)) for h in heads for k in ("layer", "head", "accuracy", "low", "high"))
        and all(isinstance(data["diagonal"][k], (int, float)) for k in ("accuracy", "low", "high"))
        and isinstance(data["chance"], (int, float))
        and data["verdict"] in ("aligns", "diagonal", "none")
        and bool(data["best"])
    )


def result_grid(data: dict) -> dict[str, list[list[float]]]:
    """The (layers, heads) accuracy, low and high grids of a results file, for the page's map."""
    n_layers, n_heads = data["layers"], data["heads_per_layer"]
    grid = {k: [[0.0] * n_heads for _ in range(n_layers)] for k in ("accuracy", "low", "high")}
    for h in data["heads"]:
        for k in grid:
            grid[k][h["layer"]][h["head"]] = h[k]
    return grid
