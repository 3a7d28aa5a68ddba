"""Antecedent heads: how much attention a pronoun pays to each candidate noun, and whether any head resolves
the pronoun or just tracks the first-mentioned noun.

Words and tokens. A word is a run of letters/digits (apostrophes inside allowed). A candidate's weight is the
SUM of the pronoun's weights over all of the candidate's tokens (sub-word pieces share the word's attention);
the pronoun is represented by its FIRST token (the query row we read).

Evaluation (scripts/antecedent_eval.py, the antecedents page): minimal pairs from data/antecedent_pairs.json,
split by a hash of each pair's id into a selection half and a held-out half. The head with the best accuracy on
the selection half is then scored on the held-out half, where nothing was chosen. Accuracy of a head on a
sentence = 1 when weight(pronoun -> correct) > weight(pronoun -> other). Both sentences of a pair land in the
same half, so a head that always prefers the first-mentioned noun scores exactly 50% there.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import torch

from ..attention import PRONOUNS, query_weights
from ..stats import wilson_interval

PAIRS_PATH = Path(__file__).resolve().parents[2] / "data" / "antecedent_pairs.json"

DETERMINERS = ("the", "a", "an", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our", "their")
# Capitalised words that are not names (sentence starts are skipped separately).
NOT_NAMES = {"i", *PRONOUNS, *DETERMINERS}
CHOICE_PROMPT = "{sentence} In this sentence, '{pronoun}' refers to the"

_WORD = re.compile(r"\w+(?:['’]\w+)*")


@dataclass(frozen=True)
class Word:
    text: str
    start: int  # character offsets in the sentence
    end: int


def split_words(text: str) -> list[Word]:
    return [Word(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


def find_pronouns(words: list[Word]) -> list[int]:
    """Indices of the words that are pronouns (it, he, she, they, who, which, ...)."""
    return [i for i, w in enumerate(words) if w.text.lower() in PRONOUNS]


def find_candidates(text: str, words: list[Word], pronoun: int) -> list[int]:
    """Candidate antecedents before word `pronoun`, by a deliberately simple rule (stated on the page):
    the word right after a determiner (the, a, an, this, ... their), and capitalised words that do not start
    a sentence. No parser: 'the brown suitcase' gives 'brown'; the page lets the reader correct the list."""
    out = []
    for i in range(pronoun):
        w = words[i]
        after_det = (
            i > 0 and words[i - 1].text.lower() in DETERMINERS and text[words[i - 1].end : w.start].strip() == ""
        )
        sentence_start = i == 0 or text[words[i - 1].end : w.start].strip()[-1:] in (".", "!", "?")
        capitalised = w.text[:1].isupper() and not sentence_start
        lower = w.text.lower()
        if (after_det or capitalised) and lower not in NOT_NAMES and lower not in PRONOUNS:
            out.append(i)
    return out


def token_spans(model, batch, index: int = 0) -> list[tuple[int, int] | None]:
    """Character span in batch.texts[index] of each token of sequence `index` (None for special/padding).
    Uses the tokenizer's offset mapping, checked against the ids the model actually ran on."""
    text = batch.texts[index]
    n_real = int(batch.attention_mask[index].sum())
    ids = batch.input_ids[index, :n_real].tolist()
    enc_ids, enc_offsets = model.offsets(text, n_real)
    if enc_ids[:n_real] != ids:
        raise ValueError("offset mapping does not match the tokens the model ran on")
    spans: list[tuple[int, int] | None] = []
    special = batch.special[index]
    for t, (a, b) in enumerate(enc_offsets[:n_real]):
        spans.append(None if bool(special[t]) or b <= a else (int(a), int(b)))
    return spans + [None] * (batch.input_ids.shape[1] - n_real)


def word_tokens(spans: list[tuple[int, int] | None], word: Word) -> list[int]:
    """Token indices whose characters overlap the word (a truncated word keeps only the tokens that exist)."""
    return [t for t, s in enumerate(spans) if s is not None and s[0] < word.end and s[1] > word.start]


def candidate_weights(rows: torch.Tensor, pieces: list[list[int]]) -> torch.Tensor:
    """rows (L, H, n) -> (L, H, n_candidates): each candidate's weight summed over its tokens."""
    return torch.stack([rows[..., p].sum(-1) if p else torch.zeros(rows.shape[:-1]) for p in pieces], dim=-1)


def rank_heads(weights: torch.Tensor, candidate: int, top: int | None = None) -> list[tuple[int, int, float]]:
    """Heads sorted by their weight on `candidate` (ties: lower layer, then lower head first).
    weights (L, H, n_candidates) -> [(layer, head, weight), ...]."""
    L, H, _ = weights.shape
    flat = [(l, h, float(weights[l, h, candidate])) for l in range(L) for h in range(H)]
    flat.sort(key=lambda r: (-r[2], r[0], r[1]))
    return flat[:top] if top else flat


# --- one sentence, end to end ---------------------------------------------------------------------------------


@dataclass
class Analysis:
    words: list[Word]
    pronoun: int  # word index
    candidates: list[int]  # word indices
    pronoun_token: int
    candidate_tokens: list[list[int]]
    weights: torch.Tensor  # (L, H, n_candidates)
    trace: object


def analyse(
    model,
    text: str,
    pronoun_word: int | None = None,
    candidate_words: list[int] | None = None,
    max_tokens: int | None = None,
) -> Analysis | None:
    """Run the model on `text` and measure pronoun -> candidate weights in every head (see `measure`)."""
    return measure(model, model.run(model.tokenize([text], max_tokens)), pronoun_word, candidate_words)


def measure(
    model, trace, pronoun_word: int | None = None, candidate_words: list[int] | None = None, index: int = 0
) -> Analysis | None:
    """Pronoun -> candidate weights in every head, from a trace of the text. Default pronoun: the first one
    with at least one candidate before it; default candidates: `find_candidates`. None when there is nothing
    to measure (no pronoun, no candidate, or the pronoun was cut off by truncation)."""
    text = trace.batch.texts[index]
    words = split_words(text)
    if pronoun_word is None:
        pronoun_word = next((p for p in find_pronouns(words) if find_candidates(text, words, p)), None)
    if pronoun_word is None or not 0 <= pronoun_word < len(words):
        return None
    if candidate_words is None:
        candidate_words = find_candidates(text, words, pronoun_word)
    candidate_words = [c for c in candidate_words if 0 <= c < pronoun_word]
    if not candidate_words:
        return None
    spans = token_spans(model, trace.batch, index)
    p_tokens = word_tokens(spans, words[pronoun_word])
    if not p_tokens:
        return None
    pieces = [word_tokens(spans, words[c]) for c in candidate_words]
    rows = query_weights(trace, p_tokens[0], index)  # (L, H, n)
    return Analysis(words, pronoun_word, candidate_words, p_tokens[0], pieces, candidate_weights(rows, pieces), trace)


def word_index(words: list[Word], word: str, before: int | None = None, last: bool = False) -> int:
    """Index of `word` (case-insensitive) among words[:before]: first occurrence, or last with last=True."""
    hits = [i for i, w in enumerate(words[:before]) if w.text.lower() == word.lower()]
    if not hits:
        raise ValueError(f"{word!r} not in sentence")
    return hits[-1] if last else hits[0]


def locate(text: str, pronoun: str, candidates: list[str]) -> tuple[list[Word], int, list[int]]:
    """Word indices of a stored pair's pronoun (first occurrence after the candidates) and its candidates
    (the last mention before the pronoun)."""
    words = split_words(text)
    first_pron = next(
        i
        for i, w in enumerate(words)
        if w.text.lower() == pronoun.lower()
        and all(any(x.text.lower() == c.lower() for x in words[:i]) for c in candidates)
    )
    return words, first_pron, [word_index(words, c, before=first_pron, last=True) for c in candidates]


# --- the evaluation --------------------------------------------------------------------------------------------


def load_pairs(path: Path = PAIRS_PATH) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def split_pairs(pairs: list[dict]) -> tuple[list[dict], list[dict]]:
    """Deterministic halves: pairs ordered by sha256 of their id; the first half selects, the rest is held out.
    Independent of file order, so adding a pair moves no other pair between halves by accident of position."""
    ordered = sorted(pairs, key=lambda p: hashlib.sha256(p["id"].encode()).hexdigest())
    half = len(ordered) // 2
    return ordered[:half], ordered[half:]


def measure_sentence(model, text: str, pronoun: str, candidates: list[str]) -> torch.Tensor:
    """(L, H, 2) weights pronoun -> each candidate for one stored sentence."""
    words, p, cands = locate(text, pronoun, candidates)
    a = analyse(model, text, p, cands)
    if a is None:
        raise ValueError(f"cannot measure {text!r}")
    return a.weights


def next_token_choice(model, text: str, pronoun: str, candidates: list[str]) -> list[float] | None:
    """A decoder's own answer: log-probability of each candidate's first token (with its leading space) as the
    next token after CHOICE_PROMPT. None for models without an LM head."""
    prompt = CHOICE_PROMPT.format(sentence=text, pronoun=pronoun)
    trace = model.run(model.tokenize([prompt]))
    if trace.logits is None:
        return None
    last = int(trace.batch.attention_mask[0].sum()) - 1
    logp = torch.log_softmax(trace.logits[0, last].double(), -1)
    firsts = [model.encode(" " + c)[0] for c in candidates]
    if len(set(firsts)) < len(firsts):
        raise ValueError(f"candidates {candidates} share their first token")
    return [float(logp[t]) for t in firsts]


def evaluate_shipped_pairs(model, progress=None) -> dict:
    """evaluate on the shipped pairs (load_pairs: the file the committed results were made from)."""
    return evaluate(model, load_pairs()["pairs"], progress=progress)


def evaluate(model, pairs: list[dict], with_choice: bool | None = None, progress=None) -> dict:
    """The whole evaluation for one model. Returns plain data (JSON-ready): per sentence, the weights of the
    selected head and the model's own choice; per half, accuracies with 95% Wilson intervals."""
    with_choice = model.is_causal if with_choice is None else with_choice
    selection, held_out = split_pairs(pairs)
    half_of = {p["id"]: "selection" for p in selection} | {p["id"]: "held_out" for p in held_out}
    rows, weights = [], []
    total = sum(len(p["sentences"]) for p in pairs)
    for pair in pairs:
        for s in pair["sentences"]:
            w = measure_sentence(model, s["text"], pair["pronoun"], pair["candidates"])
            correct = pair["candidates"].index(s["answer"])
            weights.append(w[..., [correct, 1 - correct]])  # (L, H, 2): correct, other
            row = {
                "pair": pair["id"],
                "half": half_of[pair["id"]],
                "text": s["text"],
                "answer": s["answer"],
                "first_mentioned": correct == 0,
            }
            if with_choice:
                lp = next_token_choice(model, s["text"], pair["pronoun"], pair["candidates"])
                row["choice_logprob"] = None if lp is None else [round(lp[correct], 4), round(lp[1 - correct], 4)]
            rows.append(row)
            if progress:
                progress(len(rows) / total)
    W = torch.stack(weights)  # (S, L, H, 2)
    right = W[..., 0] > W[..., 1]  # (S, L, H)
    margin = W[..., 0] - W[..., 1]
    sel = torch.tensor([r["half"] == "selection" for r in rows])
    best = best_head(right[sel].float().mean(0), margin[sel].mean(0))
    l, h = best
    for r, w in zip(rows, W):
        r["best_head_weights"] = [round(float(w[l, h, 0]), 4), round(float(w[l, h, 1]), 4)]
        r["heads_right"] = int((w[..., 0] > w[..., 1]).sum())
    out = {
        "model": model.name,
        "is_causal": bool(model.is_causal),
        "n_layers": W.shape[1],
        "n_heads": W.shape[2],
        "best_head": [l, h],
        "halves": {},
        "per_head": {},
        "sentences": rows,
    }
    for half in ("selection", "held_out"):
        idx = [i for i, r in enumerate(rows) if r["half"] == half]
        out["halves"][half] = summarise(rows, idx, right[idx, l, h].tolist())
        first = torch.tensor([rows[i]["first_mentioned"] for i in idx])
        picks_first = right[idx] == first[:, None, None]
        switches = pair_switches(rows, idx, picks_first)
        out["per_head"][half] = {
            "accuracy": right[idx].float().mean(0).round(decimals=4).tolist(),
            "first_mentioned_share": picks_first.float().mean(0).round(decimals=4).tolist(),
            "switch_share": switches.float().mean(0).round(decimals=4).tolist(),
        }
        out["halves"][half]["heads_that_ever_switch"] = int(switches.any(0).sum())
        out["halves"][half]["best_head_switch_share"] = float(switches[:, l, h].float().mean())
    return out


def pair_switches(rows: list[dict], idx: list[int], picks_first: torch.Tensor) -> torch.Tensor:
    """(n_pairs, L, H): does the head prefer a different candidate in the two sentences of a pair? Only a head
    that switches can be right on both; one that never switches scores exactly 50% on a half."""
    by_pair: dict[str, list[int]] = {}
    for k, i in enumerate(idx):
        by_pair.setdefault(rows[i]["pair"], []).append(k)
    pairs = [ks for ks in by_pair.values() if len(ks) == 2]
    if not pairs:
        return torch.zeros((0, *picks_first.shape[1:]), dtype=torch.bool)
    return torch.stack([picks_first[a] != picks_first[b] for a, b in pairs])


def best_head(accuracy: torch.Tensor, mean_margin: torch.Tensor) -> tuple[int, int]:
    """argmax accuracy; ties by the larger mean margin, then the lowest (layer, head)."""
    L, H = accuracy.shape
    key = max((float(accuracy[l, h]), float(mean_margin[l, h]), -l, -h) for l in range(L) for h in range(H))
    return (-key[2], -key[3])


def summarise(rows: list[dict], idx: list[int], head_right: list[bool]) -> dict:
    n = len(idx)
    k = int(sum(head_right))
    first_picks = sum((rows[i]["first_mentioned"] == bool(r)) for i, r in zip(idx, head_right))
    out = {
        "n_sentences": n,
        "n_pairs": len({rows[i]["pair"] for i in idx}),
        "head_accuracy": k / n if n else 0.0,
        "head_interval": list(wilson_interval(k, n)),
        "head_first_mentioned_share": first_picks / n if n else 0.0,
        "first_mentioned_baseline": sum(rows[i]["first_mentioned"] for i in idx) / n if n else 0.0,
    }
    choices = [rows[i].get("choice_logprob") for i in idx]
    if choices and all(c is not None for c in choices):
        kc = sum(c[0] > c[1] for c in choices)
        out["choice_accuracy"] = kc / n
        out["choice_interval"] = list(wilson_interval(kc, n))
        out["choice_first_mentioned_share"] = (
            sum((c[0] > c[1]) == rows[i]["first_mentioned"] for i, c in zip(idx, choices)) / n
        )
    return out
