"""core/pooling.py, the one block-pooling implementation: its bins, its masked means against a plain loop
(tests/references.py) and hand-worked numbers, and its labels."""

import numpy as np
import pytest
import torch

from core.pooling import bin_edges, bin_labels, block_mean, indexed_labels
from tests.fake_traces import fake_trace
from tests.references import pool_matrix


@pytest.mark.parametrize("n, s", [(7, 3), (300, 256), (512, 24), (5, 24), (1, 4), (100, 100)])
def test_bins_are_contiguous_and_differ_by_at_most_one(n, s):
    edges = bin_edges(n, s)
    sizes = np.diff(edges)
    assert edges[0] == 0 and edges[-1] == n and len(sizes) == min(s, n)
    assert sizes.min() >= 1 and sizes.max() - sizes.min() <= 1


@pytest.fixture(params=[False, True], ids=["encoder", "decoder"])
def trace(request):
    return fake_trace(causal=request.param)


@pytest.mark.parametrize("size", [3, 4, 7, 24])
def test_block_mean_equals_the_loop_with_masked_cells_as_nan(trace, size):
    n = trace.length(0)
    w = trace.attention(0, 1, 0)[:n, :n]
    masked = ~trace.mask(0)[:n, :n]
    got, r_edges, c_edges = block_mean(w, masked, size)
    ref, r_ref, c_ref = pool_matrix(torch.where(masked, float("nan"), w), size)
    np.testing.assert_allclose(got.numpy(), ref, atol=1e-6, equal_nan=True)
    assert list(r_edges) == list(r_ref) and list(c_edges) == list(c_ref)


def test_masked_cells_are_left_out_not_counted_as_zero_by_hand():
    """A causal 4 x 4 in 2 x 2 blocks. The top-left block holds [[1, -], [0.5, 0.5]]: mean of the 3 visible cells
    is 2/3 (counting the masked cell as 0 would give 1/2); the top-right block is all masked: NaN."""
    w = torch.tensor([[1.0, 0, 0, 0], [0.5, 0.5, 0, 0], [0.2, 0.2, 0.6, 0], [0.1, 0.2, 0.3, 0.4]])
    masked = ~torch.ones(4, 4, dtype=torch.bool).tril()
    got, _, _ = block_mean(w, masked, 2)
    assert got[0, 0].item() == pytest.approx(2 / 3)
    assert torch.isnan(got[0, 1])
    assert got[1, 0].item() == pytest.approx((0.2 + 0.2 + 0.1 + 0.2) / 4)
    assert got[1, 1].item() == pytest.approx((0.6 + 0.3 + 0.4) / 3)
    plain, _, _ = block_mean(w, None, 2)  # without a mask: the plain block mean, every cell counts
    assert plain[0, 0].item() == pytest.approx(0.5) and plain[0, 1].item() == 0.0


def test_block_mean_of_a_batch_and_of_rows_only():
    """(..., n_q, n_k) with a shared mask; size_cols pools the columns to another size."""
    w = torch.rand(3, 5, 10)
    got, r_edges, c_edges = block_mean(w, None, 5, 4)
    assert got.shape == (3, 5, 4) and len(r_edges) == 6 and len(c_edges) == 5
    for b in range(3):
        ref = [[w[b, :, c_edges[j] : c_edges[j + 1]].mean(-1) for j in range(4)]]
        torch.testing.assert_close(got[b], torch.stack(ref[0], -1))


def test_labels_of_tokens_and_bins():
    labels = indexed_labels(["the", "cat", "the", "a" * 40, "x\ny"])
    assert labels[:3] == ["0 the", "1 cat", "2 the"]  # unique although 'the' repeats
    assert len(labels[3]) <= 2 + 24 and labels[3].endswith("…")
    assert labels[4] == "4 x⏎y"
    # a sentence read as one token is cut to 24 columns as drawn, not characters: a kanji 1.0 em, a Hangul syllable
    # 0.92, a column 0.58 (1 + 13 x 1.72 columns; in Korean 1 + 5 spaces + 11 x 1.59)
    (wide,) = indexed_labels(["北の海岸を四十年見守ってきた灯台守は若い技術者たちに"])
    assert wide == "0 北の海岸を四十年見守ってき…" and indexed_labels(["猫"]) == ["0 猫"]
    assert indexed_labels(["북쪽 해안을 사십 년 동안 지켜 온"]) == ["0 북쪽 해안을 사십 년 동안 지…"]
    assert bin_labels(["a", "b", "c", "d", "e"], np.array([0, 1, 3, 5])) == ["a", "b…c (1–2)", "d…e (3–4)"]
