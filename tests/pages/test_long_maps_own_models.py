"""/long-maps on a learner's own models, asked for by capability: a tiny Llama (decoder, RoPE, grouped-query heads)
and a tiny BERT (encoder, learned position table of 64, not causal) run through "Compute the maps"; the layer and
head ranges, the lengths offered and the causal mask follow each model's capabilities; the pooled maps and the zoom
equal the weights of the model's own full forward pass (Trace.layer_attention, itself checked against
transformers' eager attention), averaged over blocks here by numpy. GPT-2 (a decoder's learned table), RoBERTa
(a table numbered from 2) and Qwen2 (one key/value head) run clean too; a model whose weights are not softmax(q . k)
alone (Mistral's sliding window, Gemma 2's soft-capping, gpt-oss' sinks) is refused in words."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core import long_maps as lm
from core.models import registry
from core.rope_scaling.long_context import load_long_text
from tests.apptest_helpers import assert_no_exception, figure_traces, plotted_values, run_view, shown_text
from tests.references import assert_close_in_scale
from tests.tiny_models import registered_folders

FAMILIES = ("llama", "bert", "mistral", "gpt2", "roberta", "qwen2", "gemma2", "gpt_oss")
MORE = ("gpt2", "roberta", "qwen2")  # a decoder with a learned table, RoBERTa's offset table, one key/value head
SIDE = 64  # cells a side on screen (the page's smallest): llama's 512 tokens in blocks of 8, bert's 64 one by one
ZOOM = 16


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """{family: registry key} of tiny folders registered as a learner's own; registrations undone afterwards."""
    with registered_folders(tmp_path_factory.mktemp("long-maps-models"), FAMILIES) as keys:
        yield keys


def _computed(key: str, params: dict):
    at = run_view("long-maps", params={"src": key, "side": str(SIDE), "log": "0", "zsize": str(ZOOM), **params})
    assert_no_exception(at)
    assert at.radio(key="src").value == key
    next(b for b in at.button if b.label == "Compute the maps").click().run()
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) == 3  # head shares, pooled map, zoom
    return at


def _block_reduce(full: np.ndarray, side: int, how) -> np.ndarray:
    """(side, side) mean or max of equal square blocks of an (n, n) matrix (n a multiple of side)."""
    b = full.shape[-1] // side
    return how(full.reshape(side, b, side, b), axis=(1, 3))


def _reference(key: str, n: int, layer: int) -> np.ndarray:
    """(H, n, n) float64 weights of `layer` from the model's full Trace of the page's document."""
    model = registry.RECORDS[key].load()
    trace = model.run(lm.document_batch(model, load_long_text(), n), logits=False, hidden_states=False)
    return trace.layer_attention(layer).to(torch.float64).numpy()


def _check_map(at, full: np.ndarray, head: int, causal: bool) -> None:
    shown = plotted_values(figure_traces(at, 1)[0]["z"]).astype(np.float64)
    stat = at.radio(key="stat").value
    expected = _block_reduce(full[head], SIDE, np.mean if stat == "mean" else np.max)
    masked = np.isnan(shown)
    assert masked.any() == causal, "grey cells only where a causal mask hides every key"
    assert np.all(expected[masked] == 0), "a grey cell whose keys a query can see"
    assert_close_in_scale(np.where(masked, 0.0, shown), expected, what=f"{stat} map, head {head}")


def test_a_decoder_with_rope_runs_past_its_trained_positions_with_a_warning(folders):
    key, caps = folders["llama"], registry.RECORDS[folders["llama"]].capabilities
    layer, head, n = caps.n_layers - 1, caps.n_heads - 1, 512
    at = _computed(key, {"n": str(n), "layer": str(layer), "head": str(head)})
    labels = at.radio(key="src").options  # SmolLM2 first, then the learner's models that fit, then random
    assert labels[0].startswith("SmolLM2") and labels[-1].startswith("RANDOM")
    assert any("tiny-llama" in s for s in labels) and any("tiny-bert" in s for s in labels)
    assert at.slider(key="layer").max == caps.n_layers - 1 and at.slider(key="head").max == caps.n_heads - 1
    assert "8192" in at.selectbox(key="n").options  # RoPE: no table to stop at
    said = shown_text(at)
    assert any("tiny-llama" in w.value and f"{caps.max_positions} positions" in w.value for w in at.warning), said
    assert "SmolLM2" not in said  # the learner's model is never called SmolLM2
    assert f"{n:,} tokens, {caps.n_heads} heads, causal" in said
    full = _reference(key, n, layer)
    _check_map(at, full, head, causal=True)
    at.radio(key="stat").set_value("max").run()
    _check_map(at, full, head, causal=True)
    zoom = plotted_values(figure_traces(at, 2)[0]["z"]).astype(np.float64)
    window = full[head, n - ZOOM :, n - ZOOM :]  # the default window: the last tokens, on the diagonal
    assert_close_in_scale(np.nan_to_num(zoom), window, what="zoom")


def test_an_encoder_with_a_learned_table_stops_at_its_positions_and_masks_nothing(folders):
    key, caps = folders["bert"], registry.RECORDS[folders["bert"]].capabilities
    at = _computed(key, {"n": "512", "layer": "1", "head": "2"})  # 512: past the table, so the link is not taken
    limit = caps.max_positions
    assert at.selectbox(key="n").options == [str(limit)] and at.selectbox(key="n").value == str(limit)
    assert any(f"learned table of {limit} positions" in i.value and "tiny-bert" in i.value for i in at.info)
    assert at.slider(key="layer").max == caps.n_layers - 1 and at.slider(key="head").max == caps.n_heads - 1
    said = shown_text(at)
    assert "bidirectional" in said and "no cell is masked" in said and "causal mask" not in said
    assert "SmolLM2" not in said and "trained on" not in said  # a table: no run past it to warn about
    full = _reference(key, limit, 1)
    _check_map(at, full, 2, causal=False)
    zoom = plotted_values(figure_traces(at, 2)[0]["z"]).astype(np.float64)
    assert not np.isnan(zoom).any()
    assert_close_in_scale(zoom, full[2, limit - ZOOM :, limit - ZOOM :], what="zoom")


@pytest.mark.parametrize("family", MORE)
def test_other_plain_softmax_families_run_through_compute(folders, family):
    """Each runs clean at the longest length it offers up to 512 (a learned table stops below), its mask as its kind."""
    key, caps = folders[family], registry.RECORDS[folders[family]].capabilities
    at = _computed(key, {"n": "512", "layer": "0"})
    n = int(at.selectbox(key="n").value)
    assert n <= 512 and (n == 512) == (caps.positions.kind == "rope")
    assert at.slider(key="head").max == caps.n_heads - 1
    masked = np.isnan(plotted_values(figure_traces(at, 1)[0]["z"]).astype(np.float64))
    assert masked.any() == (caps.kind == "decoder")
    assert "SmolLM2" not in shown_text(at)


@pytest.mark.parametrize("family", ["mistral", "gemma2", "gpt_oss"])
def test_a_model_whose_weights_are_not_softmax_of_q_k_alone_is_refused_in_words(folders, family):
    """A sliding window (Mistral), soft-capping (Gemma 2), learned sinks (gpt-oss): not offered; a link to one gets
    what the page needs, and SmolLM2."""
    at = run_view("long-maps", params={"src": folders[family]})
    assert_no_exception(at)
    assert not any(f"tiny-{family}" in s for s in at.radio(key="src").options)
    assert at.radio(key="src").value == "smollm2"
    said = [w.value for w in at.warning if "cannot use" in w.value]
    name = f"tiny-{family}".replace("_", "\\_")  # escaped for markdown: shown as typed, never as emphasis
    assert said and name in said[0] and "sliding window" in said[0], [w.value for w in at.warning]


def test_switching_models_in_one_session_keeps_every_widget_in_range(folders):
    """SmolLM2's layer 12 and 2,048 tokens do not exist on a 3-layer BERT with 64 positions: each widget falls back
    to the new model's default, and back again."""
    at = run_view("long-maps", params={"layer": "12", "head": "8"})
    assert_no_exception(at)
    for key, layers, n in ((folders["bert"], 3, "64"), (folders["llama"], 3, "2048"), ("smollm2", 30, "2048")):
        at.radio(key="src").set_value(key).run()
        assert_no_exception(at)
        assert at.slider(key="layer").max == layers - 1 and at.slider(key="layer").value <= layers - 1
        assert at.selectbox(key="n").value == n and at.slider(key="head").value < registry.capabilities(key).n_heads


def test_a_learners_model_above_the_servers_budget_is_refused_in_words(folders, monkeypatch):
    from core.models import local

    monkeypatch.setattr(local, "MAX_RUN_SECONDS", 0.0)  # every run of a loaded, checked model is then too slow
    at = run_view("long-maps", params={"src": folders["llama"], "n": "512"})
    next(b for b in at.button if b.label == "Compute the maps").click().run()
    assert_no_exception(at)
    assert any("would refuse" in w.value for w in at.warning), [w.value for w in at.warning]
    assert any("512 tokens would take about" in c.value for c in at.caption)
    assert not at.get("plotly_chart") or len(at.get("plotly_chart")) < 3  # no maps computed
