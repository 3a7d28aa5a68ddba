"""Pages ask for a capability, never for a model by name: a learner's tiny folders (decoders: Llama with GQA, Gemma 2
with soft-capping and sliding layers; an encoder: BERT) run on every page that can use them, with no exception and
no error; a page that needs a decoder, sent an encoder by a link, says so in words and shows its default."""

from __future__ import annotations

import pytest

from core.models import registry
from tests.apptest_helpers import assert_no_exception, run_view
from tests.tiny_models import TEXTS, build

DECODERS = ("llama", "gemma2")
ENCODERS = ("bert",)
PARTIAL_ROPE = ("gpt_neox",)  # RoPE on half of each head: not for the RoPE bands
SHORT = TEXTS[1]  # "a dog ran": three words of the tiny vocabulary
# the smallest settings of each page (URL parameters), so each run stays quick
ANY_MODEL_PAGES = {
    "attention": {"text": SHORT},
    "padded-batch": {"text": f"{SHORT}\n{TEXTS[0]}"},
    "head-detectors": {"detector": "previous_token"},
    "antecedents": {},
}
DECODER_PAGES = {
    "logit-lens": {"text": TEXTS[0]},
    "kv-cache": {"prompt": SHORT, "new": "2", "window": "2", "sinks": "1"},
    "ablation": {"part": "live", "claim": "induction", "k": "1", "draws": "1"},
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """{family: registry key} of tiny folders, registered as a learner's own; registrations undone afterwards."""
    root = tmp_path_factory.mktemp("own-models")
    before = set(registry.LOADERS)
    keys = {}
    for family in DECODERS + ENCODERS + PARTIAL_ROPE:
        build(family, root / f"tiny-{family}")
        keys[family] = registry.register_folder(root / f"tiny-{family}")
    yield keys
    for key in set(registry.LOADERS) - before:
        for table in (
            registry.LOADERS,
            registry.TITLES,
            registry.STATUS_CHECKS,
            registry.FOLDERS,
            registry.CAPABILITIES,
        ):
            table.pop(key, None)


def _runs_clean(topic: str, params: dict):
    at = run_view(topic, params=params)
    assert_no_exception(at)
    assert not at.error, (topic, [e.value for e in at.error])
    assert at.get("plotly_chart"), f"/{topic} drew no figure"
    assert not any("layer -1" in m.value for m in at.markdown), "a layer that does not exist"
    return at


@pytest.mark.parametrize("family", DECODERS + ENCODERS)
@pytest.mark.parametrize("topic", list(ANY_MODEL_PAGES))
def test_any_model_page_runs_on_an_own_folder(folders, topic, family):
    key = folders[family]
    at = _runs_clean(topic, {"model": key, **ANY_MODEL_PAGES[topic]})
    assert at.selectbox(key="model").value == key, "the picker did not take the folder from the link"


@pytest.mark.parametrize("family", DECODERS)
@pytest.mark.parametrize("topic", list(DECODER_PAGES))
def test_decoder_page_runs_on_an_own_decoder(folders, topic, family):
    key = folders[family]
    at = _runs_clean(topic, {"model": key, **DECODER_PAGES[topic]})
    assert at.selectbox(key="model").value == key, "the picker did not take the folder from the link"
    assert not any("cannot use" in w.value for w in at.warning)


@pytest.mark.parametrize("topic", list(DECODER_PAGES))
def test_a_decoder_page_refuses_an_encoder_in_words(folders, topic, monkeypatch):
    from app import models

    loaded = []
    monkeypatch.setattr(models, "load", lambda key: loaded.append(key))  # the default model is not the point here
    key = folders["bert"]
    at = run_view(topic, params={"model": key, **DECODER_PAGES[topic]})
    assert_no_exception(at)
    picker = at.selectbox(key="model")
    assert picker.value == "smollm2" and not any("tiny-bert" in label for label in picker.options)
    said = [w.value for w in at.warning if "cannot use" in w.value]
    assert said and "tiny-bert" in said[0] and "needs a decoder" in said[0], [w.value for w in at.warning]
    assert key not in loaded


# /positions: the learned part takes a model with a learned table (BERT), the RoPE bands one with RoPE on whole heads
POSITION_PARTS = {
    "learned": ({"part": "learned", "npos": "64", "pastpos": "3"}, ENCODERS, DECODERS),
    "rope": ({"part": "rope", "smol": "1", "text": SHORT, "bands": "2"}, DECODERS, ENCODERS + PARTIAL_ROPE),
}


@pytest.mark.parametrize("part", list(POSITION_PARTS))
def test_a_positions_part_runs_on_the_models_it_can_use_and_names_what_others_lack(folders, part, monkeypatch):
    params, usable, unusable = POSITION_PARTS[part]
    for family in usable:
        at = _runs_clean("positions", {"model": folders[family], **params})
        assert at.selectbox(key="model").value == folders[family]
    from app import models

    monkeypatch.setattr(models, "load", lambda key: None)  # the default model is not the point here
    for family in unusable:
        at = run_view("positions", params={"model": folders[family], **params})
        assert_no_exception(at)
        assert at.selectbox(key="model").value != folders[family]
        said = [w.value for w in at.warning if "cannot use" in w.value]
        assert said and f"tiny-{family}" in said[0] and "it needs" in said[0], [w.value for w in at.warning]


def test_a_link_to_a_shipped_model_a_page_does_not_use_is_answered_in_words(monkeypatch):
    """MiniLM (an encoder) on /logit-lens: what the page needs; the MoE (a decoder, not offered there): that the page
    does not offer it. Both read from the shipped models' configs, no weights loaded."""
    from app import models

    monkeypatch.setattr(models, "load", lambda key: None)
    for asked, words in (("minilm", "needs a decoder"), ("moe", "does not offer")):
        at = run_view("logit-lens", params={"model": asked})
        assert_no_exception(at)
        assert at.selectbox(key="model").value == "smollm2"
        said = [w.value for w in at.warning if words in w.value]
        assert said and registry.TITLES[asked] in said[0], [w.value for w in at.warning]
