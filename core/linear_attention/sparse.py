"""Another way past n²: keep softmax, but let each query see only some keys. BigBird (Zaheer et al. 2020) combines
three patterns over blocks of b tokens: a sliding window of neighbouring blocks, a few global blocks that see and
are seen by every block, and a few random blocks per query block. Each non-global query block then sees a fixed
number of key blocks whatever n is, so the scores grow linearly in n, with the softmax kept exact on what it sees.

The sizes default to the paper's BigBird-ITC setting: blocks of 64, 3 window blocks, 2 global blocks, 3 random.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

BLOCK, WINDOW, GLOBAL, RANDOM = 64, 3, 2, 3


def bigbird_block_mask(n_blocks: int, window: int = WINDOW, n_global: int = GLOBAL, n_random: int = RANDOM,
                       seed: int = 0) -> torch.Tensor:  # fmt: skip
    """(n_blocks, n_blocks) bool: query block i may see key block j. The first n_global blocks are global (their
    rows and columns are all True); every other row sees its window (i - window//2 .. i + window//2) and n_random
    blocks drawn (seeded) among the ones it does not see yet."""
    allowed = torch.zeros(n_blocks, n_blocks, dtype=torch.bool)
    g = torch.Generator().manual_seed(seed)
    half = window // 2
    for i in range(n_blocks):
        allowed[i, max(0, i - half) : i + half + 1] = True
    allowed[:n_global, :] = True
    allowed[:, :n_global] = True
    for i in range(n_global, n_blocks):
        unseen = torch.nonzero(~allowed[i]).flatten()
        pick = unseen[torch.randperm(len(unseen), generator=g)[:n_random]]
        allowed[i, pick] = True
    return allowed


@dataclass(frozen=True)
class SparseCount:
    n: int
    block: int
    scores: int  # (query, key) scores BigBird computes: allowed blocks x block²
    full: int  # n²: what softmax over every key computes

    @property
    def share(self) -> float:
        return self.scores / self.full


def bigbird_scores(n: int, block: int = BLOCK, seed: int = 0) -> SparseCount:
    """The scores BigBird computes on n tokens (n a multiple of block; otherwise rounded up to whole blocks)."""
    n_blocks = max(1, -(-n // block))
    allowed = bigbird_block_mask(n_blocks, seed=seed)
    return SparseCount(n, block, int(allowed.sum()) * block * block, (n_blocks * block) ** 2)
