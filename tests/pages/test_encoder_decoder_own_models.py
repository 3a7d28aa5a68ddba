"""/encoder-decoder takes a learner's own encoder-decoder folder in the steps part's model picker: a tiny Marian
folder translates the typed text greedily and draws the encoder's self-attention, the decoder's masked
self-attention and cross-attention (decoder queries x source tokens, axes named) with no exception or error; the
shipped model stays the default; a link naming a decoder-only folder is refused in words."""

from __future__ import annotations

import json

import pytest

from app import i18n
from core.models import registry
from tests.apptest_helpers import assert_no_exception, figure_titles, run_view, shown_text
from tests.tiny_models import build, forget_registrations

TEXT = "the cat sat on a mat"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """{family: registry key} of a tiny Marian and a tiny Llama, registered as a learner's own; undone afterwards."""
    root = tmp_path_factory.mktemp("own-seq2seq")
    before = set(registry.RECORDS)
    keys = {}
    for family in ("marian", "llama"):  # underscores: the page shows the names markdown-escaped, as typed
        build(family, root / f"tiny_{family}")
        keys[family] = registry.register_folder(root / f"tiny_{family}")
    yield keys
    forget_registrations(before)


def test_an_own_marian_translates_and_draws_cross_and_decoder_self_attention(folders):
    key = folders["marian"]
    at = run_view("encoder_decoder", {"model": key, "text": TEXT, "layer": "1", "head": "2", "step": "3"})
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="model").value == key, "the picker did not take the folder from the link"
    titles = figure_titles(at)
    assert any("Encoder self-attention, layer 1 head 2" in t for t in titles), titles
    assert any("masked self-attention, layer 1 head 2, up to step" in t for t in titles), titles
    assert any("Cross-attention, layer 1 head 2, up to step" in t for t in titles), titles
    cross = json.loads(at.get("plotly_chart")[[i for i, t in enumerate(titles) if t.startswith("Cross")][0]].proto.spec)
    heatmap = next(t for t in cross["data"] if t["type"] == "heatmap")
    assert [label.split(" ", 1)[-1] for label in heatmap["x"]][1:3] == ["the", "cat"]  # source tokens as keys
    assert all("→" in label for label in heatmap["y"])  # each row: the token read → the token written
    layout = cross["layout"]
    assert layout["xaxis"]["title"]["text"] and layout["yaxis"]["title"]["text"], "axes named"
    text = shown_text(at)
    assert "Greedy generation by tiny\\_marian" in text  # the folder's name with its markdown escaped
    assert at.code, "the greedy output as code text"
    assert any("reads" in t.value and "writes" in t.value for t in at.text)


def test_the_shipped_model_stays_the_default_and_a_decoder_folder_is_refused_in_words(folders, monkeypatch):
    from app import models

    monkeypatch.setattr(models, "load", lambda model: None)  # the shipped model is not the point here
    at = run_view("encoder_decoder", {"text": TEXT})
    assert_no_exception(at)
    picker = at.selectbox(key="model")
    assert picker.value == registry.ENCODER_DECODER and picker.options[0].startswith(
        i18n.text("en", "model_titles", picker.value)
    )
    assert any("tiny_marian" in label for label in picker.options)  # an encoder-decoder folder is offered
    assert not any("tiny_llama" in label for label in picker.options)
    at = run_view("encoder_decoder", {"model": folders["llama"], "text": TEXT})
    assert_no_exception(at)
    assert at.selectbox(key="model").value == registry.ENCODER_DECODER
    said = [w.value for w in at.warning if "cannot use" in w.value]
    assert said and "tiny\\_llama" in said[0] and "needs an encoder-decoder" in said[0], [w.value for w in at.warning]


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_a_folder_that_is_no_longer_an_encoder_decoder_is_refused_in_the_readers_words(tmp_path, lang):
    """A learner's encoder-decoder folder, picked on the page, since overwritten by a decoder (a folder is read as it
    is at each load: a checkpoint retrained in place loads anew): the page said why in core's English to every
    reader. It now says it in the reader's language, the folder named."""
    from app import i18n
    from tests.tiny_models import build_seq2seq

    before = set(registry.RECORDS)
    build_seq2seq("marian", tmp_path / "tiny_swapped")
    key = registry.register_folder(tmp_path / "tiny_swapped")
    try:
        build("llama", tmp_path / "tiny_swapped")  # saved over it: a decoder's config.json, weights and tokenizer
        at = run_view("encoder_decoder", {"model": key, "text": TEXT, "lang": lang})
        assert_no_exception(at)
        said = " ".join(e.value for e in at.error)
        assert i18n.text(lang, "models", "folder_not_encoder_decoder", path="tiny\\_swapped") in said, said
        assert "not an encoder-decoder" not in said, said
    finally:
        forget_registrations(before)


@pytest.mark.parametrize(
    "text",
    ["", "The cat sees the dog. " * 400, "猫は犬を見る。 😺", "<script>alert(1)</script> the *cat* [a](b)"],
    ids=["empty", "long", "cjk-emoji", "markup"],
)
def test_bad_text_on_an_own_model_is_a_message_not_an_exception(folders, text):
    at = run_view("encoder_decoder", {"model": folders["marian"], "text": text})
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    said = shown_text(at)
    if not text:
        assert "Type a source text" in said
    else:
        assert at.get("plotly_chart") and "Greedy generation by" in said
        assert ("Only the first 64 tokens are read" in said) == (len(text) > 1000)
    assert "<script>" not in " ".join(m.value for m in at.markdown)
