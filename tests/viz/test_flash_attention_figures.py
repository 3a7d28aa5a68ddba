"""viz/flash_attention.py: each figure built from a small core.flash_attention view and read back from its trace data
(values, shapes, axis titles: query rows against key columns, the tile outlines, the log-log traffic curves)."""

import functools

import numpy as np
import pytest

from app import i18n
from core import flash_attention as fa
from viz import flash_attention as fv

t = functools.partial(i18n.text, "en", "flash_attention.figure")


def test_tiles_figure_is_the_finished_weights_with_query_rows_and_key_columns():
    view = fa.walk(n=7, d=3, br=3, bc=2, q_tile=1, causal=True)
    fig = fv.tiles_figure(view, t, 1)
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (7, 7) and fig.data[0].type == "heatmap"
    np.testing.assert_allclose(z[view.allowed], np.round(view.weights, 3)[view.allowed], atol=1e-9)
    assert np.isnan(z[~view.allowed]).all()  # masked cells are left to the grey layer
    assert list(fig.data[0].x) == list(fig.data[0].y) == [str(i) for i in range(7)]
    assert fig.layout.xaxis.title.text == "key" and fig.layout.yaxis.title.text == "query"
    assert fig.layout.title.text == t("tiles_title", br=3, bc=2)
    # the walked query tile (rows 3..5) outlined over every key: a rectangle spanning all columns
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert any(r.y0 == 2.5 and r.y1 == 5.5 and r.x0 == -0.5 and r.x1 == 6.5 for r in rects)
    # one dotted line between consecutive tiles: 3 key-tile and 2 query-tile borders
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert len(lines) == (len(view.key_tiles) - 1) + (len(view.query_tiles) - 1)


def test_statistics_figure_draws_m_and_l_per_row_of_the_query_tile():
    view = fa.walk(n=6, d=2, br=3, bc=2, q_tile=0)
    fig = fv.statistics_figure(view, t, 2)
    rows = view.queries[1] - view.queries[0]
    assert len(fig.data) == 2 * rows and {tr.type for tr in fig.data} == {"scatter"}
    first_m, first_l = fig.data[0], fig.data[1]
    assert first_m.name == first_l.name == t("row", i=0)
    np.testing.assert_allclose(first_m.y, [float(s.m[0]) for s in view.steps])
    np.testing.assert_allclose(first_l.y, [float(s.l[0]) for s in view.steps])
    assert [a.text for a in fig.layout.annotations] == [t("m_title"), t("l_title")]
    assert fig.layout.xaxis.title.text == fig.layout.xaxis2.title.text == t("step_axis")
    # the rows' legend at the figure's foot, under both panels' axis titles (at 390 px in ja it lay over them)
    assert (fig.layout.legend.yref, fig.layout.legend.y, fig.layout.legend.yanchor) == ("container", 0, "bottom")


def test_output_figure_is_the_partial_output_of_the_step():
    view = fa.walk(n=5, d=3, br=2, bc=2, q_tile=1)
    fig = fv.output_figure(view, t, 0)
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (2, 3)
    np.testing.assert_allclose(z, np.round(view.steps[0].output, 2), atol=1e-6)  # 2 decimals, float32 in the figure
    assert list(fig.data[0].y) == ["2", "3"] and list(fig.data[0].x) == ["0", "1", "2"]
    assert fig.layout.xaxis.title.text == t("dim_axis") and fig.layout.yaxis.title.text == t("query_axis")


def test_traffic_figure_has_five_curves_on_log_axes_and_marks_n():
    view = fa.traffic_view(n=1024, d=64, m_sram=4096)
    fig = fv.traffic_figure(view, t)
    assert len(fig.data) == 5
    assert fig.data[0].name == t("series_naive")
    np.testing.assert_allclose(fig.data[0].x, view.sizes)
    np.testing.assert_allclose(fig.data[0].y, view.curves["naive"])
    assert [tr.line.dash for tr in fig.data] == ["solid", "solid", "solid", "dot", "dot"]
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.title.text == t("traffic_axis")
    assert [s.x0 for s in fig.layout.shapes if s.type == "line"] == [1024]


LOG_SCALE = {"en": "log scale", "ja": "対数目盛", "ko": "로그 눈금"}


@pytest.mark.parametrize("lang", sorted(LOG_SCALE))
def test_traffic_figure_says_both_axes_are_logarithmic_and_what_n_counts(lang):
    # the page compares the curves' slopes with Theta(n^2 d^2 / M): read on axes not said to be logarithmic, the
    # curves' bends say nothing of it. The lengths' axis was a bare 'n', in no language, without its unit.
    words = functools.partial(i18n.text, lang, "flash_attention.figure")
    layout = fv.traffic_figure(fa.traffic_view(n=1024, d=64, m_sram=4096), words).layout
    assert layout.xaxis.type == layout.yaxis.type == "log"
    assert layout.xaxis.title.text == words("n_axis") and layout.yaxis.title.text == words("traffic_axis")
    assert all(LOG_SCALE[lang] in axis.title.text for axis in (layout.xaxis, layout.yaxis))
