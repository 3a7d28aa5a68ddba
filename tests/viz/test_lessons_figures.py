"""viz/lessons.histogram read back: one bar per answer with its count, one colour before the reveal, right bars
green after it, the viewer's own bar outlined, labels escaped (an answer is data, never markup)."""

import functools

from app import i18n
from core import lessons as core
from viz import lessons as figures
from viz.style import GREEN, PALETTE


def words(key, **fmt):
    return key + "".join(f" {k}={v}" for k, v in sorted(fmt.items()))


ANSWER = core.Answer("token", "1 cat", ("0 <script>", "1 cat", "2 sat"), None, {})


def test_bars_and_counts_before_the_reveal():
    view = core.distribution(ANSWER, ["1 cat", "2 sat", "2 sat"], mine="2 sat")
    bar = figures.histogram(view, words).data[0]
    assert list(bar.x) == [0, 1, 2] and list(bar.y) == ["0 &lt;script&gt;", "1 cat", "2 sat"]
    assert set(bar.marker.color) == {PALETTE[0]}  # nobody can tell the right bar yet
    assert list(bar.marker.line.width) == [0, 0, 3]


def test_right_bars_are_green_after_the_reveal():
    view = core.distribution(ANSWER, ["1 cat", "2 sat", "2 sat"], reveal=True)
    fig = figures.histogram(view, words)
    assert list(fig.data[0].marker.color).index(GREEN) == 1 and list(fig.data[0].marker.color).count(GREEN) == 1
    assert "hist_right n=3 right=1" in fig.layout.title.text


def test_titles_and_axis_from_the_figure_section():
    t = functools.partial(i18n.text, "en", "lessons.figure")
    view = core.distribution(ANSWER, ["1 cat", "2 sat", "2 sat"], reveal=True, mine="1 cat")
    fig = figures.histogram(view, t)
    expected = " · ".join([t("hist_title", n=3), t("hist_right", right=1, n=3), t("hist_mine")])
    assert fig.layout.title.text == expected and fig.layout.xaxis.title.text == t("hist_count")


def test_the_right_bar_is_told_by_a_mark_not_only_by_green():
    """After the reveal the right answer's label carries a check mark (colour-blind readers, screen readers); before
    it no label does."""
    before = figures.histogram(core.distribution(ANSWER, ["1 cat", "2 sat"]), words).data[0]
    after = figures.histogram(core.distribution(ANSWER, ["1 cat", "2 sat"], reveal=True), words).data[0]
    assert not [y for y in before.y if figures.RIGHT_MARK in y]
    assert list(after.y) == ["0 &lt;script&gt;", f"1 cat {figures.RIGHT_MARK}", "2 sat"]
