"""viz/head_detectors.py: one detector's score for every head, from the committed results through
core.head_detectors.committed_view (no model), read back: layers down, heads across, scores in [0, 1]."""

import functools

import numpy as np
import pytest

from app import i18n
from core import head_detectors as hd
from viz import head_detectors as figures

t = functools.partial(i18n.text, "en", "head_detectors.figure")


def test_detector_grid_from_the_committed_map():
    view = hd.committed_view("minilm", "induction")
    if view is None:
        pytest.skip("no committed head-detector results for MiniLM")
    scores = view.scores
    fig = figures.detector_grid(view, t)
    (heat,) = fig.data
    z = np.array(heat.z, dtype=float)
    assert z.shape == tuple(scores.shape) == (6, 12)
    np.testing.assert_allclose(z, np.round(scores.astype(np.float64), 3), atol=1e-6)
    assert list(heat.x) == list(range(12)) and list(heat.y) == list(range(6))
    assert (heat.zmin, heat.zmax) == (0.0, 1.0)
    assert fig.layout.xaxis.title.text == t("head") and fig.layout.yaxis.title.text == t("layer")
    assert fig.layout.yaxis.autorange == "reversed"
    assert fig.layout.title.text == t("grid_title", detector=t("name_induction"), uniform=view.uniform)


def test_a_deep_model_labels_every_other_layer():
    view = hd.DetectorView("m", "previous_token", np.full((30, 9), 0.25), 0.1, [], [], [], 0.0, "finding_weak", {}, 0.0)
    fig = figures.detector_grid(view, t)
    assert np.array(fig.data[0].z).shape == (30, 9) and fig.layout.yaxis.dtick == 2
