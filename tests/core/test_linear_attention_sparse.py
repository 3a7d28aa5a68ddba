"""core/linear_attention/sparse.py: BigBird's block pattern counted, against the pattern's definition by hand."""

import torch

from core.linear_attention import sparse


def test_block_mask_follows_the_three_patterns():
    nb = 64
    m = sparse.bigbird_block_mask(nb, window=3, n_global=2, n_random=3, seed=1)
    assert m[:2].all() and m[:, :2].all()  # global blocks see and are seen by every block
    for i in range(2, nb):
        window = set(range(max(0, i - 1), min(nb, i + 2)))
        assert all(m[i, j] for j in window)
        # by hand: the window, the 2 global blocks, and 3 random blocks outside both
        assert int(m[i].sum()) == len(window | {0, 1}) + 3
    assert torch.equal(m, sparse.bigbird_block_mask(nb, 3, 2, 3, seed=1))  # seeded


def test_scores_by_hand_and_linear_growth():
    # n = 4,096 = 64 blocks: 2 global rows x 64 + row 2 (window 1..3 with globals: 4 + 3) + rows 3..62 (8)
    # + row 63 (window 62..63: 2 + 2 + 3) = 622 blocks of 64 x 64
    c = sparse.bigbird_scores(4096)
    assert c.scores == (2 * 64 + 7 + 60 * 8 + 7) * 64 * 64 == 2_547_712 and c.full == 4096**2
    big, bigger = sparse.bigbird_scores(65536), sparse.bigbird_scores(131072)
    assert 1.9 < bigger.scores / big.scores < 2.1  # linear in n (the global rows add a little)
    assert sparse.bigbird_scores(100).full == 128**2  # rounded up to whole blocks
