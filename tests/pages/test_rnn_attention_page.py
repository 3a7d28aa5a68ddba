"""/rnn-attention headless: the four parts render; a sentence is translated by both models with the GRU's alignment
drawn; the side-by-side table reads the committed reports; the gradient and timing panels read results/ and say
what the numbers show; the cost panel follows its sliders; without weights or results the page explains."""

import json

import pytest

import core.results
from core.rnn_attention import model as rm
from tests.apptest_helpers import figure_traces, open_view, shown_text

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it


def skip_without_weights():
    if rm.status():
        pytest.skip(rm.status())


@pytest.mark.slow
@pytest.mark.parametrize("language", ["ja", "ko"])
def test_translate_part_shows_both_outputs_and_the_alignment(language):
    skip_without_weights()
    at = open_view("rnn_attention", {"text": "The big cat sees the ball in the park.", "target": language})
    code = " ".join(c.value for c in at.code)
    reference = "大きい 猫 は 公園 で ボール を 見る 。" if language == "ja" else "큰 고양이 는 공원 에서 공 을 본다 ."
    assert reference in code
    text = shown_text(at)
    assert "This is what the Transformer calls cross-attention" in text
    heat = figure_traces(at, 0)
    assert heat[0]["type"] == "heatmap"


@pytest.mark.slow
def test_hostile_text_is_shown_as_code_not_markup():
    skip_without_weights()
    at = open_view("rnn_attention", {"text": "<script>alert(1)</script> the cat sleeps"})
    assert "<script>" not in " ".join(str(m.value) for m in at.markdown)
    assert "outside the grammar" in shown_text(at)


def test_scores_part_reads_the_committed_reports():
    skip_without_weights()
    at = open_view("rnn_attention", {"part": "scores"})
    table = at.dataframe[0].value
    assert len(table) == 10 and table.iloc[0, 0] == "held-out exact match (all)"
    text = shown_text(at)
    assert (
        "Exact match:" in text
        and "Alignment:" in text
        and "Off the diagonal guess" in text
        and "move the words" not in text
    )


def _write_result(folder, decay_rec: float, decay_att: float, gru_ms: float):
    gradient = {"seed": 2, "pairs": 10, "distances": [0, 1, 2], "with_attention": [1.0, 1.0, decay_att],
                "recurrence_only": [1.0, 0.5, decay_rec], "counts": [10, 10, 5], "decay": decay_rec,
                "decay_attention": decay_att}  # fmt: skip
    rows = [{"n": n, "gru_ms": gru_ms * n, "torch_gru_ms": gru_ms * n / 4, "transformer_ms": 1.0,
             "gru_sequential_steps": 2 * n, "transformer_sequential_steps": 2} for n in (8, 64)]  # fmt: skip
    data = {"command": "python scripts/rnn_attention_compare.py", "date": "2026-01-01", "gradient": gradient,
            "timing": {"device": "cpu", "reps": 3, "rows": rows}, "load_average_before": [1.0]}  # fmt: skip
    (folder / "rnn_attention.json").write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("decay_rec,phrase", [(0.01, "the gradient vanishes with distance"),
                                              (0.5, "by less than ten times"), (1.0, "no vanishing")])  # fmt: skip
def test_gradient_part_says_what_the_numbers_show(tmp_path, monkeypatch, decay_rec, phrase):
    monkeypatch.setattr(core.results, "RESULTS_DIR", tmp_path)
    _write_result(tmp_path, decay_rec, 0.95, 1.0)
    at = open_view("rnn_attention", {"part": "gradient"})
    text = shown_text(at)
    assert phrase in text and "10 pairs, distances 0 to 2" in text
    assert len(at.get("plotly_chart")) == 1


@pytest.mark.parametrize("n,d,phrase", [(32, 128, "self-attention needs fewer operations"),
                                        (512, 128, "the recurrent layer needs fewer operations")])  # fmt: skip
def test_cost_part_follows_its_sliders_and_reads_the_timing(tmp_path, monkeypatch, n, d, phrase):
    monkeypatch.setattr(core.results, "RESULTS_DIR", tmp_path)
    _write_result(tmp_path, 0.01, 0.9, 0.5)
    at = open_view("rnn_attention", {"part": "cost", "n": str(n), "d": str(d)})
    text = shown_text(at)
    assert phrase in text and f"**{n - 1}** recurrent steps" in text
    assert "takes 32.0 × the Transformer encoder's time" in text and "still 8.0 × as torch's nn.GRU" in text
    assert len(at.get("plotly_chart")) == 2


def test_without_results_or_weights_the_page_explains(tmp_path, monkeypatch):
    monkeypatch.setattr(core.results, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(rm, "WEIGHTS_DIR", tmp_path)
    for part in ("gradient", "scores"):
        assert "Not measured yet" in shown_text(open_view("rnn_attention", {"part": part}))
    at = open_view("rnn_attention", {"text": "the cat sleeps"})
    assert "python scripts/train_rnn_attention.py" in " ".join(e.value for e in at.error)


@pytest.mark.slow
def test_the_page_speaks_japanese_and_korean():
    for lang, word in (("ja", "アテンション"), ("ko", "어텐션")):
        at = open_view("rnn_attention", {"part": "cost"}, state={"lang": lang})
        assert word in shown_text(at)
