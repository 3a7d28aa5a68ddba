"""viz/kv_cache.py read back on a hand-built Generation: titles, axes and traces from the view and the
[kv_cache.figure] words."""

import dataclasses
import html
import unicodedata

import numpy as np
import pytest

from app import i18n
from core.kv_cache import views
from tests.fake_traces import fake_generation
from viz import kv_cache as kv
from viz.labels import label_columns
from viz.masks import MASKED_MARK


def words(key, **fmt):
    return i18n.text("en", "kv_cache.figure", key, **fmt)


def test_step_figure_rows_are_heads_then_the_mean_and_the_policies_below():
    view = views.step_attention(fake_generation(), 2, 0)
    fig = kv.step_figure(view, words)
    assert list(fig.data[0].y) == ["head 0", "head 1", "mean of heads"]
    assert list(fig.data[1].y) == ["window", "sinks + window"]
    assert fig.data[0].colorbar.orientation == "h"  # under the map, not beside it: a phone's 390 px for the columns
    assert fig.layout.title.text == words("step_title", step=2, layer=0, n=6)  # whole: the page wraps it
    assert fig.layout.title.subtitle.text == words("marks_evicted", evicted=MASKED_MARK)  # nothing evicted in part


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_step_figure_axes_say_the_rows_are_the_new_tokens_query_and_the_columns_the_keys(lang):
    """The map's rows are the heads of the one new query, its columns the cached keys (titled on the bottom panel,
    whose x axis the map's matches), and the policies' rows say they are policies."""
    fig = kv.step_figure(
        views.step_attention(fake_generation(), 2, 0), lambda k, **f: i18n.text(lang, "kv_cache.figure", k, **f)
    )
    said = {k: i18n.text(lang, "kv_cache.figure", k) for k in ("heads_axis", "key_axis", "policy_axis")}
    assert fig.layout.xaxis.matches == "x2" and fig.layout.xaxis2.title.text == said["key_axis"]
    rows = [fig.layout[axis].title.text for axis in ("yaxis", "yaxis2")]  # in lines (at a space or none)
    assert [solid(row) for row in rows] == [solid(said["heads_axis"]), solid(said["policy_axis"])]


def solid(text: str) -> str:
    """A figure's text, its lines joined, without the spaces a line break takes."""
    return html.unescape(text.replace("<br>", "")).replace(" ", "")


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_step_figure_titles_fit_a_phone_and_stay_clear_of_the_row_labels(lang):
    """The longest case (pooled, a column evicted in part: the marks' note of up to ~160 characters under the title)
    at SmolLM2's 9 heads and 8,192 positions. The title and the note under it are whole (the page sets them above the
    figure, where the browser wraps them: app/ui.py); the heads' title is cut into lines its rows hold beside the
    "head 0" labels (a Japanese title broken before its bracket, not at its one space); the map keeps its height."""
    t = lambda k, **f: i18n.text(lang, "kv_cache.figure", k, **f)  # noqa: E731
    gen = fake_generation()
    view = views.step_attention(gen, 2, 0, max_cols=3)
    view = dataclasses.replace(view, step=5, layer=29, position=8191, weights=np.ones((9, 3)) / 3)
    fig = kv.step_figure(view, t)
    note = fig.layout.title.subtitle
    assert note.text == t("marks_partly", evicted=MASKED_MARK, partly=kv.PARTLY_EVICTED_MARK)
    assert fig.layout.title.text == t("step_title", step=5, layer=29, n=8192)
    assert note.font.size < fig.layout.title.font.size
    lines = fig.layout.yaxis.title.text.split("<br>")
    assert len(lines) <= 3 and all(label_columns(line) <= kv.HEADS_TITLE_COLUMNS for line in lines), lines
    assert (len(lines) > 1) == (label_columns(t("heads_axis")) > kv.HEADS_TITLE_COLUMNS)
    if lang == "ja":
        assert lines[1].startswith("（")
    assert fig.layout.height - fig.layout.margin.t - fig.layout.margin.b == kv.MAPS_HEIGHT


def columns(line: str) -> int:
    """Half-ems of 12 px type as chromium draws a label (results/figure_text_widths.json: a Latin character or digit
    about 0.5 em, a kana or kanji 1.0, a Hangul syllable 0.92), two a wide character: 6 px each."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in html.unescape(line))


def test_top_figure_titles_carry_each_policys_kl():
    fig = kv.top_figure(views.next_tokens(fake_generation(), 2), words)
    assert [a.text for a in fig.layout.annotations] == ["full cache", "window (KL 0.250)", "sinks + window (KL 0.250)"]
    assert [list(t.x) for t in fig.data] == [[0.75], [0.5], [0.5]]


def test_history_memory_and_kl_figures_read_back():
    hist = kv.history_figure(views.history(fake_generation(), 0, 1), words)
    assert hist.layout.title.text in (
        words("history_title", layer=0, head="head 1"),
        html.escape(words("history_title", layer=0, head="head 1")),
    )
    mem = kv.memory_figure(views.memory(fake_generation()), words)
    assert [t.name for t in mem.data][:3] == ["multi-head (H_kv = H)", "formula (GQA)", "measured"]
    assert mem.layout.xaxis.title.text == words("context_axis")
    # the legend at the figure's foot, under the x axis's title (at 390 px in ja it lay over it)
    assert (mem.layout.legend.yref, mem.layout.legend.y, mem.layout.legend.yanchor) == ("container", 0, "bottom")
    kl = kv.kl_figure(views.eviction(fake_generation()), words)
    assert [t.name for t in kl.data] == ["window", "sinks + window"] and list(kl.data[0].y) == [0.25] * 3
    assert kl.layout.yaxis.title.text == words("kl_axis")


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_kept_positions_are_a_kind_of_cell_of_their_own_named_in_a_legend(lang):
    """The policy rows drew the positions a cache keeps in the blue of the weights' map above them (#4292c6, a
    weight of about 0.6 on its scale): kept read as a large weight. Kept cells take a colour apart from every colour of
    the weights' scale (and from the evicted grey) for normal vision and each dichromacy (tests/viz/test_colour_vision:
    CIEDE2000 on Machado et al.'s simulations, at least MIN_APART), the evicted ones /masks' grey; a legend names both
    kinds in the reader's words, under the colour bar."""
    import plotly.colors

    from tests.viz.test_colour_vision import MIN_APART, VISIONS, ciede2000, cielab, rgb, seen

    t = lambda k, **f: i18n.text(lang, "kv_cache.figure", k, **f)  # noqa: E731
    fig = kv.step_figure(views.step_attention(fake_generation(), 2, 0), t)
    heads, strip, *legend = fig.data
    evicted, kept = (c for _, c in strip.colorscale)
    weights = plotly.colors.sample_colorscale([list(stop) for stop in heads.colorscale], list(np.linspace(0, 1, 21)))
    for vision in VISIONS:
        lab = cielab(seen(np.array([rgb(c) for c in [kept, evicted, *weights]]), vision))
        assert min(float(ciede2000(lab[0], other)) for other in lab[1:]) >= MIN_APART, vision
    assert evicted == kv.MASKED_COLOUR
    assert [(e.name, e.marker.color, e.marker.symbol) for e in legend] == [
        (t("kept"), kept, "square"),
        (f"{t('evicted')} ({MASKED_MARK})", evicted, "square"),
    ]
    assert all(e.hoverinfo == "skip" for e in legend) and fig.layout.showlegend
    # the legend under the colour bar, inside the figure
    assert legend_top_px(fig) > -fig.data[0].colorbar.y * kv.MAPS_HEIGHT
    assert legend_top_px(fig) + kv.LEGEND_ROW <= fig.layout.margin.b


def legend_top_px(fig) -> float:
    """px under the maps where the step figure's legend's box begins: set on the plot (paper) or on the figure's foot
    (container, LEGEND_ROW tall)."""
    legend = fig.layout.legend
    if legend.yref == "container":
        assert (legend.y, legend.yanchor) == (0, "bottom")
        return fig.layout.height - fig.layout.margin.t - kv.MAPS_HEIGHT - kv.LEGEND_ROW
    assert legend.yanchor == "top"
    return -legend.y * kv.MAPS_HEIGHT


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
@pytest.mark.parametrize("labels", [None, ["猫" * 20, "1 b"]])
def test_the_kept_evicted_legend_stands_under_the_colour_bar_not_over_it(lang, labels):
    """In chromium (390 px, en/ja/ko) the legend set 50 px under the colour bar's top lay over its numbers: the bar
    with its title across its top and its numbers under it is COLOUR_BAR_DRAWN (66 px) tall. The legend's box begins
    under that, whatever the keys' labels, and from the figure's left edge (from the plot's, which the rows' labels
    push right, the Japanese legend took two lines on a phone)."""
    t = lambda k, **f: i18n.text(lang, "kv_cache.figure", k, **f)  # noqa: E731
    view = views.step_attention(fake_generation(), 2, 0)
    if labels:
        view = dataclasses.replace(view, labels=labels)
    fig = kv.step_figure(view, t)
    bar_bottom = -fig.data[0].colorbar.y * kv.MAPS_HEIGHT + kv.COLOUR_BAR_DRAWN
    assert legend_top_px(fig) >= bar_bottom
    assert kv.LEGEND_ROW >= 48  # the legend in two lines, as chromium draws the Japanese one at 390 px
    assert (fig.layout.legend.xref, fig.layout.legend.x, fig.layout.legend.xanchor) == ("container", 0, "left")
    assert fig.layout.height - fig.layout.margin.t - fig.layout.margin.b == kv.MAPS_HEIGHT


def test_evicted_positions_carry_the_masks_cross_and_kept_ones_none():
    """The kept/evicted row is not told by colour alone: a position a policy evicts carries /masks' cross."""
    view = views.step_attention(fake_generation(), 2, 0)
    strip = kv.step_figure(view, words).data[1]
    text = np.array(strip.text)
    kept = np.vstack(list(view.kept.values()))
    assert (kept == 0).any() and (kept == 1).any()  # both kinds in the strip
    np.testing.assert_array_equal(text == MASKED_MARK, kept == 0)
    assert strip.texttemplate == "%{text}"


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_a_column_a_policy_evicts_in_part_carries_a_mark_of_its_own_named_under_the_title(lang):
    """Pooled, 6 positions in 3 columns of 2 at position 5 (hand-worked): the window (W = 2) keeps 4-5, so it evicts
    the first two columns whole (✕); sinks + window (S = 1) also keeps 0, so its first column is evicted in part: a
    mark of its own (◐), not ✕ and not nothing, which the title's second line names in the reader's language."""
    t = lambda k, **f: i18n.text(lang, "kv_cache.figure", k, **f)  # noqa: E731
    view = views.step_attention(fake_generation(), 2, 0, max_cols=3)
    assert view.pooled and view.labels and len(view.labels) == 3
    part, gone, kept = views.PARTLY_EVICTED, views.EVICTED, views.KEPT
    assert view.evicted == {"window": (gone, gone, kept), "sinks_window": (part, gone, kept)}
    np.testing.assert_array_equal(view.kept["sinks_window"], [0.5, 0.0, 1.0])
    fig = kv.step_figure(view, t)
    assert [list(row) for row in fig.data[1].text] == [
        [MASKED_MARK, MASKED_MARK, ""],
        [kv.PARTLY_EVICTED_MARK, MASKED_MARK, ""],
    ]
    legend = t("marks_partly", evicted=MASKED_MARK, partly=kv.PARTLY_EVICTED_MARK)
    assert solid(fig.layout.title.subtitle.text) == solid(legend)
    assert MASKED_MARK in legend and kv.PARTLY_EVICTED_MARK in legend


@pytest.mark.parametrize("label", ["0 The", "0 The…1 cat (0–1)", "猫" * 20, "x" * 39 + "…"])
def test_step_figure_colour_bar_stands_under_the_keys_labels_however_long(label):
    """The colour bar lies under the keys' labels (standing at -60 degrees) and their title: with pooled token labels
    of up to 40 characters it went over them (fixed at -0.36 of the maps). Each column of the longest label takes
    about 5 px of height (measured in chromium); the maps keep their height, the figure grows."""
    view = views.step_attention(fake_generation(), 2, 0)
    view = dataclasses.replace(view, labels=[label] + list(view.labels[1:]))
    fig = kv.step_figure(view, words)
    bar_top = -fig.data[0].colorbar.y * kv.MAPS_HEIGHT  # px under the maps
    drop = columns(label) * 6 * np.sin(np.radians(60))  # a column's width of 12 px type, at -60 degrees
    assert bar_top >= drop + 30  # and the keys' title
    assert fig.layout.height - fig.layout.margin.t - fig.layout.margin.b == kv.MAPS_HEIGHT
    assert fig.layout.margin.b >= bar_top + 40  # the bar, its title and numbers inside the figure


@pytest.mark.parametrize("labels", [["0 a", "1 b"], ["121 …는…122  조… (121–122)", "1 b"]])
def test_step_figure_colour_bar_stands_clear_of_the_keys_title(labels):
    """In chromium at 390 px (scripts/phone_layout_check.py) the keys' title's box ended 53 px below the keys' labels
    (their drop by the figure's estimate) in en, 3 px into the colour bar set 50 px below them, and 64 px below in ko
    with a long text. The bar's top stands at least 8 px below that box, short labels or long."""
    view = dataclasses.replace(views.step_attention(fake_generation(), 2, 0), labels=labels)
    fig = kv.step_figure(view, words)
    bar_top_px = -fig.data[0].colorbar.y * kv.MAPS_HEIGHT  # below the maps
    drop = 5.2 * max(columns(s) for s in labels)  # the drop as estimated when the title's box was measured
    assert bar_top_px - drop >= 64 + 8
    assert fig.layout.margin.b >= bar_top_px + 40  # the bar (10 px) and its ticks and title inside the figure


def test_after_one_new_token_every_memory_curve_shows_its_point():
    """A line through one point draws nothing: /kv-cache at one new token (the first lesson step that opens it)
    showed the measured point alone, its legend naming four curves nowhere on the figure (multi-head's 3 times the
    rest)."""
    gen = fake_generation()
    one = dataclasses.replace(gen, steps=gen.steps[:1])
    mem = kv.memory_figure(views.memory(one), words)
    assert len(mem.data) >= 4
    assert all(len(t.x) == 1 and "markers" in t.mode for t in mem.data), [(t.name, t.mode) for t in mem.data]
    longer = kv.memory_figure(views.memory(gen), words)  # curves of several points stay lines
    assert [t.mode for t in longer.data][:3] == ["lines", "lines", "markers"]


def test_the_prompts_end_hides_no_kept_cell():
    """The dashed orange line where the prompt ends crossed the policy rows' green kept cells. On those rows it now
    stands on the boundary between two columns, under the cells, in the gap between them (as wide as the line): seen
    whole, hiding no cell; over the weights' map above it stays over the cells."""
    view = views.step_attention(fake_generation(), 2, 0)
    assert not view.pooled and view.prompt_length <= view.position  # a step past the prompt: the line is drawn
    fig = kv.step_figure(view, words)
    strip = fig.data[1]
    lines = {(s.xref, s.layer): s for s in fig.layout.shapes}
    assert set(lines) == {("x", "above"), ("x2", "below")}
    line = lines["x2", "below"]
    assert line.x0 == line.x1 == view.prompt_length - 0.5  # between two columns (category axis: cells at integers)
    assert line.line.color == kv.ORANGE and line.line.dash == "dash"
    assert strip.xgap >= line.line.width > 0
