"""viz/models.py: the per-layer parity bars read back: one bar per layer at its difference (a perfect layer at the
log axis' floor), colours by the 1e-5 line, axis titles and the line itself."""

import functools

import plotly.graph_objects as go
import pytest

from app import i18n
from core.models.local import EXACT, Parity
from viz import models as figures


def words(key: str, **_) -> str:
    return f"<{key}>"


def test_parity_bars_follow_the_differences():
    parity = Parity((0.0, 3e-7, 2e-3))
    fig = figures.parity_figure(parity, words)
    bar = fig.data[0]
    assert list(bar.x) == [0, 1, 2]
    assert list(bar.y) == [figures.FLOOR, 3e-7, 2e-3]
    assert list(bar.customdata) == [0.0, 3e-7, 2e-3]
    blue, red = bar.marker.color[0], bar.marker.color[2]
    assert bar.marker.color[1] == blue and red != blue
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.dtick == 1  # ticks on whole layers only
    assert fig.layout.xaxis.title.text == "<parity_layer>" and fig.layout.yaxis.title.text == "<parity_difference>"
    assert [s.y0 for s in fig.layout.shapes] == [EXACT]
    assert fig.layout.annotations[0].y == -5  # the line's label sits on it: log axes place annotations in decades
    assert go.Figure(fig.to_dict()).to_dict() == fig.to_dict()  # what was built unvalidated passes validation
    assert not parity.exact and parity.max_difference == 2e-3 and parity.layers == 3


def test_parity_words_come_from_the_figure_section():
    t = functools.partial(i18n.text, "en", "models.figure")
    fig = figures.parity_figure(Parity((1e-6, 4e-5)), t)
    assert fig.layout.title.text == t("parity_title") and fig.layout.annotations[0].text == t("parity_line")
    assert fig.data[0].hovertemplate == t("parity_hover") + "<extra></extra>"
    assert list(fig.data[0].marker.color) == ["#2a6fdb", "#d1495b"]  # 1e-6 under the 1e-5 line, 4e-5 above it
    # labelled at powers of ten only (plotly's own 2, 5 between them read as a linear axis), the line's 1e-5 between
    # (a little under 1e-6, where a bar ends: viz.linear_attention.END_PAD)
    assert fig.layout.yaxis.dtick == 1 and list(fig.layout.yaxis.range) == [-6.1, -4]


LOG_SCALE = {"en": "log scale", "ja": "対数目盛", "ko": "로그 눈금"}


@pytest.mark.parametrize("lang", sorted(LOG_SCALE))
def test_the_parity_axis_says_it_is_logarithmic(lang):
    # bars from 1e-12 to 1e-3 on an axis not said to be logarithmic read as one tall bar and several empty ones;
    # the other pages' log axes say so in their title, in the reader's language
    t = functools.partial(i18n.text, lang, "models.figure")
    axis = figures.parity_figure(Parity((1e-9, 2e-3)), t).layout.yaxis
    assert axis.type == "log" and LOG_SCALE[lang] in axis.title.text, axis.title.text
