"""viz/multi_head.py: the chain of one layer (MiniLM's walk from core.multi_head) and the head-count figure, read
back: every step drawn, key-token axes, head boundaries, escaped user tokens, one tick per head count."""

import functools

import pytest

from app import i18n
from core import multi_head as mh
from viz import multi_head as figs


def english(key, /, **fmt):
    return i18n.text("en", "multi_head.figure", key, **fmt)


def test_chain_figure_draws_every_step_with_labelled_axes_and_escaped_tokens(minilm):
    walk = mh.layer_walk(minilm, "<script>alert(1)</script> the cat", 0)
    fig = figs.chain_figure(walk, 3, english)
    assert len(fig.data) == 8
    layout = fig.to_dict()["layout"]
    titles = [a["text"] for a in layout["annotations"]]
    assert any("A_3" in t for t in titles) and any("Concat" in t for t in titles)
    assert any(
        ax.get("title", {}).get("text", "").startswith("key token") for k, ax in layout.items() if k.startswith("xaxis")
    )
    assert "<script>" not in fig.to_json()  # user tokens are escaped in labels
    shapes = layout["shapes"]
    assert len(shapes) == 12  # 11 head boundaries + the outline of head 3
    # between the third row and the concatenation: room for the key axis's title in two lines (its panel is a third
    # of a phone's figure) and the next panel's title in two; at 103 px they met at 390 px in ja
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    a_axis = next(
        ax for k, ax in layout.items() if k.startswith("xaxis") and "key token" in ax.get("title", {}).get("text", "")
    )
    a_rows = layout["yaxis" + a_axis["anchor"][1:]]["domain"]
    concat_rows = layout[f"yaxis{int(a_axis['anchor'][1:]) + 2}"]["domain"]
    assert (a_rows[0] - concat_rows[1]) * plot_px >= 125


def test_head_count_figure_marks_every_h():
    fig = figs.head_count_figure(mh.head_count_rows(512, 64), english)
    assert list(fig.data[0].x) == list(mh.HEAD_COUNTS) and list(fig.data[0].y) == [512, 256, 128, 64, 32, 16]
    assert fig.layout.xaxis.tickvals == tuple(mh.HEAD_COUNTS)  # one tick per h, no minor-tick labels


LOG_SCALE = {"en": "log scale", "ja": "対数目盛", "ko": "로그 눈금"}


@pytest.mark.parametrize("lang", sorted(LOG_SCALE))
def test_head_count_figure_says_which_axes_are_logarithmic(lang):
    # d_k = d_model / h halves as h doubles: on the axes said to be logarithmic that is the straight line the figure
    # draws; unsaid, it read as d_k falling by equal steps. The parameters' axis is linear and says nothing of it.
    words = functools.partial(i18n.text, lang, "multi_head.figure")
    layout = figs.head_count_figure(mh.head_count_rows(512, 64), words).layout
    axes = {"heads": layout.xaxis, "sizes": layout.yaxis, "parameters": layout.yaxis2}
    assert [name for name, axis in axes.items() if axis.type == "log"] == ["heads", "sizes"]
    for name, axis in axes.items():
        assert (LOG_SCALE[lang] in axis.title.text) == (axis.type == "log"), (name, axis.title.text)
