"""viz/moe.py: the routing figures built from core.moe.views.text_routing on hand-made router logits (no model),
and the checkpoint figures from small core Specialisation / Comparison views, read back from the figures: router
probabilities with marks on the top-k and dropped choices, loads against 1/E and the capacity line, entropies
against log E, the dropped-share curve, the category and layer maps, the loss curves."""

import functools
import math

import numpy as np
import pytest
import torch

from app import i18n
from core.moe import balance_bounds, views
from core.moe import checkpoint_views as cv
from viz import moe as vmoe
from viz.labels import COLUMN_EM, FONT_PX, label_columns

t = functools.partial(i18n.text, "en", "moe.figure")
E, K, T = 4, 2, 5


def run(seed: int) -> views.TextRun:
    logits = torch.randn(T, E, generator=torch.Generator().manual_seed(seed)) * 2
    tokens = ["[BOS]", "the", "<b>cat</b>", "sees", "the"]
    return views.TextRun(tokens, T, False, [logits, logits.flip(-1)], E, K, 64)


VIEW = views.text_routing({"balanced": run(0), "collapsed": run(1)}, "balanced", 0, 0.5)


def test_router_heatmap_marks_chosen_and_dropped_experts():
    fig = vmoe.router_heatmap(VIEW, t)
    heat, chosen, dropped = fig.data
    z = np.array(heat.z, dtype=float)
    assert z.shape == (T, E)
    np.testing.assert_allclose(z, np.round(VIEW.probs, 3), atol=1e-6)

    def marked(trace) -> np.ndarray:
        cells = np.zeros((T, E), dtype=bool)
        for x, y in zip(trace.x, trace.y, strict=True):
            cells[list(heat.y).index(y), list(heat.x).index(x)] = True
        return cells

    np.testing.assert_array_equal(marked(dropped), VIEW.dropped)
    np.testing.assert_array_equal(marked(chosen), VIEW.chosen & ~VIEW.dropped)
    assert (chosen.marker.symbol, dropped.marker.symbol) == ("circle", "x")
    assert chosen.name == t("chosen", k=K) and dropped.name == t("dropped")
    assert VIEW.dropped.any()  # capacity factor 0.5 drops some choices here
    assert list(heat.y)[2] == "2 &lt;b&gt;cat&lt;/b&gt;" and len(set(heat.y)) == T  # unique, escaped token labels
    assert list(heat.x) == ["0", "1", "2", "3"] and fig.layout.xaxis.type == "category"  # numbers, the axis titled
    assert "<br>expert %{x}<br>" in heat.hovertemplate  # hover names the expert in words
    assert fig.layout.xaxis.title.text.startswith(t("expert_axis")) and fig.layout.yaxis.title.text == t("token_axis")


def luminance(colour: str) -> float:
    """WCAG's relative luminance of '#rrggbb', 'rgb(r,g,b)' or a CSS name plotly knows."""
    import plotly.colors

    named = {"white": "#ffffff", "black": "#000000"}
    colour = named.get(colour, colour)
    rgb = plotly.colors.hex_to_rgb(colour) if colour.startswith("#") else plotly.colors.unlabel_rgb(colour)
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_router_marks_read_on_every_cell_colour():
    """The chosen experts' dots were near-black text: on the darkest cells (the experts the router picks, p near 1)
    they all but vanished. Each mark is now white ringed in near-black: on every colour of the map's scale its fill
    or its ring stands out at 3:1 (WCAG's contrast for graphics) or more."""
    fig = vmoe.router_heatmap(VIEW, t)
    heat, *marks = fig.data
    assert heat.text is None and heat.texttemplate is None  # no second, text mark under the markers
    cell_colours = [c for _, c in heat.colorscale]
    for trace in marks:
        fill, ring = trace.marker.color, trace.marker.line.color
        assert trace.marker.line.width >= 1 and trace.marker.size >= 8 and trace.hoverinfo == "skip"
        for cell in cell_colours:
            assert max(contrast(fill, cell), contrast(ring, cell)) >= 3, cell
        assert contrast(fill, ring) >= 3  # the ring tells the mark's edge from its fill


def test_load_figure_has_the_uniform_and_capacity_lines():
    fig = vmoe.load_figure(VIEW, t)
    (bar,) = fig.data
    np.testing.assert_allclose(bar.y, np.round(VIEW.load, 4))
    assert bar.name == t("balanced_short") and sum(bar.y) == np.round(VIEW.load, 4).sum()
    lines = sorted(s.y0 for s in fig.layout.shapes)
    assert lines == sorted([1 / E, VIEW.capacity_share])
    assert fig.layout.yaxis.title.text == t("share_axis") and fig.layout.xaxis.title.text == t("expert_axis")
    assert list(bar.x) == ["0", "1", "2", "3"] and "expert %{x}: " in bar.hovertemplate
    assert fig.layout.title.text == t("load_title", layer=0, k=K)


def test_compare_figure_one_series_per_checkpoint():
    fig = vmoe.compare_figure(VIEW, t)
    assert [b.name for b in fig.data] == [t("balanced_short"), t("collapsed_short")]
    np.testing.assert_allclose(fig.data[1].y, np.round(VIEW.load_by_variant["collapsed"], 4))
    assert fig.layout.barmode == "group"


def test_entropy_bars_stop_at_log_e():
    fig = vmoe.entropy_bars(VIEW, t)
    (bar,) = fig.data
    np.testing.assert_allclose(bar.x, np.round(VIEW.entropy, 3))
    assert bar.orientation == "h" and len(bar.y) == T
    (line,) = fig.layout.shapes
    assert math.isclose(line.x0, math.log(E))
    # the line stands near the right edge: its words end at it (centred on it, they ran past a phone's figure)
    (words,) = fig.layout.annotations
    assert words.xanchor == "right" and words.x == line.x0
    assert fig.layout.xaxis.title.text == t("entropy_axis")


def test_dropped_curve_over_capacity_factors():
    fig = vmoe.dropped_curve(VIEW, t)
    (curve,) = fig.data
    np.testing.assert_allclose(curve.x, np.round(VIEW.factors, 3))
    np.testing.assert_allclose(curve.y, np.round(VIEW.dropped_by_factor, 4))
    assert [s.x0 for s in fig.layout.shapes] == [0.5]
    assert fig.layout.xaxis.title.text == t("drop_x") and fig.layout.yaxis.title.text == t("drop_y")


def test_category_heatmap_is_expert_rows_by_category_columns():
    shares = np.array([[0.5, 0.5], [1.0, 0.0], [0.2, 0.8], [0.0, 0.0]])
    view = cv.Specialisation("collapsed", 1, ["noun", "special"], shares, shares * 2, [], [0.25] * 4, 10)
    fig = vmoe.category_heatmap(view, t)
    (heat,) = fig.data
    np.testing.assert_allclose(np.array(heat.z, dtype=float), shares, atol=1e-6)
    # the categories in the reader's words: core's identifiers ('special') were English on every page
    assert list(heat.x) == [t("category_noun"), t("category_special")] and list(heat.y) == ["0", "1", "2", "3"]
    assert fig.layout.xaxis.title.text == t("category_axis") and fig.layout.yaxis.title.text == t("expert_axis")
    assert fig.layout.title.text == t("spec_title", ckpt=t("collapsed_short"), layer=1)


def test_layer_load_heatmap_and_loss_curves():
    loads = np.array([[0.25, 0.25, 0.25, 0.25], [0.5, 0.0, 0.5, 0.0], [0.4, 0.1, 0.3, 0.2]])
    summary = cv.CheckpointSummary(2.1, loads, 0.0, 0.5, [0, 10, 20], [3.0, 2.5, 2.2])
    view = cv.Comparison({"balanced": summary}, E, 1 / E, balance_bounds(E, K))
    fig = vmoe.layer_load_heatmap(view, t, "balanced")
    (heat,) = fig.data
    np.testing.assert_allclose(np.array(heat.z, dtype=float), loads, atol=1e-6)
    assert list(heat.x) == ["0", "1", "2", "3"] and "expert %{x}: " in heat.hovertemplate
    assert heat.zmax == 1 / K  # top-k routing caps a share at 1/k
    # the layers' numbers down the side, the axis titled 'layer', the hover naming it: 'layer 0' as each row's label
    # left the cells beside the other checkpoint's map too narrow for their '12.5%' (7 px at 392 px)
    assert list(heat.y) == ["0", "1", "2"] and heat.hovertemplate.startswith("layer %{y}, expert %{x}: ")
    assert fig.layout.xaxis.title.text == t("expert_axis") and fig.layout.yaxis.title.text == t("layer_axis")
    curves = vmoe.loss_curves(view, t)
    (line,) = curves.data
    assert list(line.x) == [0, 10, 20] and list(line.y) == [3.0, 2.5, 2.2] and line.name == t("balanced_short")
    assert curves.layout.xaxis.title.text == t("step_axis") and curves.layout.yaxis.title.text == t("loss_axis")


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_expert_axes_labels_lie_flat_in_a_phones_columns(lang):
    """Eight experts across a 390 px phone's map leave about 20 px a column: 'エキスパート 3' stood on end there and
    crowded. Each expert axis shows numbers (under 20 px of 12 px type by viz.labels' guess) and its title names
    them, in every language."""
    words = functools.partial(i18n.text, lang, "moe.figure")
    loads = np.full((3, E), 1 / E)
    comparison = cv.Comparison({"balanced": cv.CheckpointSummary(2.1, loads, 0.0, 0.5, [0], [3.0])}, E, 1 / E,
                               balance_bounds(E, K))  # fmt: skip
    shares = cv.Specialisation("balanced", 1, ["noun"], np.ones((E, 1)), np.ones((E, 1)), [], [0.25] * E, 10)
    axes = [
        (vmoe.router_heatmap(VIEW, words), "x"),
        (vmoe.load_figure(VIEW, words), "x"),
        (vmoe.compare_figure(VIEW, words), "x"),
        (vmoe.layer_load_heatmap(comparison, words, "balanced"), "x"),
        (vmoe.category_heatmap(shares, words), "y"),
    ]
    for fig, axis in axes:
        ticks = [label for trace in fig.data for label in trace[axis]]
        assert all(label_columns(x) * COLUMN_EM * FONT_PX < 20 for x in ticks), ticks
        assert fig.layout[axis + "axis"].title.text.startswith(words("expert_axis"))


def test_the_share_maps_label_their_cells_to_the_decimals_they_hover_and_say():
    """/moe's share maps labelled each cell 13% beside a hover and a caption of 12.5%: a share drawn in % is labelled,
    hovered and said to one decimal (core.figure_text.percent_decimals reads the hover the caption says)."""
    import re

    from core.figure_text import percent_decimals

    loads = np.array([[0.125, 0.375, 0.25, 0.25]])
    comparison = cv.Comparison({"balanced": cv.CheckpointSummary(2.1, loads, 0.0, 0.5, [0], [3.0])}, E, 1 / E,
                               balance_bounds(E, K))  # fmt: skip
    shares = cv.Specialisation("balanced", 1, ["noun"], np.full((E, 1), 0.125), np.ones((E, 1)), [], [0.25] * E, 10)
    for fig in (vmoe.layer_load_heatmap(comparison, t, "balanced"), vmoe.category_heatmap(shares, t)):
        (heat,) = fig.data
        labels = [label for row in heat.text for label in row]
        assert heat.texttemplate == "%{text}" and "12.5%" in labels, labels
        assert all(re.fullmatch(r"\d+\.\d%", label) for label in labels), labels
        assert percent_decimals(heat.to_plotly_json()) == 1, heat.hovertemplate


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_specialisation_sentence_says_the_share_its_map_labels(lang):
    """Under the specialisation map, 'noun is 13% of its tokens' stood beside the cell's 12.5%: the page says the
    share to the map's decimal, in every language."""
    said = i18n.text(lang, "moe", "spec_line", e=0, cat="noun", share=0.125, lift=1.5, load=0.25)
    assert "12.5%" in said and "13%" not in said, said
