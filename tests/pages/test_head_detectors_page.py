"""/head-detectors headless: the committed map is drawn with its numbers, the definition of the chosen detector is
shown, and the live version runs."""

import numpy as np
import pytest

from core import head_detectors as hd
from tests.apptest_helpers import figure_traces, open_view, plotted_values, shown_text


def test_committed_map_is_drawn_as_committed():
    data = hd.load_results()
    if data is None or "smollm2" not in data["models"]:
        pytest.skip("results/head_detectors.json has no SmolLM2 map")
    at = open_view("head-detectors", {"model": "smollm2", "detector": "induction"})
    z = plotted_values(figure_traces(at, 0)[0]["z"])
    assert np.allclose(z, np.asarray(data["models"]["smollm2"]["scores"]["induction"]), atol=1e-3)
    text = shown_text(at)
    assert "token that came *after* its first occurrence" in text
    best = data["models"]["smollm2"]["top"]["induction"][0]
    assert f"{best[2]:.2f}" in text
    assert ("a clear induction head" in text) == (hd.committed_view("smollm2", "induction").finding == "finding_strong")


def test_live_map_runs_in_japanese():
    at = open_view(
        "head-detectors", {"model": "minilm", "detector": "previous_token", "live": "1"}, state={"lang": "ja"}
    )
    assert "直前トークン" in shown_text(at)
    assert figure_traces(at, 0)[0]["type"] == "heatmap"
