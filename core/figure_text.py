"""A figure's text alternative, as numbers: the cells a sentence names for a reader who cannot see the figure.

The figure's own numbers (the matrix it draws, with its row and column labels) go in; the strongest cells come out,
largest first. Cells that are not finite (masked, not computed) are never named. Words are the app's (locales).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np


class Cell(NamedTuple):
    row: str
    col: str
    value: float


def strongest_cells(
    matrix: np.ndarray, row_labels: Sequence | None = None, col_labels: Sequence | None = None, k: int = 3
) -> list[Cell]:
    """The k largest finite cells of a 2-D matrix, largest first (ties: the earlier row, then column), named by
    their labels (their 0-based index where a figure has none)."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"a matrix has 2 dimensions, not {m.ndim}")
    rows = [str(r) for r in row_labels] if row_labels is not None else [str(i) for i in range(m.shape[0])]
    cols = [str(c) for c in col_labels] if col_labels is not None else [str(j) for j in range(m.shape[1])]
    flat = np.where(np.isfinite(m), m, -np.inf).ravel()
    finite = int(np.isfinite(m).sum())
    order = np.argsort(-flat, kind="stable")[: min(k, finite)]
    return [Cell(rows[i // m.shape[1]], cols[i % m.shape[1]], float(flat[i])) for i in order]
