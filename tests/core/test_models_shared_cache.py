"""core.models.registry.shared: one copy of each model per process, for the pages (app/models.py) and the lessons'
answer functions (core/lessons/questions.py) alike; one load per key however many threads ask; learner folders
bounded (least recently used evicted, shipped models never); a failed load is not kept.

Every loader here is a stand-in that counts its calls (no real model is loaded), except the fixed-folder test,
which loads a tiny random BERT folder (tests/tiny_models.py)."""

from __future__ import annotations

import dataclasses
import shutil
import threading
from collections import OrderedDict

import pytest

from core.models import ModelUnavailable, registry
from core.models.local import ModelFolderError
from tests.tiny_models import stand_in


class Counted:
    """A loader that returns a new object on each call and counts the calls; `fail` first calls raise."""

    def __init__(self, fail: int = 0, wait: threading.Event | None = None):
        self.calls, self.fail, self.wait = 0, fail, wait
        self.entered = threading.Event()
        self._lock = threading.Lock()

    def __call__(self):
        with self._lock:
            self.calls += 1
            n = self.calls
        self.entered.set()
        if self.wait is not None:
            assert self.wait.wait(timeout=10), "the test never released the load"
        if n <= self.fail:
            raise ModelFolderError(f"broken on call {n}")
        return object()


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    """Registry tables and the shared cache as copies: whatever a test registers or loads is gone afterwards, and
    models other tests of this process loaded stay loaded."""
    monkeypatch.setattr(registry, "RECORDS", dict(registry.RECORDS))
    monkeypatch.setattr(registry, "_shared", OrderedDict())
    monkeypatch.setattr(registry, "_key_locks", {})
    monkeypatch.delenv(registry.OWN_MODELS_KEPT_ENV, raising=False)


def test_pages_and_lessons_get_the_same_object(monkeypatch):
    from app import models as app_models
    from core.attention import STATE as attention_state
    from core.models import moe_model
    from core.moe.state import STATE as moe_state

    loaders = {key: Counted() for key in ("minilm", "smollm2", "moe")}
    for key, loader in loaders.items():
        stand_in(monkeypatch, key, loader)
    variants = {v: Counted() for v in moe_model.VARIANTS if registry.moe_key(v) != "moe"}
    for v, loader in variants.items():
        stand_in(monkeypatch, registry.moe_key(v), loader)
    ed = Counted()
    stand_in(monkeypatch, registry.ENCODER_DECODER, ed)

    for key in loaders:
        lessons_model = attention_state.read({"model": key}).model_object  # what the answer functions use
        assert app_models.load(key) is lessons_model is registry.shared(key)
    checkpoints = {v: app_models.load(registry.moe_key(v)) for v in moe_model.VARIANTS}
    assert set(checkpoints) == set(moe_model.VARIANTS)
    for v, model in checkpoints.items():
        assert moe_state.read({"ckpt": v}).model_object is model
    assert checkpoints["balanced"] is app_models.load("moe")  # the registry's "moe" is the balanced checkpoint
    assert app_models.load(registry.ENCODER_DECODER) is registry.shared(
        registry.ENCODER_DECODER
    )  # as the answers read it
    # each loaded exactly once, whoever asked first and however often
    assert [loader.calls for loader in (*loaders.values(), *variants.values(), ed)] == [1] * (
        len(loaders) + len(variants) + 1
    )


def test_eight_threads_asking_one_key_cause_one_load(monkeypatch):
    release = threading.Event()
    loader = Counted(wait=release)
    stand_in(monkeypatch, "test:one", loader)
    start = threading.Barrier(8)
    got = [None] * 8

    def ask(i):
        start.wait(timeout=10)
        got[i] = registry.shared("test:one")

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    assert loader.entered.wait(timeout=10)
    for t in threads:  # the seven others are parked on the key's lock, the load still unfinished
        t.join(timeout=0.05)
    release.set()
    for t in threads:
        t.join(timeout=10)
    assert loader.calls == 1
    assert got[0] is not None and all(g is got[0] for g in got)


def test_a_load_does_not_hold_up_another_key(monkeypatch):
    release = threading.Event()
    slow, quick = Counted(wait=release), Counted()
    stand_in(monkeypatch, "test:slow", slow)
    stand_in(monkeypatch, "test:quick", quick)
    thread = threading.Thread(target=registry.shared, args=("test:slow",))
    thread.start()
    try:
        assert slow.entered.wait(timeout=10)
        assert registry.shared("test:quick") is not None  # would wait for the slow load under one global lock
        assert quick.calls == 1 and slow.calls == 1
    finally:
        release.set()
        thread.join(timeout=10)
    assert registry.shared_keys() == ("test:quick", "test:slow")


def test_own_folders_are_evicted_least_recently_used_first(monkeypatch):
    monkeypatch.setenv(registry.OWN_MODELS_KEPT_ENV, "2")
    loaders = {key: Counted() for key in ("folder:a", "folder:b", "folder:c", "folder:d", "minilm")}
    for key, loader in loaders.items():
        stand_in(monkeypatch, key, loader)

    registry.shared("minilm")
    a = registry.shared("folder:a")
    registry.shared("folder:b")
    assert registry.shared("folder:a") is a  # a is now more recent than b
    registry.shared("folder:c")  # three folders: b, the least recently used, goes
    assert registry.shared_keys() == ("minilm", "folder:a", "folder:c")
    registry.shared("folder:d")  # then a
    assert registry.shared_keys() == ("minilm", "folder:c", "folder:d")
    registry.shared("folder:b")  # loaded again: a second call of its loader
    assert registry.shared_keys() == ("minilm", "folder:d", "folder:b")
    assert {k: v.calls for k, v in loaders.items()} == {
        "folder:a": 1,
        "folder:b": 2,
        "folder:c": 1,
        "folder:d": 1,
        "minilm": 1,
    }


def test_shipped_models_are_never_evicted(monkeypatch):
    monkeypatch.setenv(registry.OWN_MODELS_KEPT_ENV, "1")
    for key in ("minilm", "smollm2", "moe", "folder:a", "folder:b", "folder:c"):
        stand_in(monkeypatch, key, Counted())
    stand_in(monkeypatch, registry.ENCODER_DECODER, Counted())
    for key in ("minilm", "smollm2", "folder:a", "moe", "folder:b", registry.ENCODER_DECODER, "folder:c"):
        registry.shared(key)
    assert registry.shared_keys() == ("minilm", "smollm2", "moe", registry.ENCODER_DECODER, "folder:c")


def test_a_failed_load_is_not_kept(monkeypatch):
    loader = Counted(fail=1)
    stand_in(monkeypatch, "folder:broken", loader)
    with pytest.raises(ModelFolderError, match="broken on call 1"):
        registry.shared("folder:broken")
    assert "folder:broken" not in registry.shared_keys()
    model = registry.shared("folder:broken")  # tried again, and this time kept
    assert registry.shared("folder:broken") is model and loader.calls == 2


def test_a_new_registration_of_a_key_loads_anew(monkeypatch):
    first, second = Counted(), Counted()
    stand_in(monkeypatch, "folder:x", first)
    old = registry.shared("folder:x")
    stand_in(monkeypatch, "folder:x", second)  # the folder added again (or a test's stand-in)
    new = registry.shared("folder:x")
    assert new is not old and (first.calls, second.calls) == (1, 1)
    assert registry.shared_keys() == ("folder:x",)


def test_unknown_key_is_a_key_error():
    with pytest.raises(KeyError, match="no model registered"):
        registry.shared("no-such-model")


def test_a_fixed_folder_loads_next_time(tmp_path):
    """A learner's real (tiny) folder whose weights went missing after it was added fails in words; once the
    weights are back, the same key loads, through the pages' loader, and stays loaded."""
    from app import models as app_models
    from tests.tiny_models import build

    folder = tmp_path / "tiny-bert"
    build("bert", folder)
    weights = folder / "model.safetensors"
    key = registry.register_folder(folder)
    shutil.move(weights, tmp_path / "kept.safetensors")
    with pytest.raises(ModelFolderError, match="no weights in the folder"):
        registry.loaded(key)
    assert key not in registry.shared_keys()
    shutil.move(tmp_path / "kept.safetensors", weights)
    model = app_models.load(key)
    assert model.n_layers == 3 and model.parity is not None
    assert registry.shared(key) is model


def test_a_folder_retrained_in_place_loads_anew_and_its_results_are_not_reused(tmp_path):
    """A learner saves new weights into the same folder while the server runs: the next shared() loads them (a new
    serial), an untouched folder keeps its copy; the pages' cached trace (app/models.run, keyed by the serial) is
    the new model's, not the old one's."""
    import os

    import torch
    import transformers

    from app import models as app_models
    from tests.tiny_models import build

    folder = tmp_path / "my-llama"
    build("llama", folder)
    key = registry.register_folder(folder)
    first = registry.shared(key)
    serial = registry.serial(key)
    assert registry.shared(key) is first and registry.serial(key) == serial  # nothing changed: the same copy
    before = app_models.run(key, first, ["the cat sat on a mat"]).layer_attention(0)

    torch.manual_seed(7)  # "retrained": other weights, saved over the old ones
    config = transformers.AutoConfig.from_pretrained(folder)
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    weights = next(folder.glob("*.safetensors"))
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))  # a later save
    second = registry.shared(key)
    assert second is not first and registry.serial(key) > serial
    after = app_models.run(key, second, ["the cat sat on a mat"]).layer_attention(0)
    assert not torch.allclose(before, after)  # the page shows the new weights' attention
    assert torch.allclose(after, second.run(second.tokenize(["the cat sat on a mat"])).layer_attention(0))


def test_every_failed_load_is_one_sentence_of_one_exception(monkeypatch):
    """Whatever a loader raises (a broken file's OSError, a KeyError, a RuntimeError), the one load raises
    ModelUnavailable with the first line of the reason: the pages catch that one type and show a sentence."""

    def broken(error):
        def load():
            raise error

        return load

    for n, error in enumerate([OSError("Unable to load weights\nTraceback (most recent call last):"), KeyError("w")]):
        stand_in(monkeypatch, f"folder:broken-{n}", broken(error))
        with pytest.raises(ModelUnavailable) as raised:
            registry.loaded(f"folder:broken-{n}")
        assert "\n" not in str(raised.value) and str(raised.value) in ("Unable to load weights", "'w'")
        assert f"folder:broken-{n}" not in registry.shared_keys()
    missing = lambda: "the weight package llm-x is not installed"  # noqa: E731
    monkeypatch.setitem(registry.RECORDS, "minilm", dataclasses.replace(registry.RECORDS["minilm"], status=missing))
    with pytest.raises(ModelUnavailable, match="llm-x is not installed"):
        registry.loaded("minilm")  # the status is asked first: no weights read


def test_the_pages_cache_keeps_a_result_per_load_of_the_model(monkeypatch):
    """app/models.py computed(): a result is computed once per load, function and arguments, in the light lane and
    on the queue alike, and a model loaded anew (a folder added again) never gets the old load's results: the key
    comes from the load itself, not from each caller."""
    from app import models as app_models

    calls = []

    def work(model, x):
        calls.append(x)
        return model, x

    stand_in(monkeypatch, "folder:kept", Counted())
    light = app_models.computed("folder:kept", work, 1)
    queued = app_models.computed("folder:kept", work, 2, queue="test-lane")
    assert app_models.computed("folder:kept", work, 1) is light
    assert app_models.computed("folder:kept", work, 2, queue="test-lane") is queued
    assert calls == [1, 2]
    stand_in(monkeypatch, "folder:kept", Counted())  # registered anew: the next load is another model
    again = app_models.computed("folder:kept", work, 1)
    assert again[0] is not light[0] and app_models.computed("folder:kept", work, 2, queue="test-lane")[0] is again[0]
    assert calls == [1, 2, 1, 2]
