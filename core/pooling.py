"""Block pooling: the one way the app shrinks a big query x key matrix before it goes to the browser.

A matrix of n_q x n_k cells becomes at most s_q x s_k cells, each the mean of one block of (nearly) equal size:
  - bins: `bin_edges(n, s)` splits range(n) into s contiguous bins whose sizes differ by at most one (the larger
    ones spread evenly by rounding). Every pooled view uses these edges, the exact long-document maps of
    core/pooled_attention.py included, so a cell means the same tokens everywhere.
  - masked cells: a cell the query may not see (a decoder's future, padding) is not a weight of 0, it is absent.
    `block_mean` leaves it out of its block's mean: a cell is the mean of the weights the block's queries put on
    the block's keys they may see, and a block with no visible cell is NaN (drawn as a masked cell). Counting
    masked cells as 0 instead would dim every block on a decoder's diagonal by how much of it lies in the future,
    a property of the bin layout, not of the head. Without a mask, every cell counts (the plain block mean).
  - labels: `indexed_labels` names each token by its position ('3 cat', unique even when a token repeats),
    `bin_labels` names a bin by its token, or by its first and last token and their positions.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import torch


def bin_edges(n: int, n_bins: int) -> np.ndarray:
    """n_bins + 1 edges splitting range(n) into contiguous bins whose sizes differ by at most one
    (n_bins is clipped to [1, n]: never more bins than positions)."""
    n_bins = max(1, min(n_bins, n))
    return np.round(np.linspace(0, n, n_bins + 1)).astype(int)


def membership(edges: np.ndarray, n: int) -> torch.Tensor:
    """(bins, n) float 0/1: position j belongs to bin b when edges[b] <= j < edges[b + 1]."""
    e = torch.as_tensor(np.asarray(edges))
    pos = torch.arange(n)
    return ((pos[None, :] >= e[:-1, None]) & (pos[None, :] < e[1:, None])).float()


def block_mean(
    weights: torch.Tensor, masked: torch.Tensor | None, size: int, size_cols: int | None = None
) -> tuple[torch.Tensor, np.ndarray, np.ndarray]:
    """Block means of weights (..., n_q, n_k) -> (..., s_q, s_k), s_q = min(size, n_q), s_k = min(size_cols or
    size, n_k); masked (n_q, n_k) or broadcastable bool, True = the query may not see the key: left out of the
    mean; a block with no visible cell is NaN. Returns (pooled, row_edges, col_edges).

    Two matrix products with 0/1 bin-membership matrices (sums of weights, counts of visible cells), not a loop
    over blocks; tests check it against a plain loop."""
    n_q, n_k = weights.shape[-2:]
    row_edges = bin_edges(n_q, size)
    col_edges = bin_edges(n_k, size if size_cols is None else size_cols)
    pr, pc = membership(row_edges, n_q), membership(col_edges, n_k)  # (s_q, n_q), (s_k, n_k)
    visible = torch.ones(n_q, n_k) if masked is None else (~masked.bool()).float()
    w = weights.float() * visible  # masked cells contribute nothing to the sums
    sums = pr @ w @ pc.T  # (..., s_q, s_k)
    counts = pr @ visible @ pc.T
    pooled = torch.where(counts > 0, sums / counts.clamp_min(1), torch.full_like(sums, float("nan")))
    return pooled, row_edges, col_edges


MAX_LABEL_CHARS = 24
# How wide the app's fonts (Source Sans, Noto Sans CJK behind it) draw a character in a figure, in em of the type's
# size, as chromium draws plotly's text (python scripts/figure_text_widths.py, results/figure_text_widths.json): a
# column, a Latin character, is taken at 0.58 (the catalogs' English figure words draw 0.43 a character at the
# median, 0.48 at the 90th percentile, 0.65 at most: capitals); a kana or kanji 1.0, a Hangul syllable 0.92. (Two
# columns for a wide character, 1.16 em, cut ja titles about 16% early and ko ones 26%.) viz.labels fits titles by it.
COLUMN_EM, WIDE_EM, HANGUL_EM = 0.58, 1.0, 0.92


def is_wide(ch: str) -> bool:
    """An East Asian wide or full-width character."""
    return unicodedata.east_asian_width(ch) in ("W", "F")


def is_hangul(ch: str) -> bool:
    return 0x1100 <= ord(ch) <= 0x11FF or 0x3130 <= ord(ch) <= 0x318F or 0xAC00 <= ord(ch) <= 0xD7AF


def char_columns(ch: str) -> float:
    """Columns a character takes as drawn (a column: a Latin character's width): a wide or full-width one
    WIDE_EM / COLUMN_EM (about 1.7), a Hangul syllable HANGUL_EM / COLUMN_EM (about 1.6), any other one."""
    if not is_wide(ch):
        return 1
    return (HANGUL_EM if is_hangul(ch) else WIDE_EM) / COLUMN_EM


def clip_label(text: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def _clip_columns(text: str, columns: int) -> str:
    """`text` in at most `columns` columns as drawn (char_columns), '…' at a cut."""
    widths = [char_columns(ch) for ch in text]
    if sum(widths) <= columns:
        return text
    kept, used = 0, 1  # the ellipsis
    while used + widths[kept] <= columns:
        used += widths[kept]
        kept += 1
    return text[:kept] + "…"


def indexed_labels(tokens: list[str]) -> list[str]:
    """'3 cat'-style labels: unique even when a token repeats (plotly merges equal category names); long tokens
    clipped to MAX_LABEL_CHARS columns as drawn (a word-level tokenizer reads a Japanese sentence as one token:
    clipped to 24 characters its label ran off a phone's figure). Not escaped: the figure builders
    (viz.labels.safe_label) escape what they draw."""
    return [f"{i} {_clip_columns(str(t).replace(chr(10), '⏎'), MAX_LABEL_CHARS)}" for i, t in enumerate(tokens)]


def bin_ranges(edges: np.ndarray) -> list[str]:
    """The token indices each bin covers: '7' for a bin of one token, else 'i–j' (first and last, inclusive)."""
    return [f"{a}" if b - a == 1 else f"{a}–{b - 1}" for a, b in zip(edges[:-1], edges[1:])]


def bin_labels(labels: list[str], edges: np.ndarray) -> list[str]:
    """Labels of pooled bins: the token itself for a bin of one, else 'first…last (i–j)'."""
    return [
        labels[a] if b - a == 1 else f"{labels[a]}…{labels[b - 1]} ({span})"
        for a, b, span in zip(edges[:-1], edges[1:], bin_ranges(edges))
    ]
