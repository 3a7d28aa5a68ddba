"""viz/scaling.py: measured times on log-log axes with dashed power-law fits over the fitted range; gaps for missing
values; read back from the figure."""

import numpy as np
import pytest

from viz.scaling import loglog_figure


def test_series_gaps_and_fit_lines():
    sizes = [64, 128, 256, 512]
    fig = loglog_figure(
        sizes,
        {"naive": [1.0, 4.0, 16.0, 64.0], "flash": [1.0, None, float("nan"), 8.0]},
        fits={"naive": (2.0, 0.0), "flash": None},
        fit_from=128,
        x_title="n",
        y_title="ms",
        fit_label="傾き {slope:.2f}",
    )
    naive, fit, flash = fig.data
    assert list(naive.x) == sizes and list(naive.y) == [1.0, 4.0, 16.0, 64.0]
    assert list(flash.y) == [1.0, None, None, 8.0]  # missing values leave gaps
    assert fit.line.dash == "dash" and fit.line.color == naive.line.color
    assert min(fit.x) == 128 and max(fit.x) == 512  # the fitted range only
    np.testing.assert_allclose(fit.y, np.exp(2.0 * np.log(fit.x)))  # log y = intercept + slope log x
    assert "2.00" in fit.name
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.title.text == "n" and fig.layout.yaxis.title.text == "ms"


def test_a_fitted_line_is_named_in_the_pages_words_or_not_drawn():
    """The fitted line was named 'fit: slope 2.00', the builder's own English, where a caller left its label out: a
    caller that draws a fit now hands its words, or the figure is refused at once."""
    with pytest.raises(ValueError):
        loglog_figure([1, 2], {"a": [1.0, 4.0]}, fits={"a": (2.0, 0.0)}, x_title="n", y_title="ms")
    named = loglog_figure([1, 2], {"a": [1.0, 4.0]}, fits={"a": (2.0, 0.0)}, x_title="n", y_title="ms",
                          fit_label="傾き {slope:.2f}")  # fmt: skip
    assert named.data[1].name == "a — 傾き 2.00"
    assert len(loglog_figure([1, 2], {"a": [1.0, 4.0]}, fits={"a": None}, x_title="n", y_title="ms").data) == 1
