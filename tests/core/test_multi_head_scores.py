"""core/multi_head.py's score entries: parameters and matrix-product FLOPs stay put as h grows, the h score
matrices of n x n do not. Checked against the weights torch's nn.MultiheadAttention returns per head."""

import pytest
import torch

from core import multi_head as mh


@pytest.mark.parametrize("heads", [1, 2, 8])
def test_score_entries_are_the_per_head_weights_torch_computes(heads):
    n, d = 7, 16
    attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
    x = torch.randn(1, n, d)
    _, weights = attn(x, x, x, need_weights=True, average_attn_weights=False)
    assert weights.shape == (1, heads, n, n)
    assert mh.score_entries(n, heads) == weights.numel()
    assert mh.attention_parameters(d) == sum(p.numel() for p in attn.parameters())


def test_the_table_grows_only_in_score_entries():
    rows = mh.head_count_rows(512, 64)
    assert len({(r.parameters, r.flops) for r in rows}) == 1
    assert [r.score_entries for r in rows] == [r.heads * 64 * 64 for r in rows]
    assert rows[-1].score_entries == 32 * rows[0].score_entries  # h = 32 against h = 1
