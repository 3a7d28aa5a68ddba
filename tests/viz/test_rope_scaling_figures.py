"""viz/rope_scaling.py: figures from core.rope_scaling.formulas views, read back: the computed angles on
power-of-two ticks, and log axes that carry major ticks (1, 2, 5 x 10^k) only."""

import numpy as np
import pytest

from core.rope_scaling import formulas
from tests.references import is_major_tick
from viz import rope_scaling as figures


def t(key, /, **fmt):
    return key


def test_resolution_figure_plots_the_computed_angles_on_power_of_two_ticks():
    view = formulas.resolution_view(4.0)
    res = view.angles
    fig = figures.resolution_figure(view, "fastest_pair", t)
    for trace in fig.data:
        np.testing.assert_allclose(trace.y, np.asarray(res[trace.name]["fastest_pair"], dtype=np.float32))
        np.testing.assert_allclose(trace.x, formulas.RES_FACTORS)
    ticks = list(fig.layout.xaxis.tickvals)
    assert ticks[0] == formulas.RES_FACTORS[0] and ticks[-1] == pytest.approx(formulas.RES_FACTORS[-1])
    assert all(b == 2 * a for a, b in zip(ticks, ticks[1:]))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.dtick == "D2"


def test_wavelength_and_decay_figures_have_major_log_ticks():
    freq, decay = formulas.frequency_view(4.0, 4 * 8192), formulas.decay_view(4.0, 20000)
    for fig, axis in ((figures.wavelength_figure(freq, t), "yaxis"), (figures.decay_figure(decay, t), "xaxis")):
        layout = fig.to_dict()["layout"][axis]
        assert layout["type"] == "log" and layout["tickmode"] == "array"
        assert len(layout["tickvals"]) >= 2 and all(is_major_tick(v) for v in layout["tickvals"])
