"""viz/positions/common.py: the numeric heatmap, the curves (with min-max bands and hand-placed labels on log axes)
and the bars every position figure is built from, read back from the figures' data."""

import math

import numpy as np

from viz.positions.common import bars, curves, value_heatmap


def test_value_heatmap_keeps_numeric_axes_blank_nan_cells_and_row_zero_on_top():
    z = np.array([[0.12345, np.nan, -1.0], [2.0, 0.5, 0.0]])
    fig = value_heatmap(z, x=[10, 20, 30], title="T", x_title="key position", y_title="query position", value_name="S")
    (heat,) = fig.data
    got = np.array(heat.z, dtype=float)
    assert got.shape == (2, 3) and np.isnan(got[0, 1])
    np.testing.assert_allclose(got[~np.isnan(z)], np.round(z[~np.isnan(z)], 3), atol=1e-6)
    assert list(heat.x) == [10, 20, 30] and list(heat.y) == [0, 1]
    assert fig.layout.xaxis.title.text == "key position" and fig.layout.yaxis.title.text == "query position"
    assert fig.layout.yaxis.autorange == "reversed" and heat.zmid == 0.0
    fixed = value_heatmap(z, zmin=-1, zmax=1, reverse_y=False, x_title="j", y_title="i", value_name="PE")
    assert fixed.data[0].zmid is None and (fixed.data[0].zmin, fixed.data[0].zmax) == (-1, 1)
    assert fixed.layout.yaxis.autorange is None


def test_curves_draw_one_line_per_series_and_a_band_around_it():
    x = np.arange(4)
    fig = curves(x, {"mean": [1, 2, 3, 4], "<i>other</i>": [4, 3, 2, 1]}, bands={"mean": ([0, 1, 2, 3], [2, 3, 4, 5])})
    band, mean, other = fig.data
    assert band.fill == "toself" and not band.showlegend
    np.testing.assert_allclose(band.y, [2, 3, 4, 5, 3, 2, 1, 0])  # high forward, low backward: a closed shape
    assert mean.name == "mean" and other.name == "&lt;i&gt;other&lt;/i&gt;"
    np.testing.assert_allclose(mean.y, [1, 2, 3, 4])


def test_curves_place_labels_at_log10_of_the_value_on_log_axes():
    fig = curves(
        [1, 10, 100], {"s": [1e-3, 1e-2, 1e-1]}, log_x=True, log_y=True, vlines=[(10, "n")], hlines=[(0.01, "t")]
    )
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    notes = {a.text: a for a in fig.layout.annotations}
    assert notes["n"].x == 1.0 and math.isclose(notes["t"].y, -2.0)


def test_bars_are_categories_with_escaped_labels():
    fig = bars(["0", "1", "<2>"], [0.5, 0.3, 0.2], title="share", x_title="pair", y_title="mean share")
    (bar,) = fig.data
    assert list(bar.x) == ["0", "1", "&lt;2&gt;"] and list(bar.y) == [0.5, 0.3, 0.2]
    assert fig.layout.xaxis.type == "category"
    assert fig.layout.xaxis.title.text == "pair" and fig.layout.yaxis.title.text == "mean share"
