"""/encoder-decoder headless: the three parts render, teacher forcing needs a reference, unknown words are named,
bad input is a message; the alignment panel reads results/ and says when no head beats the diagonal; without the
shipped weights the page explains and the app keeps working."""

import json

import pytest

import core.results
from core.encoder_decoder import grammar
from core.encoder_decoder import model as ed
from core.models import seq2seq
from tests.apptest_helpers import figure_titles, figure_traces, open_view, shown_text


def skip_without_weights():
    if ed.status():
        pytest.skip(ed.status())


HOSTILE = {
    "empty": "",
    "huge": "The cat sees the dog. " * 950,  # ~20,000 characters
    "emoji": "The 🐱 sees the 🐶 😺.",
    "cjk": "猫は犬を見る。我爱自然语言处理。",
    "korean": "고양이는 개를 본다.",
    "script": "<script>alert(1)</script> the cat <img src=x onerror=alert(2)>",
    "unknown": "The cat sees the xylophone.",
}


@pytest.mark.slow
@pytest.mark.parametrize("language", ["ja", "ko"])
def test_steps_part_translates_and_draws_the_three_attentions(language):
    skip_without_weights()
    at = open_view("encoder_decoder", {"text": "The big cat sees the ball in the park.", "target": language,
                                       "mode": "forced", "step": "3", "layer": "1", "head": "2"})  # fmt: skip
    text = shown_text(at)
    reference = "大きい 猫 は 公園 で ボール を 見る 。" if language == "ja" else "큰 고양이 는 공원 에서 공 을 본다 ."
    assert reference in text and "Teacher forcing" in text
    names = figure_titles(at)
    assert any("Encoder self-attention, layer 1 head 2" in n for n in names)
    assert any("masked self-attention, layer 1 head 2, up to step 3" in n for n in names)
    assert any("Cross-attention, layer 1 head 2, up to step 3" in n for n in names)
    cross = figure_traces(at, [i for i, n in enumerate(names) if n.startswith("Cross")][0])
    assert any(t["type"] == "scatter" for t in cross)  # the grammar's alignment marked
    assert at.dataframe, "the teacher forcing / free generation table"


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(HOSTILE))
def test_bad_text_is_a_message_not_an_exception(kind):
    skip_without_weights()
    for mode in ("free", "forced"):
        at = open_view("encoder_decoder", {"text": HOSTILE[kind], "mode": mode})
        text = shown_text(at)
        if kind == "empty":
            assert "Type an English sentence" in text
        else:
            assert "Free generation writes" in text
            assert "no reference translation" in text or kind == "huge"
        assert "<script>" not in " ".join(str(m.value) for m in at.markdown).replace("`<script>", "")
    if kind == "unknown":
        assert "`xylophone`" in text
    if kind == "huge":
        assert "Only the first 23 words" in text


@pytest.mark.slow
def test_stack_part_shows_the_shapes_of_the_sentence():
    skip_without_weights()
    at = open_view("encoder_decoder", {"part": "stack", "text": "The cat sleeps.", "target": "ko"})
    text = shown_text(at)
    assert "S = 6" in text  # <2ko> the cat sleeps . </s>
    table = at.dataframe[0].value
    assert len(table) == 3 and table.iloc[0, 4] == "4 × 6 × 6"  # H × S × S
    assert len(figure_traces(at, 0)) == 0  # the diagram is shapes and annotations only
    # the original Transformer's sizes, counted as torch.nn.Transformer builds them (tests/core/..._original.py)
    assert "6 self-attention, 6 masked self-attention and 6 cross-attention sublayers (18 in all)" in text
    assert "44,140,544 for the whole stack" in text and "63,084,544 in all, about 63.1M" in text
    # 63,084,544 does not round to 65M: the page gives both numbers and their gap, never "rounds"
    assert "table 3 reports 65M for this model, 1.9M more than this count" in text and "round" not in text
    # the three architectures, with example families and this app's model for each
    arch = next(d for d in at.dataframe if "architecture" in d.value.columns).value
    assert arch["architecture"].tolist() == ["encoder-only", "decoder-only", "encoder-decoder"]
    assert arch["example models (transformers model_type)"].tolist()[2] == "t5, bart, marian"
    apps = arch["this app's models"].tolist()
    assert "MiniLM" in apps[0] and "SmolLM2" in apps[1] and "Marian" in apps[2]


@pytest.mark.slow
def test_the_page_speaks_japanese_and_korean():
    skip_without_weights()
    for lang, word in (("ja", "エンコーダ"), ("ko", "인코더")):
        at = open_view("encoder_decoder", {}, state={"lang": lang})
        assert word in shown_text(at)


@pytest.mark.slow
def test_the_intro_counts_the_grammars_words():
    skip_without_weights()
    words, forms = grammar.english_word_counts()
    assert "The grammar is tiny (66 English words in 132 forms" in shown_text(open_view("encoder_decoder", {}))
    assert (words, forms) == (66, 132)


def _write_result(folder, verdict: str, best: float, diagonal: float):
    heads = [{"layer": l, "head": h, "hits": 1, "words": 10, "accuracy": best if (l, h) == (1, 2) else 0.1,
              "low": best - 0.05 if (l, h) == (1, 2) else 0.05, "high": best + 0.05 if (l, h) == (1, 2) else 0.15}
             for l in range(2) for h in range(4)]  # fmt: skip
    data = {"command": "python scripts/encoder_decoder_alignment.py", "date": "2026-01-01", "layers": 2,
            "heads_per_layer": 4, "pairs": 500, "words": 3000, "heads": heads,
            "diagonal": {"accuracy": diagonal, "low": diagonal - 0.02, "high": diagonal + 0.02}, "chance": 0.12,
            "best": [heads[6]], "verdict": verdict,
            "off_diagonal": {"best_head": {**heads[6], "words": 700, "accuracy": 0.61}, "chance": 0.13},
            "crossing": {"best_head": {**heads[6], "words": 500, "accuracy": 0.55}, "chance": 0.11,
                         "off_diagonal_words": 450}}  # fmt: skip
    (folder / "encoder_decoder_alignment.json").write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(
    "verdict,phrase", [("aligns", "at least one head aligns"), ("diagonal", "no head beats the diagonal baseline")]
)
def test_alignment_panel_reads_the_result_and_says_the_verdict(tmp_path, monkeypatch, verdict, phrase):
    monkeypatch.setattr(core.results, "RESULTS_DIR", tmp_path)
    _write_result(tmp_path, verdict, 0.8 if verdict == "aligns" else 0.4, 0.35)
    at = open_view("encoder_decoder", {"part": "alignment"})
    text = shown_text(at)
    assert phrase in text and "layer 1 head 2" in text and "Diagonal baseline: 35.0%" in text
    assert "on the 700 words whose aligned source word is NOT the diagonal guess" in text and "61.0%" in text
    # off the diagonal is not "reordered": 450 of the 700 cross another alignment, 250 are off by length only
    assert "450 cross another word's alignment, the other 250 are off the guess only because" in text
    assert "Where the word order differs: on the 500 words whose alignment crosses" in text and "55.0%" in text
    assert len(at.get("plotly_chart")) == 2


def test_alignment_panel_without_a_result_says_how_to_measure(tmp_path, monkeypatch):
    monkeypatch.setattr(core.results, "RESULTS_DIR", tmp_path)
    (tmp_path / "encoder_decoder_alignment.json").write_text('{"heads": "<script>"}', encoding="utf-8")
    at = open_view("encoder_decoder", {"part": "alignment"})
    assert "scripts/encoder_decoder_alignment.py" in shown_text(at)


def test_without_the_weights_the_page_explains_and_does_not_break(tmp_path, monkeypatch):
    monkeypatch.setattr(seq2seq, "SHIPPED_FOLDER", tmp_path)  # where the registry's record looks for the weights
    at = open_view("encoder_decoder", {"text": "the cat sleeps"})
    assert "train_encoder_decoder.py" in shown_text(at)
