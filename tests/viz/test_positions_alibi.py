"""viz/positions/alibi.py: the slopes of core.positions.alibi's view on a log axis with major ticks only."""

import functools

import numpy as np
import pytest

from app import i18n
from core.positions import alibi
from tests.references import is_major_tick
from viz.positions import alibi as figures


def t(key, **fmt):
    return i18n.text("en", "positions.figure", key, **fmt)


def test_slopes_figure_one_bar_per_head_on_a_log_axis():
    v = alibi.alibi_view(8, 6, 99)
    fig = figures.slopes_figure(v, t)
    np.testing.assert_allclose(fig.data[0].y, v.slopes)
    assert len(fig.data[0].x) == 8
    axis = fig.to_dict()["layout"]["yaxis"]
    assert axis["type"] == "log" and all(is_major_tick(x) for x in axis["tickvals"])


LOG_SCALE = {"en": "log scale", "ja": "対数目盛", "ko": "로그 눈금"}


@pytest.mark.parametrize("lang", sorted(LOG_SCALE))
def test_slopes_axis_says_it_is_logarithmic(lang):
    # the page calls the slopes a geometric sequence (1/2, 1/4, ..., 1/256): even steps on this axis only because it
    # is logarithmic, which its words ('slope') did not say
    words = functools.partial(i18n.text, lang, "positions.figure")
    axis = figures.slopes_figure(alibi.alibi_view(8, 6, 99), words).layout.yaxis
    assert axis.type == "log" and LOG_SCALE[lang] in axis.title.text
    assert LOG_SCALE[lang] not in figures.slopes_figure(alibi.alibi_view(8, 6, 99), words).layout.xaxis.title.text
