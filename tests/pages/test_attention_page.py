"""The /attention page headless (MiniLM): every view renders, the head view opens from the grid, a long text is cut
with a notice, the head view shows the committed detector scores of the head."""

import pytest

from tests.apptest_helpers import open_view, shown_text


@pytest.mark.slow
@pytest.mark.parametrize(
    "params",
    [
        {"view": "grid"},
        {"view": "head", "layer": "5", "head": "11"},
        {"view": "token"},
        {"view": "aggregate", "agg": "mean"},
        {"view": "aggregate", "agg": "rollout", "nospecial": "1"},
        {"view": "aggregate", "agg": "entropy"},
        {"view": "head", "nospecial": "1"},
    ],
    ids=lambda p: "-".join(p.values()),
)
def test_every_attention_view_renders(params):
    at = open_view("attention", params)
    assert len(at.get("plotly_chart")) == 1
    if params.get("nospecial"):
        assert "Special tokens hidden" in shown_text(at)
    if params.get("agg") == "rollout":
        assert "R = A_l ⋯ A₁·A₀" in shown_text(at)


@pytest.mark.slow
def test_head_view_opens_from_the_grid():
    at = open_view("attention", {"view": "grid", "layer": "2", "head": "3"})
    at.button[0].click().run()
    assert at.radio(key="view").value == "head"
    assert at.number_input(key="layer").value == 2 and at.number_input(key="head").value == 3


@pytest.mark.slow
def test_long_text_is_cut_with_a_notice():
    at = open_view("attention", {"view": "head"})
    at.text_area(key="text").set_value("word " * 2000).run()
    assert not at.exception
    text = shown_text(at)
    assert "reads at most 512" in text and "block means" in text  # 512 tokens > 256: pooled, and said so


@pytest.mark.slow
def test_the_head_view_shows_the_committed_detector_scores_of_the_head():
    """MiniLM layer 0 head 2 is the committed map's best previous-token head (results/head_detectors.json)."""
    from core.head_detectors import detector_scores_for

    scores = detector_scores_for("minilm", 0, 2)
    at = open_view("attention", {"model": "minilm", "view": "head", "layer": "0", "head": "2"})
    line = next(line for line in shown_text(at).splitlines() if line.startswith("Head detectors"))
    assert f"previous token {scores['previous_token']['score']:.2f} (rank {scores['previous_token']['rank']};" in line
