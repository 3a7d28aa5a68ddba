"""viz/padded_batch.py: the attention_mask of a right-padded batch (a fake trace from tests/fake_traces.py), one row
per sentence and one column per position, read back from the figure."""

import functools

import numpy as np

from app import i18n
from tests.fake_traces import fake_trace
from viz import padded_batch as figures

t = functools.partial(i18n.text, "en", "padded_batch")


def test_mask_figure_is_the_batch_mask_with_values_written_when_small():
    mask = fake_trace(lengths=(6, 4, 2)).batch.attention_mask.numpy()
    fig = figures.mask_figure(mask, ["sentence 0", "sentence 1", "<s>2</s>"], t)
    (heat,) = fig.data
    np.testing.assert_array_equal(np.array(heat.z, dtype=float), mask)
    assert np.array(heat.z).shape == (3, 6) and mask[2].tolist() == [1, 1, 0, 0, 0, 0]
    assert list(heat.x) == [str(j) for j in range(6)] and list(heat.y)[2] == "&lt;s&gt;2&lt;/s&gt;"
    assert heat.texttemplate is not None  # 18 cells: the 0/1 values are written in them
    assert fig.layout.title.text == t("mask_title") and fig.layout.xaxis.title.text == t("position")


def test_a_large_mask_has_no_written_values():
    mask = np.ones((5, 40), dtype=int)
    assert mask.size > figures.VALUES_SHOWN_UP_TO
    assert figures.mask_figure(mask, [str(i) for i in range(5)], t).data[0].texttemplate is None
