"""viz/transformer_xl.py read back: the five masks as drawn, and a lines figure's title, axes and lines from the
[transformer_xl.figure] words."""

import numpy as np

from app import i18n
from core import transformer_xl as tx
from viz import transformer_xl as vx


def words(key, **fmt):
    return i18n.text("en", "transformer_xl.figure", key, **fmt)


def test_masks_figures_draw_each_mask_cell_for_cell():
    view = tx.masks_view()
    figs = vx.masks_figures(view, words)
    assert list(figs) == list(tx.METHODS)
    for m, fig in figs.items():
        assert fig.layout.title.text == words(f"method_{m}")
        # queries down, keys across every mask
        assert fig.layout.yaxis.title.text == words("query") and fig.layout.xaxis.title.text == words("key")
        # square cells shrink the plot from its foot (at 390 px the rows' range was stretched to -10..20)
        assert (fig.layout.yaxis.constrain, fig.layout.yaxis.constraintoward) == ("domain", "top")
        assert fig.layout.xaxis.constrain == "domain" and fig.layout.xaxis.scaleanchor == "y"
        (trace,) = fig.data
        np.testing.assert_array_equal(np.asarray(trace.z), view.masks[m].astype(np.float32))
        # hidden cells are told by a cross as well as by colour; cells a query may attend carry nothing
        np.testing.assert_array_equal(np.array(trace.text), np.where(view.masks[m], "", "✕"))
        assert trace.texttemplate == "%{text}"


def test_lines_figure_reads_back_its_view():
    view = tx.reach_view(1024, 16, 16, 4, 30)
    fig = vx.lines_figure(view.lines, words)
    assert fig.layout.title.text == "Positions that can reach the last of 1,024 tokens, through 1 … 30 layers"
    assert fig.layout.xaxis.title.text == words("layers_axis") and fig.layout.yaxis.title.text == words("reach_axis")
    assert [t.name for t in fig.data] == [words(f"method_{m}") for m in tx.METHODS]
    assert list(fig.data[1].y) == list(view.lines.series["xl"]) and list(fig.data[1].x) == list(range(1, 31))


def test_each_mask_is_as_tall_as_its_blocks_width_draws_it():
    """The five masks in one figure shared its width on any screen: 55 px each on a 390 px phone, too small for their
    crosses, in a plot plotly keeps 64 px tall at least, 35-37% of it drawn (at 1,366 px 58%; chromium,
    scripts/phone_layout_check.py). Each in its own block (app/ui.beside), as wide as MASKS_PER_LINE side by side
    (256 px, three on a line of a 1,280 px window), each mask is as wide as its block leaves it beside its rows'
    numbers and title, a cell 1.5 times its 9 px cross's type (14 px), and its plot as tall as that
    (viz.labels.for_page: a block's width is the width it is drawn at) and three lines under it for the keys' numbers
    and title."""
    from viz.labels import AXIS_TITLE_LINE, COLUMN_EM, FONT_PX, Y_LABELS_GAP, beside_px, for_page

    block = beside_px(vx.MASKS_PER_LINE)
    beside = 2 * COLUMN_EM * FONT_PX + Y_LABELS_GAP + AXIS_TITLE_LINE + Y_LABELS_GAP  # '11' and 'query'
    for fig in vx.masks_figures(tx.masks_view(), words).values():
        layout = for_page(fig.to_dict(), block)["layout"]
        margin = layout["margin"]
        drawn = block - margin["l"] - margin["r"] - beside
        assert drawn / 12 >= 1.5 * fig.data[0].textfont.size
        plot = layout["height"] - margin["t"] - margin["b"]
        assert drawn + 3 * AXIS_TITLE_LINE <= plot <= drawn + 3 * AXIS_TITLE_LINE + 1


def test_a_binned_lines_figure_draws_each_methods_means_over_its_points_faint():
    """Five methods' losses on one text, position by position, rise and fall together and cross at every step (the
    256 positions within a segment): one line of means per method, in the legend; its points a faint line of the
    same colour under it, out of the legend and the caption; the note under the title says what the numbers say."""
    view = tx.measured_view().by_segment
    fig = vx.lines_figure(view, words)
    x, means = view.binned()
    drawn = [t for t in fig.data if t.showlegend is not False]
    faint = [t for t in fig.data if t.showlegend is False]
    assert [t.name for t in drawn] == [t.name for t in faint] == [words(f"method_{m}") for m in tx.METHODS]
    for m, line, points in zip(tx.METHODS, drawn, faint, strict=True):
        assert list(line.x) == list(x) and list(line.y) == list(means[m]) and len(line.y) == 16
        assert list(points.y) == list(view.series[m]) and points.hoverinfo == "skip"
        assert points.opacity < 0.5 and points.line.color == line.line.color and points.legendgroup == m
    assert fig.layout.title.subtitle.text == words("by_segment_note", **view.note_fields)
    assert "+2.05" in fig.layout.title.subtitle.text


def test_an_unbinned_lines_figure_draws_its_points_alone():
    """The live rerun's few blocks (view.bin 1): its lines are its points, no faint line, no note."""
    view = tx.LinesView("by_block", (8.0, 24.0), {m: (3.0, 2.5) for m in tx.METHODS}, {"block": 16})
    fig = vx.lines_figure(view, words)
    assert len(fig.data) == len(tx.METHODS) and list(fig.data[0].y) == [3.0, 2.5]
    assert not fig.layout.title.subtitle.text
