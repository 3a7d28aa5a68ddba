"""viz/sdpa_steps.py, lookup figures: the bars carry the soft and the dict's weights, the curve the soft result
against tau with the dict's value marked."""

import numpy as np

from core.sdpa_steps import lookup_view
from viz.sdpa_steps import lookup_figures


def t(key, /, **fmt):
    return key + "".join(f" {v}" for v in fmt.values())


def test_lookup_figures_draw_the_view():
    view = lookup_view(1, 0.5, ["cat", "dog", "car", "bus"])
    figs = lookup_figures(view, t)
    soft, hard = figs["weights"].data
    np.testing.assert_allclose(soft.y, np.round(view.weights, 4))
    assert list(hard.y) == [0.0, 1.0, 0.0, 0.0] and list(soft.x) == ["cat", "dog", "car", "bus"]
    curve, chosen, root = figs["curve"].data
    np.testing.assert_allclose(curve.x, view.taus)
    assert figs["curve"].layout.xaxis.dtick == 1  # tau labelled at powers of ten only, not 2 and 5 between them
    np.testing.assert_allclose(curve.y, np.round(view.soft_by_tau, 5))
    shapes = figs["curve"].layout.shapes
    assert [s.y0 for s in shapes if s.xref == "x domain"] == [5.0]  # the dict's value
    assert list(chosen.x) == [0.5] and chosen.y[0] == round(view.soft, 5) and list(root.x) == [2.0, 2.0]


def test_no_dict_line_for_a_query_equal_to_no_key():
    view = lookup_view(None, 2.0, ["cat", "dog", "car", "bus"])
    shapes = lookup_figures(view, t)["curve"].layout.shapes
    assert not shapes  # no dict value to draw
    # the title promises the limit the curve has: the most similar key's value, not the dict's (a KeyError)
    unit = view.keys / np.linalg.norm(view.keys, axis=1, keepdims=True)
    nearest = int(np.argmax(unit @ view.query))
    assert (
        lookup_figures(view, t)["curve"].layout.title.text
        == f"lookup_fig_curve_nearest {view.names[nearest]} {view.values[nearest]:g}"
    )
    assert (
        lookup_figures(lookup_view(2, 2.0, ["cat", "dog", "car", "bus"]), t)["curve"].layout.title.text
        == "lookup_fig_curve"
    )
