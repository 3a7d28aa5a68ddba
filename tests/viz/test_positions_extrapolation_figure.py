"""viz/positions/extrapolation.py: one accuracy line per kind over the positions, learned's gap past its table,
the training length and chance marked."""

import numpy as np

from core.positions.extrapolation import KINDS, extrapolation_view


def t(key, /, **fmt):
    return key + "".join(f" {v}" for v in fmt.values())


def fake_run(scale: float) -> dict:
    acc = {k: [scale] * 8 + ([None] * 24 if k == "learned" else [scale / 2] * 24) for k in KINDS}
    return {
        k: {
            "accuracy_by_position": a,
            "accuracy_inside": scale,
            "accuracy_past": None if k == "learned" else scale / 2,
            "loss_every_10_steps": [1.0],
            "cpu_s": 1.0,
        }
        for k, a in acc.items()
    }


def test_accuracy_figure_draws_each_kind_with_the_gap():
    from viz.positions.extrapolation import accuracy_figure

    data = {"runs": {"0": fake_run(1.0), "1": fake_run(0.8)}, "config": {"train_length": 8}, "seeds": [0, 1]}
    view = extrapolation_view(data)
    fig = accuracy_figure(view, t)
    lines = [tr for tr in fig.data if tr.mode == "lines"]
    assert [tr.name for tr in lines] == [f"ex_{k}" for k in KINDS]
    np.testing.assert_allclose(lines[0].y[:8], 0.9)  # mean of the two seeds
    learned = lines[KINDS.index("learned")]
    assert np.isnan(np.asarray(learned.y[8:], dtype=float)).all()
    assert fig.layout.shapes[0].x0 == 7.5 and fig.layout.shapes[1].y0 == 0.25  # training length, chance
    assert view.best_past in ("sinusoidal", "alibi", "rope") and view.past["alibi"] == 0.45
