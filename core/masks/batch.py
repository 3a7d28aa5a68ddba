"""A padded batch of the user's sentences under the three masks (padding, look-ahead, both): the scores
before masking, the mask, and the weights after, from one random attention layer (core.masks.layers)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..sdpa import attention_scores
from ..tokenize_simple import simple_tokenize
from . import causal_mask, combine_masks, lengths_to_attention_mask, padding_mask
from .layers import D_MODEL, N_HEADS, embed, random_attention, sdpa_check

PAD = "[PAD]"
MASK_KINDS = ("padding", "causal", "both")
EXAMPLES = ("The cat sat on the mat.", "Dogs bark.", "It was tired because it had chased a mouse.")


@dataclass(frozen=True)
class SentencesInput:
    """The sentences a page will batch, and what was done to the text to get them (for notices)."""

    token_lists: list[list[str]]  # 2 .. max_sentences lists, each 1 .. max_tokens tokens
    too_many: bool  # more than max_sentences lines: the first ones are used
    fell_back: bool  # fewer than two lines with tokens: the example sentences are used instead
    empty: bool  # not one line with tokens (a cleared box): fell back too; a notice asks for sentences, not a second
    cut: list[tuple[int, int]] = field(default_factory=list)  # (sentence, its number of tokens) for cut ones


def read_sentences(text: str, max_sentences: int = 4, max_tokens: int = 12) -> SentencesInput:
    """One sentence per non-blank line, tokenized by core.tokenize_simple. Never raises."""
    lines = [line for line in str(text).splitlines() if line.strip()]
    too_many = len(lines) > max_sentences
    tokenized = [simple_tokenize(line, max_tokens) for line in lines[:max_sentences]]
    tokenized = [t for t in tokenized if t.tokens]
    empty, fell_back = not tokenized, len(tokenized) < 2
    if fell_back:
        tokenized = [simple_tokenize(line, max_tokens) for line in EXAMPLES]
    return SentencesInput(
        token_lists=[t.tokens for t in tokenized],
        too_many=too_many,
        fell_back=fell_back,
        empty=empty,
        cut=[(i, t.n_total) for i, t in enumerate(tokenized) if t.truncated],
    )


@dataclass(frozen=True)
class PaddedBatch:
    tokens: list[list[str]]  # the real tokens of each sentence
    padded: list[list[str]]  # right-padded with PAD to one length
    attention_mask: torch.Tensor  # (B, n) 1 = real token, 0 = padding (as a tokenizer returns it)

    @property
    def lengths(self) -> list[int]:
        return [len(t) for t in self.tokens]

    @property
    def real(self) -> np.ndarray:
        """(B, n) bool: True on real tokens, False on padding."""
        return self.attention_mask.numpy().astype(bool)


def pad_batch(token_lists: list[list[str]], length: int | None = None) -> PaddedBatch:
    """Right-pad token lists to the longest one, like a tokenizer called with padding=True; or to a fixed `length`
    (padding="max_length", max_length=length), never shorter than the longest."""
    if not token_lists or any(len(t) == 0 for t in token_lists):
        raise ValueError("every sentence needs at least one token")
    n = max([len(t) for t in token_lists] + [int(length or 0)])
    padded = [list(t) + [PAD] * (n - len(t)) for t in token_lists]
    return PaddedBatch(
        tokens=[list(t) for t in token_lists],
        padded=padded,
        attention_mask=lengths_to_attention_mask([len(t) for t in token_lists], n),
    )


def mask_of_kind(kind: str, attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, 1, n, n) boolean, True = the query (row) may attend to the key (column).
    padding: every query sees the real keys of its sentence; causal: key position <= query position;
    both: the two combined with a logical AND (what a decoder uses on a padded batch)."""
    if kind not in MASK_KINDS:
        raise ValueError(f"unknown mask kind {kind!r}")
    b, n = attention_mask.shape
    pad = padding_mask(attention_mask) if kind in ("padding", "both") else None
    look_ahead = causal_mask(n) if kind in ("causal", "both") else None
    return combine_masks(pad, look_ahead).expand(b, 1, n, n)


@dataclass(frozen=True)
class MaskedBatchAttention:
    batch: PaddedBatch
    kind: str
    allowed: np.ndarray  # (B, n, n) bool: the mask, True = may attend
    scores: np.ndarray  # (B, H, n, n) QK^T / sqrt(d_head) before masking
    weights: np.ndarray  # (B, H, n, n) after masking: masked cells exactly 0, each row sums to 1
    sdpa_diff: float  # weights @ V vs SDPA


def masked_batch_attention(
    token_lists: list[list[str]],
    kind: str,
    seed: int = 0,
    d_model: int = D_MODEL,
    n_heads: int = N_HEADS,
    length: int | None = None,
) -> MaskedBatchAttention:
    """Scores before masking, the mask, and the weights after, for every sentence and head of a padded batch
    (padded to the longest sentence, or to `length`)."""
    batch = pad_batch(token_lists, length)
    mha = random_attention(d_model, n_heads, seed)
    x = embed(batch.padded, d_model, seed)  # (B, n, d_model)
    mask = mask_of_kind(kind, batch.attention_mask)  # (B, 1, n, n)
    with torch.no_grad():
        q, k, _ = mha.project(x)  # (B, H, n, d_head)
        scores = attention_scores(q, k)  # (B, H, n, n)
    weights = mha.weights(x, mask=mask)
    return MaskedBatchAttention(
        batch=batch,
        kind=kind,
        allowed=mask[:, 0].numpy(),
        scores=scores.numpy(),
        weights=weights.numpy(),
        sdpa_diff=sdpa_check(mha, x, mask=mask),
    )


@dataclass(frozen=True)
class MaskStepsView:
    """One sentence and head of a masked batch, ready to draw: the three masks, then scores -> mask -> weights,
    and the facts measured over the whole batch (every head, every sentence)."""

    sentence: int
    head: int
    kind: str  # the mask applied
    tokens: list[str]  # the sentence's padded tokens: rows (queries) and columns (keys)
    n_real: int  # its real tokens; later rows are padding queries
    masks: dict[str, np.ndarray]  # every kind of MASK_KINDS -> (n, n) bool for this sentence
    scores: np.ndarray  # (n, n) before masking
    allowed: np.ndarray  # (n, n) bool, the mask applied
    weights: np.ndarray  # (n, n) after masking
    n_sentences: int
    n_heads: int
    masked_max: float  # largest weight on a masked cell, whole batch (0 exactly)
    row_sum_min: float  # row sums, whole batch
    row_sum_max: float
    sdpa_diff: float

    @property
    def has_padding(self) -> bool:
        """The sentence is shorter than the batch's longest: its last rows are padding queries."""
        return self.n_real < len(self.tokens)


def mask_steps_view(token_lists: list[list[str]], sentence: int, head: int, kind: str, seed: int = 0) -> MaskStepsView:
    result = masked_batch_attention(token_lists, kind, seed=seed)
    every_allowed = np.broadcast_to(result.allowed[:, None], result.weights.shape)  # (B, H, n, n)
    sums = result.weights.sum(-1)  # (B, H, n)
    masks = {k: mask_of_kind(k, result.batch.attention_mask)[sentence, 0].numpy() for k in MASK_KINDS}
    return MaskStepsView(
        sentence=sentence,
        head=head,
        kind=kind,
        tokens=list(result.batch.padded[sentence]),
        n_real=len(token_lists[sentence]),
        masks=masks,
        scores=result.scores[sentence, head],
        allowed=result.allowed[sentence],
        weights=result.weights[sentence, head],
        n_sentences=len(token_lists),
        n_heads=result.weights.shape[1],
        masked_max=float(result.weights[~every_allowed].max()) if (~every_allowed).any() else 0.0,
        row_sum_min=float(sums.min()),
        row_sum_max=float(sums.max()),
        sdpa_diff=result.sdpa_diff,
    )


@dataclass(frozen=True)
class PaddingCost:
    length: int  # n: the padded length
    padding: int  # padding positions in the batch
    positions: int  # B n
    scores: int  # B H n^2 scores computed
    real_scores: int  # of them, between two real tokens of one sentence: the only ones a padding mask lets count


@dataclass(frozen=True)
class PaddingComparison:
    """Padding to the longest sentence against padding to a fixed maximum (a tokenizer's max_length, as in the
    material): what changes (the cost) and what does not (the real tokens' attention, under the padding mask)."""

    longest: PaddingCost
    fixed: PaddingCost
    real_weights_diff: float  # largest |difference| of a real query's weights on real keys between the two

    @property
    def score_ratio(self) -> float:
        """How many times the scores of padding to the longest the fixed maximum computes."""
        return self.fixed.scores / self.longest.scores


def _cost(result: MaskedBatchAttention) -> PaddingCost:
    b, h, n, _ = result.weights.shape
    lengths = result.batch.lengths
    return PaddingCost(n, b * n - sum(lengths), b * n, b * h * n * n, h * sum(x * x for x in lengths))


def padding_comparison(token_lists: list[list[str]], fixed: int, seed: int = 0) -> PaddingComparison:
    """The same sentences and random layer padded both ways, under the padding mask."""
    longest = masked_batch_attention(token_lists, "padding", seed=seed)
    padded = masked_batch_attention(token_lists, "padding", seed=seed, length=fixed)
    diff = 0.0
    for i, n_real in enumerate(longest.batch.lengths):
        a = longest.weights[i, :, :n_real, :n_real]
        b = padded.weights[i, :, :n_real, :n_real]
        diff = max(diff, float(np.abs(a - b).max()))
    return PaddingComparison(_cost(longest), _cost(padded), diff)
