"""viz/linear_attention.py, quality figures: loss against steps and against training time carry the view's
curves, with chance and the threshold as flat lines."""

import numpy as np

from core.linear_attention.copy_task import KINDS, quality_view
from viz.linear_attention import quality_figures


def t(key, /, **fmt):
    return key + "".join(f" {v}" for v in fmt.values())


def test_quality_figures_draw_both_curves_against_steps_and_time():
    curve = {"step": [1, 2, 10], "loss": [2.4, 1.0, 0.01], "wall_s": [0.1, 0.2, 1.0], "cpu_s": [0.1, 0.2, 0.9]}
    data = {
        "curves": {"softmax": curve, "linear": {**curve, "loss": [2.4, 2.0, 0.5], "wall_s": [0.3, 0.6, 3.0]}},
        "final": {k: {"held_out_loss": 0.1, "held_out_copy_accuracy": 0.9} for k in KINDS},
        "chance_loss": 2.30259,
        "config": {},
    }
    view = quality_view(data)
    figs = quality_figures(view, t)
    soft, lin, chance, threshold = figs["steps"].data
    assert list(soft.x) == [1, 2, 10] and list(lin.y) == [2.4, 2.0, 0.5] and soft.name == "q_softmax"
    assert list(chance.y) == [2.30259] * 2 and np.allclose(threshold.y, 0.05 * 2.30259)
    soft_t, lin_t = figs["time"].data[:2]
    assert list(lin_t.x) == [0.3, 0.6, 3.0] and list(soft_t.x) == [0.1, 0.2, 1.0]
    assert figs["time"].layout.yaxis.type == "log" and figs["time"].layout.xaxis.title.text == "q_x_time"
