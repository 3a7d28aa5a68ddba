"""/linear-attention, part 6 (quality on the copy task) through AppTest: the committed run's verdict and table,
and what the paper's 4000x measures."""

from core.linear_attention.copy_task import load_quality, quality_view
from tests.apptest_helpers import open_view, shown_text

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it


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


def test_the_papers_speed_ups_stand_beside_the_apps_ratios_at_the_same_lengths():
    """317x at 784 and 4,462x at 3,072 (the paper) next to this app's committed generation run at those contexts,
    ratios recomputed here from its tokens/s."""
    import json
    from pathlib import Path

    run = json.loads((Path(__file__).resolve().parents[2] / "results" / "bench_linear_paper_lengths.json").read_text())
    rows = {r["context"]: r for r in run["generation"]["rows"]}
    assert set(rows) == {784, 3072}
    at = open_view("linear_attention", timeout=240)
    table = next(d for d in at.dataframe if "paper's speed-up (images/s, GPU)" in d.value.columns).value
    assert table["paper's speed-up (images/s, GPU)"].tolist() == ["317×", "4,462×"]
    for i, L in enumerate((784, 3072)):
        r = rows[L]
        assert table["RNN ÷ softmax without cache"][i] == f"{r['rnn_tok_s'] / r['no_cache_tok_s']:,.0f}×"
        assert table["RNN ÷ KV cache"][i] == f"{r['rnn_tok_s'] / r['kv_cache_tok_s']:,.1f}×"
    assert run["command"] in shown_text(at)
