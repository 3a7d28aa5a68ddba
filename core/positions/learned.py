"""Learned absolute position embeddings (BERT, GPT-2, MiniLM): one trained vector per position, added to the
token embedding. Nothing forces neighbouring positions to look alike; whatever structure the similarity matrix
shows was learned from data. Positions past the table (512 for MiniLM) simply do not exist. The table comes from
the model wrapper (core.models.minilm.minilm_position_embeddings).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..models.minilm import minilm_position_embeddings
from ..pooling import block_mean

MAX_DRAWN = 256  # positions per side drawn at full resolution; beyond, 2 x 2 block means
FAR = 100  # the far distance the page quotes beside 1 and 10


def cosine_similarity_matrix(vectors: torch.Tensor) -> np.ndarray:
    """(n, n) cosine similarity between rows."""
    v = vectors.double()
    v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return (v @ v.T).numpy()


def similarity_by_distance(sim: np.ndarray) -> dict[str, np.ndarray]:
    """Mean, min and max of sim[i, i + k] over all i, for each distance k = 0 .. n-1: does similarity fall off with
    distance, and does it depend on where the pair sits (a wide min-max range says it does)?"""
    n = sim.shape[0]
    mean, lo, hi = np.empty(n), np.empty(n), np.empty(n)
    for k in range(n):
        diag = np.diagonal(sim, offset=k)
        mean[k], lo[k], hi[k] = diag.mean(), diag.min(), diag.max()
    return {"distance": np.arange(n), "mean": mean, "min": lo, "max": hi}


@dataclass(frozen=True)
class SimilarityView:
    n: int  # positions compared (at most the table's length)
    factor: int  # block size of the drawn matrix (1: every position)
    shown: np.ndarray  # (n / factor, n / factor) cosine similarity, block means when factor > 1
    axis: np.ndarray  # (n / factor,) the position at the centre of each drawn block
    by_distance: dict[str, np.ndarray]  # similarity_by_distance of the full (n, n) matrix

    def mean_at(self, distance: int) -> float:
        """Mean similarity of positions `distance` apart (the largest distance there is, if beyond)."""
        return float(self.by_distance["mean"][self.distance(distance)])

    def distance(self, wanted: int) -> int:
        """The distance the view can show for `wanted`: at most the largest there is (n - 1)."""
        return min(wanted, self.n - 1)


def table_view(table: torch.Tensor, n: int) -> SimilarityView:
    """Cosine similarity of the first n rows of a position table (n_positions, d), pooled 2 x 2 past MAX_DRAWN."""
    n = max(2, min(n, table.shape[0]))
    sim = cosine_similarity_matrix(table[:n])
    factor = 2 if n > MAX_DRAWN else 1
    shown = block_mean(torch.from_numpy(sim), None, n // factor)[0].double().numpy() if factor > 1 else sim
    axis = np.arange(0, n, factor) + (factor - 1) / 2
    return SimilarityView(n, factor, shown, axis, similarity_by_distance(sim))


def similarity_view(model, n: int) -> SimilarityView:
    """table_view of MiniLM's learned position table."""
    return table_view(minilm_position_embeddings(model), n)


# --- do positions and words share directions? ---------------------------------------------------------------------


@dataclass(frozen=True)
class SubspaceView:
    """Adding a position vector to a word vector loses nothing if the two live in different directions. Measured
    on a trained table: how few directions hold most of the position vectors' variance, and how much of the word
    embeddings' variance falls in those same directions, against a random subspace of that size (k / d)."""

    d: int
    energy: float  # the share of the position vectors' variance the k directions hold (at least this)
    k: int  # principal directions of the (centred) position table needed for `energy`
    word_share: float  # share of the (centred) token embeddings' variance inside those k directions
    random_share: float  # k / d: what a random k-dimensional subspace would hold on average

    @property
    def below_chance(self) -> float:
        """How many times less than a random subspace the words put into the position directions."""
        return self.random_share / max(self.word_share, 1e-12)

    @property
    def kept_apart(self) -> bool:
        """The words avoid the position directions: less than half of what chance would put there."""
        return self.word_share < self.random_share / 2


def subspace_view(model, energy: float = 0.9) -> SubspaceView:
    """The learned position table against the model's whole token-embedding table."""
    table = minilm_position_embeddings(model).double()
    pos = table - table.mean(0)
    _, sv, vt = torch.linalg.svd(pos, full_matrices=False)
    cumulative = torch.cumsum(sv**2, 0) / (sv**2).sum()
    k = int(torch.searchsorted(cumulative, torch.tensor(energy, dtype=torch.float64)).item()) + 1
    words = model.token_embeddings(torch.arange(model.capabilities.vocab_size)).double()
    words = words - words.mean(0)
    inside = (words @ vt[:k].T).pow(2).sum() / words.pow(2).sum()
    return SubspaceView(table.shape[1], energy, k, float(inside), k / table.shape[1])


# --- past the table: a learned position that was never trained does not exist ----------------------------------


@dataclass(frozen=True)
class PastTableView:
    """What a lookup of one position in a learned table returns: its vector, or torch's error past the table."""

    position: int
    table_size: int  # rows of the table (MiniLM: 512, positions 0 .. 511)
    width: int  # numbers per row (MiniLM: 384)
    exists: bool
    head: np.ndarray | None  # the first numbers of the row (None past the table)
    norm: float | None  # the row's length
    error: str | None  # torch's own message past the table (English: for tests and logs, never a page)


HEAD_NUMBERS = 6  # numbers of the row shown


def lookup_table(table: torch.Tensor, position: int) -> PastTableView:
    """Look position up in the (n_positions, d) table as the model does (an embedding lookup by index). Past the
    last row torch raises IndexError: there is no vector, so no token can sit there; a longer input must be cut."""
    n, d = table.shape
    try:
        row = torch.nn.functional.embedding(torch.tensor([int(position)]), table)[0]
    except IndexError as e:
        return PastTableView(int(position), n, d, False, None, None, str(e))
    return PastTableView(
        int(position), n, d, True, row[:HEAD_NUMBERS].double().numpy(), float(row.double().norm()), None
    )


def past_table_view(model, position: int) -> PastTableView:
    """lookup_table on MiniLM's learned position table."""
    return lookup_table(minilm_position_embeddings(model), position)
