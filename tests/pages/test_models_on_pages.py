"""Pages ask for a capability, never for a model by name: a learner's tiny folders (decoders: Llama with GQA, Gemma 2
with soft-capping and sliding layers; an encoder: BERT) run on every page that can use them, with no exception and
no error; a page that needs a decoder, sent an encoder by a link, says so in words and shows its default."""

from __future__ import annotations

import pytest

from app import i18n
from core.models import registry
from tests.apptest_helpers import assert_no_exception, figure_titles, run_view
from tests.tiny_models import TEXTS, registered_folders

DECODERS = ("llama", "gemma2", "gptj", "cohere", "bloom")  # GPT-J: partial, interleaved RoPE; Cohere: a logit
# scale; Bloom: ALiBi inside its own attention code
ENCODERS = ("bert",)
PARTIAL_ROPE = ("gpt_neox", "gptj")  # RoPE on half of each head: not for the RoPE bands or /rope-scaling
WHOLE_ROPE = tuple(family for family in DECODERS if family not in PARTIAL_ROPE + ("bloom",))
ANY_MASK = tuple(family for family in DECODERS if family != "bloom")  # Bloom builds ALiBi from a padding mask
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
    with registered_folders(tmp_path_factory.mktemp("own-models"), DECODERS + ENCODERS + ("gpt_neox",)) as keys:
        yield keys


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
    "rope": ({"part": "rope", "smol": "1", "text": SHORT, "bands": "2"}, WHOLE_ROPE, ENCODERS + PARTIAL_ROPE),
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
        escaped = f"tiny-{family}".replace("_", "\\_")  # the name as markdown shows it as typed (name_in_text)
        assert said and escaped in said[0] and "it needs" in said[0], [w.value for w in at.warning]


def test_the_learned_part_names_the_table_of_the_model_it_reads(folders):
    """A position past a learner's BERT table (64 rows) is missing from that model's table, said with its name, and
    the similarity map's title names no other model."""
    at = run_view("positions", params={"model": folders["bert"], "part": "learned", "npos": "64", "pastpos": "64"})
    assert_no_exception(at)
    said = [e.value for e in at.error]
    assert any("the table of tiny-bert stops at row 63 (64 positions)" in e for e in said), said
    assert not any("MiniLM" in t for t in figure_titles(at)), figure_titles(at)
    assert "MiniLM's real position vectors" not in "\n".join(m.value for m in at.markdown)


def test_why_head_gives_the_wavelengths_of_the_model_it_reads(folders):
    """/why-head's bands sentence on a learner's Llama (base 10,000, heads of 8): pair 0 turns once every 2π tokens,
    the last pair once every 2π · base^((d − 2)/d), read from the folder's config.json, not SmolLM2's 438,460."""
    import json
    import math

    key = folders["llama"]
    config = json.loads((registry.RECORDS[key].folder / "config.json").read_text())
    d = config["hidden_size"] // config["num_attention_heads"]
    base = config.get("rope_theta") or config["rope_parameters"]["rope_theta"]
    at = run_view("why-head", params={"model": key, "text": SHORT})
    assert_no_exception(at)
    text = "\n".join(m.value for m in at.markdown)
    slowest = 2 * math.pi * base ** ((d - 2) / d)
    assert f"(a full turn every {2 * math.pi:,.1f} tokens in this model)" in text, text
    assert f"(one turn every {slowest:,.0f} tokens)" in text and "hundreds of thousands" not in text
    # the choice of part names no shipped model either: each part's picker may hold the learner's
    parts = [o for r in at.radio for o in r.options]
    assert "Rotary positions" in parts and not any("SmolLM2" in o or "MiniLM" in o for o in parts), parts


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
        assert said and i18n.text("en", "model_titles", asked) in said[0], [w.value for w in at.warning]


# live runs of the loss of every next token: /transformer-xl's five masks on any decoder, /rope-scaling's scaled RoPE
# on a decoder with RoPE on whole heads
LIVE_PARTS = {
    "transformer-xl": {"live": "1", "text": TEXTS[0], "lseg": "4", "lwin": "4", "lsinks": "1"},
    "rope-scaling": {"live_n": "256", "live_method": "yarn", "live_factor": "2"},
}


@pytest.mark.parametrize(
    "topic, family",
    [("transformer-xl", family) for family in ANY_MASK] + [("rope-scaling", family) for family in WHOLE_ROPE],
)
def test_a_live_loss_run_takes_an_own_decoder(folders, topic, family, monkeypatch):
    import streamlit

    key, said, spinner = folders[family], [], streamlit.spinner
    monkeypatch.setattr(streamlit, "spinner", lambda text="", *a, **k: said.append(text) or spinner(text, *a, **k))
    at = run_view(topic, params={"model": key, **LIVE_PARTS[topic]})
    if topic == "rope-scaling":
        at.button(key="live-run").click().run()
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="model").value == key
    titles = figure_titles(at)
    if topic == "rope-scaling":
        assert any("Live run" in t for t in titles), titles
    else:
        assert f"tiny-{family}" in "\n".join(m.value for m in at.markdown)  # the live text names the model run
        assert said and f"tiny-{family}" in said[-1] and "SmolLM2" not in "".join(said), said  # so does the wait
        # five masks (one figure each), reach, the two committed curves (SmolLM2's), the live curve
        assert len(titles) == 9, titles


def test_kv_cache_names_what_a_latent_attention_model_lacks(tmp_path, monkeypatch):
    """DeepSeek-V3 caches a compressed latent, not keys and values per head: /kv-cache says so in words and shows
    its default instead of a memory formula that does not describe it."""
    from app import models

    monkeypatch.setattr(models, "load", lambda key: None)  # the default model is not the point here
    with registered_folders(tmp_path, ("deepseek_v3",)) as keys:
        at = run_view("kv-cache", params={"model": keys["deepseek_v3"], **DECODER_PAGES["kv-cache"]})
        assert_no_exception(at)
        assert at.selectbox(key="model").value == "smollm2"
        said = [w.value for w in at.warning if "cannot use" in w.value]
        assert said and "tiny-deepseek" in said[0] and "latent attention" in said[0], [w.value for w in at.warning]


def test_transformer_xl_live_names_what_bloom_lacks(folders, monkeypatch):
    from app import models

    monkeypatch.setattr(models, "load", lambda key: None)  # the default model is not the point here
    at = run_view("transformer-xl", params={"model": folders["bloom"], **LIVE_PARTS["transformer-xl"]})
    assert_no_exception(at)
    assert at.selectbox(key="model").value == "smollm2"
    said = [w.value for w in at.warning if "cannot use" in w.value]
    assert said and "tiny-bloom" in said[0] and "any mask" in said[0], [w.value for w in at.warning]


def test_rope_scaling_live_names_what_a_model_without_rope_lacks(folders, monkeypatch):
    from app import models

    monkeypatch.setattr(models, "load", lambda key: None)  # the default model is not the point here
    at = run_view("rope-scaling", params={"model": folders["gpt_neox"], **LIVE_PARTS["rope-scaling"]})
    assert_no_exception(at)
    assert at.selectbox(key="model").value == "smollm2"
    said = [w.value for w in at.warning if "cannot use" in w.value]
    assert said and "tiny-gpt\\_neox" in said[0] and "RoPE" in said[0], [w.value for w in at.warning]


def test_rope_scaling_live_refuses_a_rope_per_layer_type_in_words(tmp_path, monkeypatch):
    """Gemma 3's RoPE differs by layer type: /rope-scaling does not offer it (the live run raised a KeyError)."""
    from app import models

    monkeypatch.setattr(models, "load", lambda key: None)  # the default model is not the point here
    with registered_folders(tmp_path, ("gemma3",)) as keys:
        at = run_view("rope-scaling", params={"model": keys["gemma3"], **LIVE_PARTS["rope-scaling"]})
        assert_no_exception(at)
        assert at.selectbox(key="model").value == "smollm2"
        said = [w.value for w in at.warning if "cannot use" in w.value]
        assert said and "tiny-gemma3" in said[0] and "one base for every layer" in said[0], [
            w.value for w in at.warning
        ]


@pytest.mark.parametrize("topic", ["logit-lens", "kv-cache"])
def test_a_decoder_pages_words_name_the_chosen_model(folders, topic, monkeypatch):
    """The intro and the empty-text hint name the model the picker holds: the learner's folder, or SmolLM2 (the
    default) by its catalog title; a learner's model is never called SmolLM2."""
    from app import models

    monkeypatch.setattr(models, "load", lambda key: None)  # the words come before any weights
    empty = {"logit-lens": {"text": ""}, "kv-cache": {"prompt": ""}}[topic]
    for key in (folders["llama"], "smollm2"):
        name = i18n.text("en", "model_titles", key) if key == "smollm2" else registry.title(key)
        at = run_view(topic, params={"model": key, **DECODER_PAGES[topic]})
        assert_no_exception(at)
        intro = [m.value for m in at.markdown if name in m.value]
        shown = [m.value for m in at.markdown]
        assert intro and ("decoder" in intro[0] or "predicts the next token" in intro[0]), shown
        if key != "smollm2":
            assert not any("SmolLM2" in m.value for m in at.markdown)
        if topic == "logit-lens":  # /kv-cache says it after loading the model (here: not loaded)
            hint = run_view(topic, params={"model": key, **empty})
            assert any(name in i.value for i in hint.info), [i.value for i in hint.info]


@pytest.mark.parametrize("part", ["layer", "order"])
def test_multi_head_walks_an_own_bert_and_names_what_a_decoder_lacks(folders, part, monkeypatch):
    at = run_view("multi-head", params={"model": folders["bert"], "part": part, "text": SHORT})
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="model").value == folders["bert"]
    checked = "reproduces transformers' own output" if part == "layer" else "Without positions"
    assert any(checked in s.value for s in at.success), [s.value for s in at.success]
    if part == "order":  # the sentence names the model that ran, not the default
        said = next(m.value for m in at.markdown if "permutation equivariance" in m.value)
        assert "layer 0 of tiny-bert runs" in said and "MiniLM" not in said, said
    from app import models

    monkeypatch.setattr(models, "load", lambda key: None)  # the default model is not the point here
    at = run_view("multi-head", params={"model": folders["llama"], "part": part, "text": SHORT})
    assert_no_exception(at)
    assert at.selectbox(key="model").value == "minilm"
    said = [w.value for w in at.warning if "cannot use" in w.value]
    assert said and "tiny-llama" in said[0] and "BERT-style" in said[0], [w.value for w in at.warning]


def test_kv_cache_runs_past_a_sliding_window_and_says_eviction_is_not_measured(folders):
    at = _runs_clean("kv-cache", {"model": folders["gemma2"], "prompt": TEXTS[0], "new": "6"})  # 19 + 6 > W = 4
    said = [i.value for i in at.info if "sliding-window layers" in i.value]
    assert said and "tiny-gemma2" in said[0], [i.value for i in at.info]
    checked = [c.value for c in at.caption if "without the cache to within" in c.value]
    assert checked and float(checked[0].split("to within ")[1].split(" ")[0]) <= 1e-5, checked
    at = _runs_clean("kv-cache", {"model": folders["llama"], "prompt": TEXTS[0], "new": "6"})
    assert not any("sliding-window layers" in i.value for i in at.info)  # a full cache: eviction measured


@pytest.mark.parametrize(
    "lang, says",
    [("en", ["2 of the 3 layers", "W = 4", "never read again"]), ("ja", ["3 層のうち 2 層", "W = 4", "二度と読まれない"]),
     ("ko", ["3개 층 중 2개 층", "W = 4", "다시 읽지 않으므로"])],
)  # fmt: skip
def test_kv_cache_says_why_a_sliding_layers_cache_stops_growing(folders, lang, says):
    """Gemma 2's two sliding layers (W = 4) past their window: the page says why their cache stops at W - 1, in the
    reader's language."""
    at = run_view("kv-cache", params={"model": folders["gemma2"], "prompt": TEXTS[0], "new": "6"}, state={"lang": lang})
    assert_no_exception(at)
    said = [c.value for c in at.caption if says[-1] in c.value]
    assert said and all(part in said[0] for part in says), [c.value for c in at.caption]


def test_a_t5_folder_is_offered_where_a_contract_reads_it_and_refused_in_words_elsewhere(tmp_path, monkeypatch):
    """T5 adds its relative position buckets inside its own attention code: the attention contract cannot record
    it, so /attention names that in words; /encoder-decoder (the seq2seq contract) offers it."""
    from app import models

    with registered_folders(tmp_path, ("t5",)) as keys:
        key = keys["t5"]
        assert not registry.RECORDS[key].capabilities.through_attention_interface
        monkeypatch.setattr(models, "load", lambda k: None)  # the default model is not the point here
        at = run_view("attention", params={"model": key, "text": SHORT})
        assert_no_exception(at)
        assert key not in at.selectbox(key="model").options
        said = [w.value for w in at.warning if "cannot use" in w.value]
        assert said and "attention interface" in said[0], [w.value for w in at.warning]
        monkeypatch.undo()
        at = run_view("encoder-decoder", params={"model": key})
        assert_no_exception(at)
        assert at.selectbox(key="model").value == key
        assert any("whole on /encoder-decoder" in o for o in at.selectbox(key="model").options)


# the bad inputs of the brief, typed on the pages that read a text with a learner's own model
BAD_TEXTS = [
    "",
    "   ",
    "x" * 20_000,
    "🐱🐶 " * 50,
    "猫がマットに座った。",
    "고양이가 매트에 앉았다",
    "<script>alert(1)</script><b>x</b>",
]
TEXT_BOXES = {
    "attention": "text",
    "padded-batch": "text",
    "logit-lens": "text",
    "kv-cache": "prompt",
    "multi-head": "text",
}


@pytest.mark.parametrize("topic", list(TEXT_BOXES))
def test_bad_text_on_an_own_model_is_a_message_never_an_exception(folders, topic):
    family = "bert" if topic == "multi-head" else "llama"
    at = run_view(topic, params={"model": folders[family], **DECODER_PAGES.get(topic, {})})
    assert_no_exception(at)
    for text in BAD_TEXTS:
        at.text_area(key=TEXT_BOXES[topic]).input(text).run()
        assert_no_exception(at)
        assert not at.error, (topic, text[:20], [e.value for e in at.error])


@pytest.mark.parametrize("lang", ["ja", "ko"])
@pytest.mark.parametrize("model", ["minilm", "smollm2", "moe", "own"])
def test_where_the_weights_come_from_is_said_in_the_readers_words(folders, lang, model):
    """The caption under a model's picker (where its weights come from) was core's English sentence on every page in
    every language; core now names the source (a key and its fields) and the caption is the reader's words."""
    from app import i18n

    key = folders["llama"] if model == "own" else model
    at = run_view("attention", params={"lang": lang, "model": key, "text": SHORT})
    assert_no_exception(at)
    said = [c.value for c in at.caption if c.value.startswith(i18n.text(lang, "models", "weights", note=""))]
    assert len(said) == 1, [c.value for c in at.caption]
    english = ("de-quantised", "as published", "from the folder", "from the hub", "trained by this repo")
    assert not any(word in said[0] for word in english), said[0]
