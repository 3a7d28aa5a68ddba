"""viz/bars.py: grouped head-ranking bars and accuracy bars with interval whiskers and a chance line, read back
from the figures (values, rounding, escaped labels, axis titles)."""

import numpy as np

from tests.phone_figures import placed_in_the_way_on_a_phone
from viz.bars import LABEL_COLUMNS, accuracy_bars, head_ranking_bars
from viz.labels import label_columns


def test_head_ranking_bars_one_series_per_candidate():
    weights = np.array([[0.71234, 0.1], [0.4, 0.35]])
    fig = head_ranking_bars(
        ["L5 H11", "L2 H3"], weights, ["cat", "<mat>"], title="ranking", x_title="weight", y_title="head"
    )
    assert [b.name for b in fig.data] == ["cat", "&lt;mat&gt;"]
    assert list(fig.data[0].x) == [0.712, 0.4] and list(fig.data[1].x) == [0.1, 0.35]  # 3 decimals
    assert list(fig.data[0].text) == ["0.71", "0.40"]
    assert fig.layout.barmode == "group" and fig.layout.yaxis.autorange == "reversed"
    assert fig.layout.xaxis.title.text == "weight" and fig.layout.title.text == "ranking"
    assert fig.layout.xaxis.range[1] > 0.712  # room for the longest bar's label
    # the candidates' legend at the figure's foot: 0.12 of the plot below it, it lay on the x axis's title at 390 px
    assert not placed_in_the_way_on_a_phone(fig.to_plotly_json())


def test_accuracy_bars_whiskers_reach_the_interval():
    acc, lo, hi = [0.6, 0.45], [0.5, 0.3], [0.7, 0.6]
    fig = accuracy_bars(["head", "choice"], acc, lo, hi, title="held out", x_title="accuracy", chance_label="chance")
    (bar,) = fig.data
    np.testing.assert_allclose(np.add(bar.x, bar.error_x.array), hi)
    np.testing.assert_allclose(np.subtract(bar.x, bar.error_x.arrayminus), lo)
    assert list(bar.y) == ["head", "choice"] and bar.orientation == "h"
    (line,) = fig.layout.shapes
    assert line.x0 == line.x1 == 0.5 and fig.layout.annotations[0].text == "chance"
    assert list(fig.layout.xaxis.range) == [0, 1] and fig.layout.xaxis.title.text == "accuracy"
    # a long name in lines a phone's plot leaves room beside (in one line the plot was a sixth of the figure)
    name = "MiniLM-L6 (all-MiniLM-L6-v2): 最良ヘッド L3 H3"
    fig = accuracy_bars([name], [0.5], [0.4], [0.6], x_title="正解率", chance_label="偶然")
    assert list(fig.data[0].y) == list(fig.layout.yaxis.tickvals) == [name]  # hover and caption read it whole
    lines = fig.layout.yaxis.ticktext[0].split("<br>")
    assert len(lines) > 1 and max(map(label_columns, lines)) <= LABEL_COLUMNS and " ".join(lines) == name
