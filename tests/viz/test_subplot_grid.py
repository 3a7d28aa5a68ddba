"""viz.heatmap.subplot_grid: make_subplots' layout made once per grid, handed out as a fresh copy, with each
subplot's axes named as plotly's own get_subplot names them."""

from __future__ import annotations

from plotly.subplots import make_subplots

from viz.heatmap import subplot_grid
from viz.multi_head import GRID


def test_the_grid_is_make_subplots_own_and_names_every_subplots_axes():
    titles = ["<b>x</b>", "q", "k", "v", "A", "Z", "concat", "out"]
    layout, axes = subplot_grid(**GRID, subplot_titles=titles)
    fig = make_subplots(**GRID, subplot_titles=titles)
    assert layout == fig.layout.to_plotly_json()
    # the spans of /multi-head's chain: 8 panels over 5 x 3 cells, the covered cells have none
    assert axes == {
        (r, c): (fig.get_subplot(r, c).xaxis.plotly_name, fig.get_subplot(r, c).yaxis.plotly_name)
        for r, c in [(1, 1), (2, 1), (2, 2), (2, 3), (3, 1), (3, 2), (4, 1), (5, 1)]
    }
    assert axes[5, 1] == ("xaxis8", "yaxis8")


def test_a_caller_fills_its_own_copy_and_keep_takes_only_the_entries_named():
    first, _ = subplot_grid(rows=1, cols=2, subplot_titles=["a", "b"])
    first["xaxis"]["title"] = {"text": "changed"}
    first["annotations"][0]["text"] = "changed"
    again, _ = subplot_grid(rows=1, cols=2, subplot_titles=["a", "b"])
    assert "title" not in again["xaxis"] and again["annotations"][0]["text"] == "a"
    axes_only, _ = subplot_grid(("xaxis", "yaxis"), rows=1, cols=2, subplot_titles=["a", "b"])
    assert sorted(axes_only) == ["xaxis", "xaxis2", "yaxis", "yaxis2"]
