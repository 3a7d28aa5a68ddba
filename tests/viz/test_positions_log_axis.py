"""viz/positions/log_axis.py: a log axis labels major ticks only (powers of ten over two decades or more, 1-2-5
under), and nothing for values that cannot be drawn on it."""

import pytest

from tests.references import is_major_tick
from viz.positions.log_axis import log_ticks


@pytest.mark.parametrize(
    "values,expected",
    [
        ([1e-5, 0.9], [1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0]),  # >= 2 decades: powers of ten
        ([0.3, 0.9], [0.2, 0.5, 1.0]),  # under a decade: 1-2-5
        ([0.004, 0.03], [0.002, 0.005, 0.01, 0.02, 0.05]),
    ],
)
def test_log_ticks_are_major_ticks_only(values, expected):
    ticks, text = log_ticks(values)
    assert ticks == pytest.approx(expected)
    assert len(text) == len(ticks) and all(is_major_tick(v) for v in ticks)
    assert log_ticks([0.0, -1.0, float("nan")]) == ([], [])
