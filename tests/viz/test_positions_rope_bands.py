"""viz/positions/rope_bands.py: the rotated q and k, each pair's share of |score| and one frequency band's part of the
scores, built by core.positions.rope_bands from a fake trace (tests/fake_traces.py) and read back from the figures."""

import numpy as np

from app import i18n
from core.positions import rope_bands
from tests.fake_traces import fake_trace
from viz.positions import rope_bands as figures


def t(key, **fmt):
    return i18n.text("en", "positions.figure", key, **fmt)


VIEW = rope_bands.bands_view(fake_trace(lengths=(6,), n_heads=3, n_kv_heads=1, d=8, causal=True), 1, 2, 2)


def test_queries_and_keys_are_token_rows_by_dimension():
    for fig, values, title in (
        (figures.queries_figure(VIEW, t), VIEW.q, t("q_title", l=1, h=2)),
        (figures.keys_figure(VIEW, t), VIEW.k, t("k_title", l=1, g=0)),
    ):
        z = np.array(fig.data[0].z, dtype=float)
        assert z.shape == (6, 8)
        np.testing.assert_allclose(z, np.round(values, 2), atol=1e-6)
        assert list(fig.data[0].y) == VIEW.labels and list(fig.data[0].x) == [str(j) for j in range(8)]
        assert fig.layout.xaxis.title.text == t("dimension") and fig.layout.yaxis.title.text == t("token")
        assert fig.layout.title.text == title


def test_pair_share_bars_one_per_pair():
    fig = figures.pair_share_figure(VIEW, t)
    assert list(fig.data[0].x) == ["0", "1", "2", "3"]  # pairs counted from 0
    np.testing.assert_allclose(fig.data[0].y, VIEW.pair_share)
    assert fig.layout.xaxis.title.text == t("pair_label") and fig.layout.yaxis.title.text == t("share")


def test_band_figure_is_the_bands_part_of_the_scores_with_future_keys_masked():
    fig = figures.band_figure(VIEW, t, 1)
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (6, 6) and fig.data[0].zmid == 0.0
    np.testing.assert_allclose(z[VIEW.visible], np.round(VIEW.band_scores[1], 2)[VIEW.visible], atol=1e-6)
    assert np.isnan(z[~VIEW.visible]).all()  # future keys: the grey masked layer, no value
    masked = [tr for tr in fig.data if tr.name == "masked"]
    assert len(masked) == 1
    a, b = VIEW.band_pairs[1]
    assert fig.layout.title.text == t("band_title", b=1, a=a, z=b)


def test_a_bands_axes_are_in_the_readers_words():
    """A band's map named its axes 'key (attended to)' and 'query (attending)' in English in every language (the
    heatmap's defaults); they are now [positions.figure]'s query and key axes, here in Korean."""

    def ko(key, **fmt):
        return i18n.text("ko", "positions.figure", key, **fmt)

    fig = figures.band_figure(VIEW, ko, 1)
    x, y = fig.layout.xaxis.title.text, fig.layout.yaxis.title.text
    assert "attend" not in x + y, (x, y)
    assert (x, y) == (ko("key_axis"), ko("query_axis"))
