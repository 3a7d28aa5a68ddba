"""viz/heatmap.py: what the figure carries, read back from its trace data (not from a rendering)."""

import inspect

import numpy as np
import pytest

from core.masks import causal_mask
from viz import heatmap

AXES = dict(x_title="key axis", y_title="query axis", value_name="number")  # as a page hands its own words


def attention_heatmap(*args, **kwargs):
    return heatmap.attention_heatmap(*args, **{**AXES, **kwargs})


def _masked_trace(fig):
    traces = [t for t in fig.data if t.name == "masked"]
    assert len(traces) == 1
    return traces[0]


def test_cross_only_on_masked_cells():
    n = 4
    visible = causal_mask(n).numpy()  # True = may attend (lower triangle)
    masked = ~visible
    weights = np.where(visible, 1.0, 0.0) / visible.sum(axis=1, keepdims=True)
    fig = attention_heatmap(weights, list("abcd"), list("abcd"), masked=masked)

    trace = _masked_trace(fig)
    text = np.array(trace.text)
    assert text.shape == (n, n)
    # every masked cell has the cross, every visible cell has no text at all
    assert (text[masked] == "✕").all()
    assert (text[visible] == "").all()
    # the template draws the per-cell text, never a constant that would land on every cell
    assert trace.texttemplate == "%{text}"
    # the grey layer covers exactly the masked cells; the weight layer leaves them empty
    grey = np.array(trace.z, dtype=float)
    assert np.isnan(grey[visible]).all() and (grey[masked] == 1.0).all()
    main = np.array(fig.data[0].z, dtype=float)
    assert np.isnan(main[masked]).all()
    np.testing.assert_allclose(main[visible], np.round(weights[visible], 3), rtol=1e-6)


def test_the_masked_layers_own_name_reaches_no_reader():
    """The masked layer is named 'masked' in English, for code to find it, and no reader meets that name: a heatmap is
    no legend entry (plotly's default; not even beside /rnn-attention's legend of marked cells), its hover ends with
    an empty <extra> (plotly's place for a trace's name), the caption tells no overlay (test_ui_captions), and a
    figure's table and CSV are the numbers a page hands, not its traces. Should one of these change, the layer needs
    the reader's words."""
    masked = ~causal_mask(3).numpy()
    fig = attention_heatmap(np.full((3, 3), 1 / 3), list("abc"), list("abc"), masked=masked)
    fig = heatmap.with_cell_marks(fig, [(0, 0)], list("abc"), list("abc"), "the reader's words")
    assert fig.layout.showlegend  # a legend is drawn: for the marks, not for the layer
    trace = _masked_trace(fig)
    assert trace.type == "heatmap" and trace.showlegend is None
    assert trace.hovertemplate.endswith("<extra></extra>") and "masked" not in trace.hovertemplate


def test_no_mask_layer_without_masked_cells():
    fig = attention_heatmap(np.full((3, 3), 1 / 3), list("abc"), list("abc"), masked=np.zeros((3, 3), bool))
    assert [t.name for t in fig.data if t.name == "masked"] == []


def test_big_matrix_has_grey_cells_but_no_per_cell_text():
    n = 41  # above the 40 x 40 limit for drawing crosses
    masked = ~causal_mask(n).numpy()
    fig = attention_heatmap(np.zeros((n, n)), [str(i) for i in range(n)], [str(i) for i in range(n)], masked=masked)
    trace = _masked_trace(fig)
    assert trace.text is None and trace.texttemplate is None
    assert np.isfinite(np.array(trace.z, dtype=float)[masked]).all()


def test_column_labels_stand_where_they_would_not_fit_their_columns_on_a_phone():
    """/encoder-decoder's cross map with a long Korean text at 390 px (chromium): six short keys, but rows labelled by
    a long sentence's tokens left each column about 15 px, and the lying labels ('1 静かな', '2 医者') overlapped.
    They stand (-60 degrees) there; three short keys beside short rows still lie, and more than six columns stand."""
    keys = ["0 <pad>", "1 静かな", "2 医者", "3 は", "4 歌う", "5 。"]
    rows = ["0 북쪽", "1 해안을 사십 년 동안 지켜 온 등대지기는"]
    assert attention_heatmap(np.full((2, 6), 1 / 6), rows, keys).layout.xaxis.tickangle == -60
    short = attention_heatmap(np.full((2, 3), 1 / 3), ["0 a", "1 b"], ["0 a", "1 b", "2 c"])
    assert short.layout.xaxis.tickangle == 0
    many = [f"{i} a" for i in range(7)]
    assert attention_heatmap(np.full((7, 7), 1 / 7), many, many).layout.xaxis.tickangle == -60


def test_a_map_whose_standing_labels_are_long_is_taller_by_them():
    """/encoder-decoder's self map of a Japanese sentence read as one token (its label cut at 24 columns) at 390 px:
    the label, standing, ran into the key axis's title as the plot was squeezed. The figure grows by what the label
    drops past the room a map leaves; short labels change nothing."""
    long_label = "1 北の海岸を四十年見守ってきた灯台守は、若い技術…"
    labels = ["0 <2ja>", long_label, "2 </s>"]
    tall = attention_heatmap(np.full((3, 3), 1 / 3), labels, labels)
    short = attention_heatmap(np.full((3, 3), 1 / 3), ["0 a", "1 b", "2 c"], ["0 a", "1 b", "2 c"])
    assert tall.layout.xaxis.tickangle == -60 and short.layout.xaxis.tickangle == 0
    assert tall.layout.height - short.layout.height >= 0.87 * 12 * (2 * 0.5 + 23 * 1.0) - 60  # drawn: 0.5 em, 1.0 em


def test_the_hover_names_query_and_key_in_the_readers_words():
    """A cell's hover said 'query:' and 'key:' (and a hidden cell 'masked') in English whatever the axes said; it now
    names them with the axes' own titles, the words the page handed in the reader's language."""
    w = np.full((3, 3), 1 / 3)
    fig = heatmap.attention_heatmap(w, ["a", "b", "c"], ["a", "b", "c"], masked=~causal_mask(3).numpy(),
                                    x_title="キー（注目される側）", y_title="クエリ（注目する側）", value_name="重み")  # fmt: skip
    hovers = [trace.hovertemplate for trace in fig.data]
    assert len(hovers) == 2
    for hover in hovers:
        assert "query" not in hover and "key" not in hover and "masked" not in hover, hover
        assert "クエリ（注目する側）: %{y}" in hover and "キー（注目される側）: %{x}" in hover, hover


def test_a_map_has_no_english_default_for_its_axes_or_its_numbers():
    """Every page hands its own words for the keys, the queries and a cell's number; the defaults ('key (attended
    to)', 'query (attending)', 'weight') were English for a Japanese or Korean reader, axes and hover alike, wherever a
    caller forgot one (/positions' RoPE bands did). A call without them now fails at once, in every test that draws
    the page."""
    params = inspect.signature(heatmap.attention_heatmap).parameters
    assert [n for n in ("x_title", "y_title", "value_name") if params[n].default is not inspect.Parameter.empty] == []
    with pytest.raises(TypeError):
        heatmap.attention_heatmap(np.eye(2), ["a", "b"], ["a", "b"], value_name="重み")
