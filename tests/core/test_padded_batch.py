"""/padded-batch: the padding check (core/padded_batch.py) on a fake model whose single runs reproduce the batch,
the verdict, the sentence view over the padded width, and the page headless (slow: MiniLM)."""

import numpy as np
import pytest
import torch

from core import padded_batch
from core.models.base import Batch, Trace
from tests.apptest_helpers import open_view, shown_text
from tests.fake_traces import fake_trace


class ConsistentFake:
    """A model whose run of text 'i' alone is row i of a fixed padded batch, cut to its real tokens."""

    def __init__(self, full: Trace):
        self.full = full

    def tokenize(self, texts, max_tokens=None):
        i = int(texts[0])
        n = self.full.length(i)
        b = self.full.batch
        return Batch(
            b.input_ids[i : i + 1, :n],
            b.attention_mask[i : i + 1, :n],
            [b.tokens[i][:n]],
            b.special[i : i + 1, :n],
            [False],
            texts,
        )

    def run(self, batch):
        i = int(batch.texts[0])
        n = batch.input_ids.shape[1]
        f = self.full
        return Trace(
            batch, [q[i : i + 1, :, :n] for q in f.queries], [k[i : i + 1, :, :n] for k in f.keys], f.scale, False
        )


def test_padding_report_on_a_consistent_fake_model():
    """padding_report compares each batch row with a run alone: a fake model whose single runs reproduce the
    batch rows exactly reports 0 difference and 0 weight on padding."""
    full = fake_trace(lengths=(6, 4), causal=False, special_at=())
    full.batch.texts[:] = ["0", "1"]
    report = padded_batch.padding_report(ConsistentFake(full), full)
    assert [r["padding"] for r in report] == [0, 2]
    assert all(r["max_pad_weight"] == 0.0 for r in report)
    assert all(r["max_diff_alone"] < 1e-6 for r in report)
    assert padded_batch.verdict(report, full).ok


def test_verdict_flags_padding_leaks_and_differences():
    ok = {"max_pad_weight": 0.0, "max_diff_alone": 1e-7}
    t = fake_trace()
    assert padded_batch.verdict([ok], t).heads == t.n_layers * t.n_heads
    assert padded_batch.verdict([ok, ok], t).ok
    assert not padded_batch.verdict([ok, {"max_pad_weight": 0.01, "max_diff_alone": 0.0}], t).ok
    assert not padded_batch.verdict([ok, {"max_pad_weight": 0.0, "max_diff_alone": 1e-2}], t).ok
    assert not padded_batch.verdict([ok, {"max_pad_weight": 0.0, "max_diff_alone": float("nan")}], t).ok


def test_sentence_view_covers_the_padded_width_with_padded_keys_masked():
    t = fake_trace(lengths=(6, 4), causal=False)
    view = padded_batch.sentence_view(t, 1, 2, 3)
    assert view.cells.shape == (6, 6) and len(view.labels) == 6 and view.labels[5] == "5 [PAD]"
    torch.testing.assert_close(torch.as_tensor(view.weights), t.attention(2, 3, 1))
    assert np.isnan(view.cells[:, 4:]).all()  # padded keys: masked for every query
    np.testing.assert_allclose(view.cells[:4, :4], t.attention(2, 3, 1)[:4, :4].numpy(), atol=1e-7)


def test_lines_are_the_non_empty_ones_at_most_four():
    assert padded_batch.split_lines(" a \n\n b\n", 4) == (["a", "b"], False)
    assert padded_batch.split_lines("1\n2\n3\n4\n5", 4) == (["1", "2", "3", "4"], True)
    assert padded_batch.split_lines("", 4) == ([], False)


@pytest.mark.slow
def test_padded_batch_page_reports_exact_zeros_and_equality():
    at = open_view("padded_batch")
    text = shown_text(at)
    assert "every padded key gets exactly 0 weight" in text, text
