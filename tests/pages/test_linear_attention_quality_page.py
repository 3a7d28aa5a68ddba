"""/linear-attention, part 6 (quality on the copy task) through AppTest: the committed run's verdict and table,
and what the paper's 4000x measures."""

from core.linear_attention.copy_task import load_quality, quality_view
from tests.apptest_helpers import open_view, shown_text


def test_quality_part_shows_the_committed_run_and_the_papers_conditions():
    at = open_view("linear_attention", timeout=240)
    text = shown_text(at)
    assert "What the paper's “up to 4000×” measures: generation speed, not training and not quality" in text
    data = load_quality()
    if data is None:
        assert "No committed run yet (results/linear_quality.json)" in text
        return
    view = quality_view(data)
    if view.verdict in ("linear_later", "linear_earlier", "same"):
        assert f"after {view.solved_step['softmax']:,} steps" in text or f"step {view.solved_step['softmax']:,}" in text
    assert f"takes {view.slowdown:.1f}× the CPU time of softmax's" in text
    assert data["command"] in text  # the run's conditions
    table = next(d for d in at.dataframe if "held-out loss" in d.value.columns)
    assert table.value["held-out loss"].tolist() == [
        f"{view.final[k]['held_out_loss']:.4f}" for k in ("softmax", "linear")
    ]
