"""viz/padded_batch.py: the attention_mask of a right-padded batch (a fake trace from tests/fake_traces.py), one row
per sentence and one column per position, and one sentence's head inside the batch, read back from the figure."""

import functools

import numpy as np

from app import i18n
from core import padded_batch
from tests.fake_traces import fake_trace
from viz import padded_batch as figures

t = functools.partial(i18n.text, "en", "padded_batch.figure")


def test_mask_figure_draws_tokens_and_padding_as_two_named_kinds_of_cell():
    trace = fake_trace(lengths=(6, 4, 2))
    mask = trace.batch.attention_mask.numpy()
    fig = figures.mask_figure(padded_batch.mask_view(trace), t)
    real, padding = [tr for tr in fig.data if tr.type == "heatmap"]
    # each kind of cell is its own layer, drawn where the mask is 1 (a token) or 0 (padding); no colour scale, which
    # implied values between 0 and 1
    np.testing.assert_array_equal(np.isfinite(np.array(real.z, dtype=float)), mask == 1)
    np.testing.assert_array_equal(np.isfinite(np.array(padding.z, dtype=float)), mask == 0)
    assert mask[2].tolist() == [1, 1, 0, 0, 0, 0]
    assert not any(tr.showscale for tr in fig.data if tr.type == "heatmap")
    assert real.colorscale != padding.colorscale  # two colours
    legend = [tr.name for tr in fig.data if tr.type == "scatter"]
    assert legend == [t("real_token"), t("padding")] and fig.layout.showlegend
    assert list(real.x) == [str(j) for j in range(6)] and list(real.y) == ["sentence 0", "sentence 1", "sentence 2"]
    assert list(real.text[2]) == ["1", "1", "", "", "", ""] and list(padding.text[2]) == ["", "", "0", "0", "0", "0"]
    assert fig.layout.title.text == t("mask_title") and fig.layout.xaxis.title.text == t("position")
    assert fig.layout.yaxis.title.text == t("sentence_axis")  # its text alternative says what the rows are


def test_a_large_mask_has_no_written_values():
    view = padded_batch.MaskView(np.ones((5, 40), dtype=int))
    assert view.mask.size > figures.VALUES_SHOWN_UP_TO
    assert all(tr.text is None for tr in figures.mask_figure(view, t).data)


def test_sentence_figure_is_the_head_over_the_padded_width_titled_with_its_sentence():
    trace = fake_trace(lengths=(6, 4, 2))
    view = padded_batch.sentence_view(
        padded_batch.BatchRun(trace, trace.batch.attention_mask.bool(), "right", True), 2, 1, 3
    )
    fig = figures.sentence_figure(view, t, 2)
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (6, 6)
    assert np.isnan(z[:, 2:]).all()  # sentence 2 has 2 real tokens: every padded key is masked
    np.testing.assert_allclose(np.nansum(z[:2], axis=1), 1.0, rtol=1e-5)  # real rows sum to 1 over the real keys
    assert fig.layout.title.text.startswith(t("head_title", i=2, l=1, h=3))
    assert fig.layout.xaxis.title.text == t("key_axis") and fig.layout.yaxis.title.text == t("query_axis")
