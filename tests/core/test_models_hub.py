"""A hub id ("org/name") as a learner's model (core/models/local.py, registry.register_folder): offline (as on this
project's machines) it is refused in one sentence and nothing is fetched; online, the config comes first (the size
limit is checked before any weight is fetched), the weights and tokenizer when the model is loaded, safetensors
only. The hub is played by fakes of huggingface_hub's two download functions that copy from a tiny local folder."""

from __future__ import annotations

import json
import shutil

import huggingface_hub
import pytest

from core.models import local, registry
from tests.tiny_models import build, forget_registrations


@pytest.fixture()
def hub(tmp_path, monkeypatch):
    """A fake hub holding 'tiny-org/tiny-llama' (and its calls), with this process online."""
    source = tmp_path / "hub-repo"
    build("llama", source)
    calls = []

    def snapshot(repo_id, **options):
        assert repo_id == "tiny-org/tiny-llama"
        calls.append(("snapshot", options.get("allow_patterns")))
        target = tmp_path / "cache" / "snapshot"
        shutil.copytree(source, target, dirs_exist_ok=True)
        return str(target)

    def one_file(repo_id, filename, **_):
        assert repo_id == "tiny-org/tiny-llama"
        calls.append(("file", filename))
        target = tmp_path / "cache" / "snapshot"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / filename, target / filename)
        return str(target / filename)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", one_file)
    monkeypatch.setattr(local, "hub_offline", lambda: False)
    monkeypatch.chdir(tmp_path)  # no folder here is named like the hub id
    before = set(registry.LOADERS)
    yield source, calls
    forget_registrations(before)


def test_offline_a_hub_id_is_refused_in_one_sentence_and_nothing_is_fetched(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    fetched = []
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda *a, **k: fetched.append(a))
    with pytest.raises(local.ModelFolderError, match="offline") as err:
        local.describe_folder("some-org/some-model")
    assert "add its folder" in str(err.value) and not fetched


def test_online_the_config_first_then_the_weights_when_loaded(hub):
    _, calls = hub
    key = registry.register_folder("tiny-org/tiny-llama")
    assert key == registry.FOLDER_PREFIX + "tiny-llama" and registry.TITLES[key] == "tiny-llama"
    assert calls == [("file", "config.json")] * len(calls)  # registering reads the config only
    assert registry.CAPABILITIES[key].kind == "decoder" and registry.SOURCES[key] == "tiny-org/tiny-llama"
    model = registry.LOADERS[key]()
    snapshots = [patterns for kind, patterns in calls if kind == "snapshot"]
    assert snapshots and all(
        "*.safetensors" in p and not any(x.endswith((".bin", ".py")) for x in p) for p in snapshots
    )
    assert model.parity.exact and model.name == "tiny-llama" and "from the hub" in model.weights_note


def test_a_hub_model_above_the_size_limit_is_refused_before_any_weight(hub, monkeypatch):
    source, calls = hub
    config = json.loads((source / "config.json").read_text())
    (source / "config.json").write_text(json.dumps({**config, "hidden_size": 6 * 8192, "intermediate_size": 196_608}))
    with pytest.raises(local.ModelFolderError, match="billion parameters"):
        registry.register_folder("tiny-org/tiny-llama")
    assert all(kind == "file" for kind, _ in calls)  # the config only


def test_a_hosted_server_loads_only_the_hub_ids_it_lists(hub):
    with pytest.raises(local.ModelFolderError, match="not in the list"):
        local.describe_folder("tiny-org/tiny-llama", allowed=["tiny-org/another"])
    assert local.describe_folder("tiny-org/tiny-llama", allowed=["tiny-org/tiny-llama"]).kind == "decoder"


def test_a_failed_download_is_one_sentence(hub, monkeypatch):
    def no_network(*_, **__):
        raise OSError("Connection refused\nmore lines")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_network)
    with pytest.raises(local.ModelFolderError, match=r"could not be downloaded from the hub \(Connection refused\)$"):
        local.describe_folder("tiny-org/tiny-llama")


def test_the_laptop_list_remembers_the_hub_id(hub, monkeypatch, tmp_path):
    monkeypatch.setattr(registry, "_user_list", lambda: tmp_path / "models.toml")
    registry.register_folder("tiny-org/tiny-llama", remember=True)
    assert 'path = "tiny-org/tiny-llama"' in (tmp_path / "models.toml").read_text()


def test_a_hub_models_load_error_names_the_model_not_the_cache_folder(hub):
    """The hub cache names a snapshot's folder by a commit hash: a failure once the files are fetched names the
    model, as the learner typed it."""
    source, _ = hub
    for tokenizer_file in source.glob("tokenizer*.json"):
        tokenizer_file.unlink()
    key = registry.register_folder("tiny-org/tiny-llama")
    with pytest.raises(local.ModelFolderError, match=r"^tiny-llama: no usable tokenizer"):
        registry.LOADERS[key]()
