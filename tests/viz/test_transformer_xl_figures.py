"""viz/transformer_xl.py read back: the five masks as drawn, and a lines figure's title, axes and lines from the
[transformer_xl.figure] words."""

import numpy as np

from app import i18n
from core import transformer_xl as tx
from viz import transformer_xl as vx


def words(key, **fmt):
    return i18n.text("en", "transformer_xl.figure", key, **fmt)


def test_masks_figure_draws_each_mask_cell_for_cell():
    view = tx.masks_view()
    fig = vx.masks_figure(view, words)
    assert [a.text for a in fig.layout.annotations] == [words(f"method_{m}") for m in tx.METHODS]
    # queries down (titled once, beside the only row labels), keys across every mask
    assert fig.layout.yaxis.title.text == words("query") and not fig.layout.yaxis2.title.text
    x_axes = ["xaxis"] + [f"xaxis{k}" for k in range(2, len(tx.METHODS) + 1)]
    assert [fig.layout[x].title.text for x in x_axes] == [words("key")] * len(tx.METHODS)
    # square cells shrink a narrow panel from its foot (at 390 px the rows' range was stretched to -10..20)
    y_axes = ["yaxis"] + [f"yaxis{k}" for k in range(2, len(tx.METHODS) + 1)]
    assert {(fig.layout[y].constrain, fig.layout[y].constraintoward) for y in y_axes} == {("domain", "top")}
    assert {fig.layout[x].constrain for x in x_axes} == {"domain"}
    for trace, m in zip(fig.data, tx.METHODS):
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


def test_the_five_masks_figure_is_as_tall_as_a_phones_or_a_tablets_width_draws_its_maps():
    """Five square maps side by side are as tall as their panel is wide: in a 300 px figure drawn 468 px wide they
    took 28% of the plot's height, the rest blank under them (chromium, results/tablet_layout.json). Fitted for a
    phone's or a tablet's figure (viz.labels.for_page) the plot keeps the maps' height (each panel's share of what is
    left beside the rows' numbers and title, 72 px at least) and two lines under them for the keys' numbers and
    title (three lines: they push the bottom margin further than two); a laptop's, drawn 640 to 906 px wide, as tall as
    the middle of those draws them (viz.labels.scaled_plot_px)."""
    from viz.labels import AXIS_TITLE_LINE, COLUMN_EM, FONT_PX, LAPTOP_FIGURE_PX, Y_LABELS_GAP, for_page, scaled_plot_px

    for width in (358, 468, LAPTOP_FIGURE_PX):
        layout = for_page(vx.masks_figure(tx.masks_view(), words).to_dict(), width)["layout"]
        margin = layout["margin"]
        beside = 2 * COLUMN_EM * FONT_PX + Y_LABELS_GAP + AXIS_TITLE_LINE + Y_LABELS_GAP  # '11' and 'query'
        share = layout["xaxis"]["domain"][1] - layout["xaxis"]["domain"][0]
        maps = scaled_plot_px(width, beside, margin["l"] + margin["r"]) * share
        plot = layout["height"] - margin["t"] - margin["b"]
        # at least plotly's least plot (64 px) and a little: a shorter one sets the panels' titles past the top
        kept = max(maps, 64 + 8) + 3 * AXIS_TITLE_LINE
        assert kept <= plot <= kept + 1, width
