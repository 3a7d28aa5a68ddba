"""A figure's text alternative, as numbers: strongest cells, bars and lines, against hand-worked figures."""

import base64

import numpy as np
import pytest

from core.figure_text import (
    MAX_SERIES,
    OVERLAY,
    BarText,
    Cell,
    LineText,
    Point,
    PointsText,
    axis_in_percent,
    describe,
    in_percent,
    maps_in_percent,
    percent_decimals,
    strongest_cells,
)


def test_largest_cells_first_named_by_their_labels():
    weights = np.array([[0.1, 0.9, 0.0], [0.6, 0.3, 0.1]])  # rows: queries, columns: keys
    cells = strongest_cells(weights, ["it", "cat"], ["the", "cat", "mat"])
    assert cells == [Cell("it", "cat", 0.9), Cell("cat", "the", 0.6), Cell("cat", "cat", 0.3)]


def test_masked_cells_are_never_named_and_ties_keep_reading_order():
    scores = np.array([[np.nan, 2.0], [2.0, -np.inf]])
    assert strongest_cells(scores, k=3) == [Cell("0", "1", 2.0), Cell("1", "0", 2.0)]


def test_one_dimension_is_refused():
    with pytest.raises(ValueError):
        strongest_cells(np.ones(3))


# --- any figure, read from its traces ------------------------------------------------------------------------


def test_bars_name_the_largest_and_the_smallest_bar():
    """Hand-made bars: 'b' is the largest (0.5), 'c' the smallest (0.1); a horizontal bar's categories are its y."""
    told = describe([{"type": "bar", "name": "soft", "x": ["a", "b", "c"], "y": [0.4, 0.5, 0.1]}])
    assert told.statements == [BarText("soft", 3, Point("b", 0.5), Point("c", 0.1))]
    sideways = describe([{"type": "bar", "orientation": "h", "y": ["a", "b"], "x": [3.0, -2.0]}])
    assert sideways.statements == [BarText("", 2, Point("a", 3.0), Point("b", -2.0))]


def test_lines_name_start_end_highest_and_lowest_and_skip_gaps():
    """y = (x - 2)² on x = 0..4 with a gap at x = 1: starts at 4, ends at 4, lowest 0 at x = 2, highest the first 4."""
    trace = {"type": "scatter", "mode": "lines", "name": "loss", "x": [0, 1, 2, 3, 4], "y": [4, None, 0, 1, 4]}
    (line,) = describe([trace]).statements
    assert line == LineText("loss", 4, Point("0", 4.0), Point("4", 4.0), Point("0", 4.0), Point("2", 0.0))


def test_points_drawn_without_a_line_are_told_by_count_lowest_and_highest_not_as_a_line():
    """A scatter of dots (mode 'markers') has no path from its first point to its last: /ablation's placebo draws lie
    in the order they were drawn. Told: how many, the lowest and the highest, and the one row they share if they do;
    a line with markers on it is still a line."""
    draws = {"type": "scatter", "mode": "markers", "name": "placebo", "x": [0.3, -0.1, 0.5, 0.2], "y": ["p"] * 4}
    (told,) = describe([draws]).statements
    assert told == PointsText("placebo", 4, Point("p", -0.1), Point("p", 0.5), "p")
    measured = {"type": "scatter", "mode": "markers", "x": [128, 256, 512], "y": [2.0, 1.0, 4.0]}
    (told,) = describe([measured]).statements
    assert told == PointsText("", 3, Point("256", 1.0), Point("512", 4.0), None)
    (line,) = describe([measured | {"mode": "lines+markers"}]).statements
    assert isinstance(line, LineText) and (line.first, line.last) == (Point("128", 2.0), Point("512", 4.0))


def test_browser_json_arrays_and_tick_texts_are_read():
    """The figure as the browser gets it: base64 arrays, and a heatmap drawn at 0..n-1 named by its axis' tick texts."""
    z = np.array([[0.1, 0.7], [0.2, 0.0]], dtype=np.float32)
    encoded = {"dtype": "f4", "bdata": base64.b64encode(z.tobytes()).decode(), "shape": "2, 2"}
    layout = {"xaxis": {"tickvals": [0, 1], "ticktext": ["the", "cat"]}, "yaxis": {"tickvals": [0, 1],
              "ticktext": ["it", "was"]}}  # fmt: skip
    (cells,) = describe([{"type": "heatmap", "z": encoded}], layout).statements
    assert cells.cells[0] == Cell("it", "cat", pytest.approx(0.7))
    assert cells.tiles == ["", "", ""]
    # a tick text drawn in lines is read in one
    layout["yaxis"]["ticktext"] = ["it", "was<br>tired"]
    (cells,) = describe([{"type": "heatmap", "z": [[0.1, 0.2], [0.9, 0.0]]}], layout).statements
    assert cells.cells[0] == Cell("was tired", "the", pytest.approx(0.9))


def test_thumbnails_name_the_tile_of_each_strongest_cell():
    """Two tiles: the largest cells over both, each with its tile's name."""
    tiles = [
        {"type": "heatmap", "name": "layer 0, head 0", "z": [[0.2, 0.8], [0.5, 0.5]]},
        {"type": "heatmap", "name": "layer 0, head 1", "z": [[0.9, 0.1], [0.3, 0.7]]},
    ]
    (told,) = describe(tiles, k=3).statements
    assert told.cells == [Cell("0", "0", 0.9), Cell("0", "1", 0.8), Cell("1", "1", 0.7)]
    assert told.tiles == ["layer 0, head 1", "layer 0, head 0", "layer 0, head 1"]


def test_decoration_and_empty_traces_are_not_told_and_series_past_the_cap_are_counted():
    decoration = {"type": "scatter", "x": [0, 1], "y": [5, 6], "hoverinfo": "skip"}  # a band, a reference circle
    legend_square = {"type": "scatter", "x": [None], "y": [None], "mode": "markers"}
    labels = {"type": "scatter", "x": [0], "y": [1], "mode": "text"}
    lines = [{"type": "scatter", "name": f"s{i}", "x": [0, 1], "y": [i, i + 1]} for i in range(MAX_SERIES + 2)]
    told = describe([decoration, legend_square, labels, *lines])
    assert [s.series for s in told.statements] == [f"s{i}" for i in range(MAX_SERIES)]
    assert told.more == 2
    assert describe([{"type": "heatmap", "z": [[1.0]]}], maps=False).statements == []


def test_a_large_map_names_the_same_cells_as_a_full_sort():
    """512 x 512 with ties and masked cells: the partial sort names what sorting every cell names."""
    rng = np.random.default_rng(0)
    m = np.round(rng.random((512, 512)), 2)  # many ties
    m[rng.random(m.shape) < 0.3] = np.nan
    flat = np.where(np.isfinite(m), m, -np.inf).ravel()
    order = np.argsort(-flat, kind="stable")[:5]
    expected = [Cell(str(i // 512), str(i % 512), float(flat[i])) for i in order]
    assert strongest_cells(m, k=5) == expected


def test_text_among_a_lines_numbers_is_not_a_point():
    (line,) = describe([{"type": "scatter", "x": [1, 2, 3], "y": ["n/a", 3, 1]}]).statements
    assert (line.points, line.first, line.lowest) == (2, Point("2", 3.0), Point("3", 1.0))


def test_a_map_names_the_axes_of_its_strongest_cells_panel():
    """A map in a grid's second panel (xaxis2/yaxis2): the caption must read that panel's axis titles."""
    traces = [
        {"type": "heatmap", "z": [[0.1]], "xaxis": "x", "yaxis": "y"},
        {"type": "heatmap", "z": [[0.9]], "xaxis": "x2", "yaxis": "y2"},
    ]
    (told,) = describe(traces).statements
    assert told.axes == ("yaxis2", "xaxis2") and told.cells[0].value == 0.9
    (alone,) = describe(traces[:1]).statements
    assert alone.axes == ("yaxis", "xaxis")


def test_the_unit_of_a_traces_values_is_the_format_its_figure_draws_them_in():
    """A figure that draws shares in % ('.0%': 0.632 drawn 63%) says so in its colour bar's or its value axis's tick
    format: a map's by its colour bar (its own or its colour axis's), a bar's or a line's by the axis its values
    stand along (x for horizontal bars), on its own panel."""
    layout = {"yaxis": {"tickformat": ".0%"}, "xaxis2": {"tickformat": ".1%"}, "yaxis2": {"tickformat": ".2f"},
              "coloraxis": {"colorbar": {"tickformat": ".0%"}}}  # fmt: skip
    assert in_percent({"type": "heatmap", "z": [[0.5]], "colorbar": {"tickformat": ".0%"}})
    assert not in_percent({"type": "heatmap", "z": [[0.5]], "colorbar": {"thickness": 12}})
    assert in_percent({"type": "heatmap", "z": [[0.5]], "coloraxis": "coloraxis"}, layout)
    assert in_percent({"type": "bar", "y": [0.5]}, layout) and in_percent({"type": "scatter", "y": [0.5]}, layout)
    assert not in_percent({"type": "bar", "x": [0.5], "orientation": "h"}, layout)  # its values stand along x
    assert in_percent({"type": "bar", "x": [0.5], "orientation": "h", "xaxis": "x2", "yaxis": "y2"}, layout)
    assert not in_percent({"type": "scatter", "y": [0.5], "xaxis": "x2", "yaxis": "y2"}, layout)
    assert axis_in_percent(layout, "x2") and axis_in_percent(layout, "y") and not axis_in_percent(layout, "x")
    told = describe([{"type": "bar", "x": ["a", "b"], "y": [0.632, 0.2]}, {"type": "scatter", "y": [1.0, 2.0],
                     "xaxis": "x2", "yaxis": "y2"}, {"type": "heatmap", "z": [[0.5]], "coloraxis": "coloraxis"}],
                    layout)  # fmt: skip
    assert [s.percent for s in told.statements] == [True, False, True]
    overlay = {"type": "heatmap", "z": [[1.0]], "meta": OVERLAY, "colorbar": {"tickformat": ".0%"}}
    assert not maps_in_percent([overlay, {"type": "heatmap", "z": [[0.5]]}])  # the map's own unit, not an overlay's


def test_a_horizontal_figures_values_are_read_from_x_and_its_names_from_y():
    """Dots or bars lying along x (plotly's orientation 'h', or names on y beside numbers on x: /ablation's card) have
    their numbers on x: read from y they were text, nothing was told and the caption said nothing."""
    layout = {"xaxis": {"tickformat": ".1%"}}
    dots = {"type": "scatter", "mode": "markers", "x": [0.01, -0.005, 0.02], "y": ["placebo"] * 3}
    chosen = {"type": "scatter", "mode": "markers", "x": [0.032], "y": ["chosen"], "name": "heads"}
    told = describe([dots, chosen], layout).statements
    assert told[0] == PointsText("", 3, Point("placebo", -0.005), Point("placebo", 0.02), "placebo", True)
    assert told[1] == PointsText("heads", 1, Point("chosen", 0.032), Point("chosen", 0.032), "chosen", True)
    assert in_percent(dots, layout) and not in_percent({"type": "scatter", "x": [0.5], "y": [0.1]}, layout)
    bars = describe([{"type": "bar", "x": [2.0, 5.0], "y": [0, 1], "orientation": "h"}], {}).statements
    assert bars == [BarText("", 2, Point("1", 5.0), Point("0", 2.0))]  # numbers on both axes: orientation decides
    lying = describe([{"type": "scatter", "x": [2.0, 5.0], "y": [0, 1], "orientation": "h"}], {}).statements
    assert lying[0].highest == Point("1", 5.0)
    standing = describe([{"type": "scatter", "x": [2.0, 5.0], "y": [0.0, 1.0]}], {}).statements
    assert standing[0].highest == Point("5", 1.0)  # numbers on both axes, no orientation: a line's values on y
    gaps = describe([{"type": "scatter", "x": [1.0, 2.0], "y": [None, None]}], {})  # nothing to tell, no names on y
    assert gaps.statements == []


def test_a_share_in_percent_is_told_to_the_decimals_its_hover_shows():
    """The hover's format is the figure's word on how finely a share is told ('%{x:.0%}': 63%): the caption says
    what the reader pointing at it sees; one decimal where the hover says none."""
    layout = {"xaxis": {"tickformat": ".0%"}, "yaxis": {"tickformat": ".0%"}}
    bar = {
        "type": "bar",
        "x": [0.632],
        "y": ["a"],
        "orientation": "h",
        "hovertemplate": "%{y}: %{x:.0%} [%{customdata[0]:.2%}]",
    }
    assert percent_decimals(bar) == 0 and describe([bar], layout).statements[0].decimals == 0
    assert percent_decimals(bar | {"hovertemplate": "%{y}<br>%{x:.2%}"}) == 2
    assert percent_decimals({"type": "bar", "x": ["a"], "y": [0.6]}) == 1  # no hover: the pages' one decimal
    assert percent_decimals({"type": "scatter", "x": [1], "y": [0.6], "hovertemplate": "%{x:.0%} %{y:.1%}"}) == 1
    cells = {
        "type": "heatmap",
        "z": [[0.6]],
        "hovertemplate": "%{y}, %{x}: %{z:.3%}",
        "colorbar": {"tickformat": ".0%"},
    }
    assert describe([cells]).statements[0].decimals == 3


def test_a_series_in_a_figure_of_several_panels_is_named_by_its_panels_title():
    """/flash-attention's m and l: a 'row 0' line in each of two panels, told apart by the panel titles
    make_subplots sets above them; a figure of one panel names none."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=["running max m", "running sum l"])
    fig.add_scatter(x=[0, 1], y=[1.0, 2.0], name="row 0", mode="lines", row=1, col=1)
    fig.add_scatter(x=[0, 1], y=[3.0, 5.0], name="row 0", mode="lines", row=1, col=2)
    told = describe([t.to_plotly_json() for t in fig.data], fig.layout.to_plotly_json())
    assert [(s.panel, s.series, s.last.value) for s in told.statements] == [
        ("running max m", "row 0", 2.0),
        ("running sum l", "row 0", 5.0),
    ]
    one = make_subplots(rows=1, cols=1, subplot_titles=["running max m"])
    one.add_scatter(x=[0, 1], y=[1.0, 2.0], name="row 0", mode="lines")
    assert describe([t.to_plotly_json() for t in one.data], one.layout.to_plotly_json()).statements[0].panel == ""
