"""viz/grid.py: the model view's grid of head thumbnails (through viz.attention.figure of core.attention.grid_view
on a fake trace), read back: one tile per head with its block means and name, the key/value head of each query
head, the same figure through plotly's validators; and a click on a tile maps back to its (layer, head)."""

import functools
import json
import math

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from app import i18n
from core import attention
from tests.fake_traces import fake_trace
from viz import attention as figures
from viz.grid import BAR_BELOW, GAP, head_grid, tile_of_point
from viz.labels import LAPTOP_FIGURE_PX, PHONE_FIGURE_PX, for_page

english = functools.partial(i18n.text, "en", "attention.figure")
WORDS = dict(layer_label="layer", head_label="head", value_name="weight")


def test_grid_figure_carries_the_thumbnails_and_names_each_tile():
    t = fake_trace(lengths=(30,), n_layers=2, n_heads=3, n_kv_heads=1)
    fig = figures.figure(attention.grid_view(t, attention.select_tokens(t)), english)
    assert len(fig.data) == 6
    thumbs = attention.thumbnails(t, attention.select_tokens(t), attention.TILE)
    tile = fig.data[4]  # layer 1, head 1
    assert "layer 1, head 1" in tile.hovertemplate
    np.testing.assert_allclose(np.asarray(tile.z, dtype=float), np.round(thumbs[1, 1].numpy(), 3), atol=1e-6)
    assert "kv0" in fig.layout.xaxis.ticktext[2]  # GQA: which key/value head each query head reads
    # head_grid skips plotly's validators for speed: with them on, the same figure is accepted and unchanged
    checked = go.Figure(fig.to_dict())  # raises ValueError on an unknown property or a bad value
    assert json.loads(pio.to_json(checked, validate=False)) == json.loads(pio.to_json(fig, validate=False))


def test_a_click_on_a_tile_opens_that_head():
    """Streamlit reports a click on the model view as a selection point: its x, y (tile units) or its trace
    number map back to the tile's (layer, head); points outside every tile map to nothing."""
    t = fake_trace(lengths=(30,), n_layers=2, n_heads=3, n_kv_heads=1)
    fig = figures.figure(attention.grid_view(t, attention.select_tokens(t)), english)
    for curve, trace_ in enumerate(fig.data):
        x = trace_.x0 + 5 * trace_.dx  # a cell inside the tile
        y = trace_.y0 + 7 * trace_.dy
        expected = divmod(curve, 3)
        assert tile_of_point({"curve_number": curve, "x": x, "y": y}, 2, 3) == expected
        assert tile_of_point({"curve_number": curve}, 2, 3) == expected
    assert tile_of_point({"x": 1.1, "y": 0.5}, 2, 3) is None  # in the gap between tiles 0 and 1
    assert tile_of_point({"x": 99.0, "y": 0.5}, 2, 3) is None
    assert tile_of_point({}, 2, 3) is None
    # what a crafted click sends (a browser's never does): nothing, not an error on the visitor's page
    for crafted in ({"x": math.nan, "y": 0}, {"x": math.inf, "y": 0.5}, {"x": 0.5, "y": -math.inf}, "0", 3, None,
                    {"curve_number": True}, {"curve_number": -1}, {"x": True, "y": 0.5}):  # fmt: skip
        assert tile_of_point(crafted, 2, 3) is None, crafted


def test_the_colour_bar_lies_under_the_grid_and_leaves_its_width_to_the_tiles():
    """Square tiles take their size from the width a phone leaves the plot: beside the grid, the colour bar took about
    75 px of it and MiniLM's 6 x 12 tiles came 14 px apart at 390 px, closer than their 16 px layer numbers
    (chromium, ja with a long text). Under the grid it takes none; the grid sits just above it, the plot keeps its
    height, and the figure's foot holds the bar."""
    fig = head_grid(np.full((6, 12, 4, 4), 0.25), "t", **WORDS)
    bar = fig.layout.coloraxis.colorbar
    assert bar.orientation == "h" and bar.y <= 0 and bar.yanchor == "top"
    assert fig.layout.margin.b >= BAR_BELOW and fig.layout.yaxis.constraintoward == "bottom"
    plot_px = 358 - fig.layout.margin.l - fig.layout.margin.r  # a phone's figure less the layer numbers' margin
    assert plot_px / (12 * (1 + GAP) - GAP) >= 16 + 2  # px from one layer number to the next (282 px: chromium)


def test_a_phones_model_view_is_as_tall_as_chromium_draws_its_grid():
    """Square tiles take their size from the phone's width, and the plot stood taller than the grid they make: MiniLM's
    6 x 12 grid was drawn 282 x 141 px at 390 px (chromium, the layer numbers and their title 66 px left of it) in a
    plot 480 px tall, 340 px blank above it; SmolLM2's 30 x 9, two-digit numbers, 276 x 920 in 1,034. Fitted to a
    phone, the plot is the grid's height and keeps the head numbers' room above it and the colour bar's below."""
    for (layers, heads), drawn_px in (((6, 12), 141), ((30, 9), 920)):
        fig = head_grid(np.full((layers, heads, 4, 4), 0.25), "t", **WORDS)
        phone = for_page(fig.to_dict(), PHONE_FIGURE_PX)["layout"]
        margin = phone["margin"]
        assert abs(phone["height"] - margin["t"] - margin["b"] - drawn_px) <= 8, (layers, heads)
        assert (
            margin["b"] >= BAR_BELOW
            and margin["t"] == for_page(fig.to_dict(), LAPTOP_FIGURE_PX)["layout"]["margin"]["t"]
        )


def test_a_laptops_model_view_takes_the_same_share_of_its_room_at_1100_and_1366_px():
    """A laptop's figure is drawn 640 px wide in a 1,100 px window and 906 px in a 1,366 px one (chromium). Fitted for
    1,366 px, MiniLM's 6 x 12 grid, drawn 564 x 282 px at 1,100 (the layer numbers and their title 56 px left of it),
    stood in a plot 480 px tall: 59% of it, 198 px blank above the grid (scripts/phone_layout_check.py). Fitted for
    the middle, it takes 82% of its height at 1,100 px and, as tall as fitted at 1,366 px, 82% of its plot's width
    there (its labels keep their room in the margin); neither end more than the other."""
    fig = head_grid(np.full((6, 12, 4, 4), 0.25), "t", **WORDS)
    laptop = for_page(fig.to_dict(), LAPTOP_FIGURE_PX)["layout"]
    margin = laptop["margin"]
    plot = laptop["height"] - margin["t"] - margin["b"]
    ratio = (6 * (1 + GAP)) / (12 * (1 + GAP))  # the grid's height to its width: its y range to its x range
    at_1100 = (640 - margin["l"] - margin["r"]) * ratio / plot  # the grid as wide as its plot: of the plot's height
    at_1366 = plot / ratio / (906 - margin["l"] - margin["r"])  # as tall as its plot: of the plot's width
    assert 0.8 < min(at_1100, at_1366) and abs(at_1100 - at_1366) < 0.01, (at_1100, at_1366)
    assert abs(margin["l"] - 10 - 56) <= 2  # the layer numbers and their title's room (564 px of 640 drawn: chromium)
