"""/padded-batch: the padding check (core/padded_batch.py) on a fake model whose single runs reproduce the batch,
the verdict, the sentence view over the padded width, the batch arranged (padding moved left, the mask taken away),
and the page's link as its declaration reads it; the page headless is tests/pages/test_padded_batch_page.py."""

import dataclasses

import numpy as np
import pytest
import torch

from core import padded_batch
from core.models.base import Batch, Trace
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

    def run(self, batch, logits=True, hidden_states=True):
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


def as_run(trace: Trace, masked: bool = True) -> padded_batch.BatchRun:
    """A fake trace as the page's batch run (right padding); unmasked: the model was fed an all-ones mask."""
    real = trace.batch.attention_mask.bool()
    if not masked:
        fed = dataclasses.replace(trace.batch, attention_mask=torch.ones_like(trace.batch.attention_mask))
        trace = dataclasses.replace(trace, batch=fed)
    return padded_batch.BatchRun(trace, real, "right", masked)


def test_sentence_view_covers_the_padded_width_with_padded_keys_masked():
    t = fake_trace(lengths=(6, 4), causal=False)
    view = padded_batch.sentence_view(as_run(t), 1, 2, 3)
    assert view.cells.shape == (6, 6) and len(view.labels) == 6 and view.labels[5] == "5 [PAD]"
    torch.testing.assert_close(torch.as_tensor(view.weights), t.attention(2, 3, 1))
    assert np.isnan(view.cells[:, 4:]).all()  # padded keys: masked for every query
    np.testing.assert_allclose(view.cells[:4, :4], t.attention(2, 3, 1)[:4, :4].numpy(), atol=1e-7)
    assert view.has_padding and not padded_batch.sentence_view(as_run(t), 0, 2, 3).has_padding  # 4 of 6, 6 of 6
    unmasked = padded_batch.sentence_view(as_run(t, masked=False), 1, 2, 3)
    assert unmasked.has_padding and not np.isnan(unmasked.cells).any()  # padding the model was not told about


def test_lines_are_the_non_empty_ones_at_most_four():
    assert padded_batch.split_lines(" a \n\n b\n", 4) == (["a", "b"], False)
    assert padded_batch.split_lines("1\n2\n3\n4\n5", 4) == (["1", "2", "3", "4"], True)
    assert padded_batch.split_lines("", 4) == ([], False)


def test_arranged_moves_each_rows_padding_in_front_and_unmasked_is_all_ones():
    """Hand-worked: rows of 3 and 1 real tokens in a width of 3; the left-padded rows and their labels."""
    ids = torch.tensor([[5, 6, 7], [8, 0, 0]])
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]])
    batch = Batch(ids, mask, [["a", "b", "c"], ["d", "P", "P"]], mask == 0, [False, False], ["abc", "d"])
    left = padded_batch.arranged(batch, "left")
    assert left.input_ids.tolist() == [[5, 6, 7], [0, 0, 8]] and left.attention_mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    assert left.tokens == [["a", "b", "c"], ["P", "P", "d"]] and left.special.tolist()[1] == [True, True, False]
    bare = padded_batch.arranged(batch, "left", masked=False)
    assert bare.attention_mask.tolist() == [[1, 1, 1], [1, 1, 1]] and bare.input_ids.tolist() == left.input_ids.tolist()
    assert padded_batch.arranged(batch).input_ids.tolist() == ids.tolist()
    with pytest.raises(ValueError):
        padded_batch.arranged(batch, "middle")


def test_padding_report_reads_the_real_tokens_where_they_are():
    """A left-padded batch whose rows are the right-padded ones moved: the report finds each row's real tokens at the
    end (the fake model's runs alone are the right-padded rows), so nothing differs and no weight is on padding."""
    full = fake_trace(lengths=(6, 4), causal=False, special_at=())
    full.batch.texts[:] = ["0", "1"]
    moved = dataclasses.replace(
        full,
        batch=padded_batch.arranged(full.batch, "left"),
        queries=[torch.stack([q[0], q[1].roll(2, dims=-2)]) for q in full.queries],
        keys=[torch.stack([k[0], k[1].roll(2, dims=-2)]) for k in full.keys],
    )
    real = moved.batch.attention_mask.bool()
    report = padded_batch.padding_report(ConsistentFake(full), moved, real=real)
    assert [r["padding"] for r in report] == [0, 2] and all(r["max_pad_weight"] == 0.0 for r in report)
    assert all(r["max_diff_alone"] < 1e-6 for r in report)
    unmasked = dataclasses.replace(moved, batch=padded_batch.arranged(moved.batch, "right", masked=False))
    leak = padded_batch.padding_report(ConsistentFake(full), unmasked, real=real)
    assert leak[1]["max_pad_weight"] > 0 and padded_batch.verdict(leak, unmasked).kind == "bad"


def test_the_verdict_says_what_went_wrong():
    t = fake_trace()
    assert padded_batch.verdict([{"max_pad_weight": 0.0, "max_diff_alone": 1e-7}], t).kind == "ok"
    assert padded_batch.verdict([{"max_pad_weight": 0.0, "max_diff_alone": 0.5}], t).kind == "moved"
    assert padded_batch.verdict([{"max_pad_weight": 0.2, "max_diff_alone": 0.5}], t).kind == "bad"
    assert padded_batch.verdict([{"max_pad_weight": 0.0, "max_diff_alone": float("nan")}], t).kind == "bad"


SHAPE = {"n_layers": 6, "n_heads": 12, "models": ("minilm", "smollm2", "moe")}  # MiniLM's, known without loading it


def test_the_link_is_read_as_the_page_reads_it():
    """The declaration's bounds: the sentence picker has as many options as the text has sentences (at most 4), layer
    and head the model's; a value out of them, or an unknown side, reads as the default."""
    s = padded_batch.STATE.read({"text": "a\nb\nc", "row": "2", "layer": "5", "head": "11", "pad": "left",
                                 "nomask": "1"}, **SHAPE)  # fmt: skip
    assert (s.row, s.layer, s.head, s.pad, s.nomask, s.model) == ("2", 5, 11, "left", True, "minilm")
    s = padded_batch.STATE.read({"text": "a\nb", "row": "2", "layer": "6", "head": "-1", "pad": "up"}, **SHAPE)
    assert (s.row, s.layer, s.head, s.pad, s.nomask) == ("0", 0, 0, "right", False)
    assert s.n_sentences == 2 and s.lines == ["a", "b"]
    assert padded_batch.STATE.read({}, **SHAPE).text == padded_batch.DEFAULT_TEXTS
    found = padded_batch.STATE.problems({"pad": "up", "mask": "0", "layer": "x"})
    assert len(found) == 3 and any("mask is not" in f for f in found)
