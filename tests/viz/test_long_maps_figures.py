"""viz/long_maps.py: the long heatmap (log or linear colour, masked cells as gaps, escaped labels, under a megabyte)
and the page's three figures built from core/long_maps/views.py on random q/k (small inputs), read back: values,
query-bin rows and key-bin columns, axis titles, the selected head marked."""

import functools

import numpy as np
import pytest

from app import i18n
from core import long_maps as lm
from core.long_maps import views
from core.pooling import bin_ranges
from viz.long_maps import head_shares_figure, long_heatmap, map_figure, zoom_figure
from viz.style import figure_bytes

t = functools.partial(i18n.text, "en", "long_maps.figure")
Q, K, SCALE = lm.random_qk(60, seed=5, spread=2.0, heads=6, kv_heads=2, head_dim=8)
MAPS = lm.layer_maps(Q, K, SCALE, causal=True, out_size=12)
WORDS = dict(x_title="key", y_title="query", value_name="weight", row_name="queries", col_name="keys", log_name="log")


def test_heatmap_masks_escapes_and_stays_under_a_megabyte():
    assert bin_ranges(np.array([0, 1, 3, 7])) == ["0", "1–2", "3–6"]
    values = np.random.default_rng(0).random((256, 256)) * 1e-3
    masked = np.triu(np.ones((256, 256), dtype=bool), 1)
    labels = [f"{i} <script>" for i in range(256)]
    fig = long_heatmap(values, labels, labels, masked=masked, log_scale=True, **WORDS)
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    assert np.isnan(z[masked]).all() and np.isfinite(z[~masked]).all()
    np.testing.assert_allclose(z[~masked], np.log10(values[~masked]), atol=1e-5)
    assert all("<script>" not in x and "&lt;script&gt;" in x for x in fig.data[0].x)
    assert figure_bytes(fig) < 1_000_000
    linear = long_heatmap(values, labels, labels, masked=masked, log_scale=False, **WORDS)
    np.testing.assert_allclose(np.asarray(linear.data[0].z, dtype=np.float64)[~masked], values[~masked], rtol=1e-6)


def test_map_figure_is_the_views_pooled_values_query_bins_by_key_bins():
    view = views.map_view(MAPS, head=4, stat="max", side=6, n_kv_heads=2)
    fig = map_figure(view, t, "random", 0, log_scale=False)
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    assert z.shape == view.values.shape == (6, 6)
    np.testing.assert_allclose(z[~view.masked], view.values[~view.masked], rtol=1e-6)
    assert np.isnan(z[view.masked]).all()
    assert list(fig.data[0].y) == bin_ranges(view.row_edges) and list(fig.data[0].x) == bin_ranges(view.col_edges)
    assert fig.layout.xaxis.title.text == t("x_binned") and fig.layout.yaxis.title.text == t("y_binned")


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_a_log_colour_bar_says_so_in_the_readers_words(lang):
    """A log map's colour bar read '平均の重み (log)' to a Japanese reader: the '(log)' was the builder's
    own English. It now names the scale in the reader's words, on the pooled map and on the zoom alike."""
    words = functools.partial(i18n.text, lang, "long_maps.figure")
    pooled = map_figure(views.map_view(MAPS, head=4, stat="mean", side=6, n_kv_heads=2), words, "random", 0, True)
    zoom = zoom_figure(views.zoom_view(Q, K, SCALE, list("abcdefghij") * 6, head=2, q0=50, k0=0, size=8), words, True)
    for fig, value in ((pooled, words("mean_name")), (zoom, words("weight"))):
        bar = fig.data[0].colorbar.title.text
        assert "(log)" not in bar and value in bar and words("log_scale") in bar


def test_zoom_figure_is_a_window_of_exact_weights_with_token_labels():
    view = views.zoom_view(Q, K, SCALE, [f"t{i}" for i in range(60)], head=2, q0=50, k0=0, size=20)
    fig = zoom_figure(view, t, log_scale=False)
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    assert z.shape == (20, 20)
    np.testing.assert_allclose(z[~view.masked], np.asarray(view.weights)[~view.masked], rtol=1e-5, atol=1e-7)
    assert fig.data[0].y[0] == "40 t40" and fig.data[0].x[-1] == "19 t19"
    assert fig.layout.xaxis.title.text == t("x_tokens") and fig.layout.yaxis.title.text == t("y_tokens")


def test_head_shares_figure_two_bars_per_head_and_the_head_marked():
    view = views.head_shares(MAPS, head=4)
    fig = head_shares_figure(view, t)
    first, own = fig.data
    assert list(first.x) == [str(h) for h in range(6)]
    np.testing.assert_allclose(first.y, view.first_share) and np.testing.assert_allclose(own.y, view.own_bin_share)
    (mark,) = fig.layout.shapes
    assert (mark.x0, mark.x1) == (3.5, 4.5)
    assert fig.layout.xaxis.title.text == t("head_axis") and fig.layout.yaxis.title.text == t("share_axis")
