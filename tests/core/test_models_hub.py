"""A hub id ("org/name") as a learner's model (core/models/local.py, registry.register_folder): offline (as on this
project's machines) it is refused in one sentence and nothing is fetched; online, the config comes first (the size
limit is checked before any weight is fetched), the weights and tokenizer when the model is loaded, safetensors
only, at the revision whose config was read. The hub is played by fakes of huggingface_hub's download and header
functions over a tiny local folder."""

from __future__ import annotations

import json
import math
import shutil
from types import SimpleNamespace

import huggingface_hub
import pytest

from core.models import local, registry
from tests.tiny_models import build, forget_registrations

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture()
def hub(tmp_path, monkeypatch):
    """A fake hub holding 'tiny-org/tiny-llama' at one commit (and its calls), with this process online. Like the
    real hub cache, a snapshot's folder is named by its commit; the weights' size comes from the safetensors
    header, read as the hub serves it (huggingface_hub.get_safetensors_metadata)."""
    source = tmp_path / "hub-repo"
    build("llama", source)
    calls = []
    snapshot_folder = tmp_path / "cache" / "snapshots" / COMMIT

    def snapshot(repo_id, **options):
        assert repo_id == "tiny-org/tiny-llama" and options.get("revision") in (None, COMMIT)
        calls.append(("snapshot", options.get("allow_patterns"), options.get("revision")))
        shutil.copytree(source, snapshot_folder, dirs_exist_ok=True)
        return str(snapshot_folder)

    def one_file(repo_id, filename, revision=None, **_):
        assert repo_id == "tiny-org/tiny-llama" and revision in (None, COMMIT)
        calls.append(("file", filename, revision))
        snapshot_folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / filename, snapshot_folder / filename)
        return str(snapshot_folder / filename)

    def metadata(repo_id, revision=None, **_):
        """The parameter count of each dtype, from the header of the repository's model.safetensors."""
        calls.append(("metadata", None, revision))
        raw = (source / "model.safetensors").read_bytes()
        header = json.loads(raw[8 : 8 + int.from_bytes(raw[:8], "little")])
        counts = {}
        for name, entry in header.items():
            if name != "__metadata__":
                counts[entry["dtype"]] = counts.get(entry["dtype"], 0) + math.prod(entry["shape"])
        return SimpleNamespace(parameter_count=counts)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", one_file)
    monkeypatch.setattr(huggingface_hub, "get_safetensors_metadata", metadata)
    monkeypatch.setattr(local, "hub_offline", lambda: False)
    monkeypatch.chdir(tmp_path)  # no folder here is named like the hub id
    before = set(registry.RECORDS)
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
    assert key == registry.FOLDER_PREFIX + "tiny-llama" and registry.title(key) == "tiny-llama"
    assert {kind for kind, _, _ in calls} == {"file", "metadata"}  # registering: the config and the headers only
    assert registry.RECORDS[key].capabilities.kind == "decoder"
    assert registry.RECORDS[key].source == f"tiny-org/tiny-llama@{COMMIT}"  # the revision whose config was read
    model = registry.RECORDS[key].load()
    snapshots = [patterns for kind, patterns, _ in calls if kind == "snapshot"]
    assert {revision for kind, _, revision in calls if kind == "snapshot"} == {COMMIT}  # the same revision
    assert snapshots and all(
        "*.safetensors" in p and not any(x.endswith((".bin", ".py")) for x in p) for p in snapshots
    )
    assert (
        model.parity.exact
        and model.name == "tiny-llama"
        and model.weights == ("hub", {"path": f"tiny-org/tiny-llama@{COMMIT}"})  # the screen's: [models] weights_hub
    )


def test_a_hub_model_above_the_size_limit_is_refused_before_any_weight(hub, monkeypatch):
    source, calls = hub
    config = json.loads((source / "config.json").read_text())
    (source / "config.json").write_text(json.dumps({**config, "hidden_size": 6 * 8192, "intermediate_size": 196_608}))
    with pytest.raises(local.ModelFolderError, match="billion parameters"):
        registry.register_folder("tiny-org/tiny-llama")
    assert all(kind == "file" for kind, _, _ in calls)  # the config only


def test_a_hub_models_weights_are_sized_from_their_headers_before_any_is_fetched(hub, monkeypatch):
    """A config that says tiny beside weights that are not (the hub's headers count 3 billion parameters): refused
    from the headers, no weight fetched."""
    _, calls = hub
    monkeypatch.setattr(
        huggingface_hub,
        "get_safetensors_metadata",
        lambda *_, **__: SimpleNamespace(parameter_count={"F32": 3 * 10**9}),
    )
    with pytest.raises(local.ModelFolderError, match=r"about 3\.0 billion parameters"):
        registry.register_folder("tiny-org/tiny-llama")
    assert not [c for c in calls if c[0] == "snapshot"]


def test_a_hub_model_without_safetensors_is_refused_in_one_sentence(hub, monkeypatch):
    from huggingface_hub.errors import NotASafetensorsRepoError

    def none(*_, **__):
        raise NotASafetensorsRepoError("'tiny-org/tiny-llama' is not a safetensors repo.\nmore")

    monkeypatch.setattr(huggingface_hub, "get_safetensors_metadata", none)
    with pytest.raises(local.ModelFolderError, match=r"no readable safetensors weights on the hub .*not loaded here$"):
        registry.register_folder("tiny-org/tiny-llama")


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


def test_the_operators_list_may_name_a_hub_id(hub, monkeypatch, tmp_path):
    (tmp_path / "models.toml").write_text('[[model]]\npath = "tiny-org/tiny-llama"\n', encoding="utf-8")
    monkeypatch.setenv(registry.MODELS_LIST, str(tmp_path / "models.toml"))
    assert registry.load_user_list() == []
    assert registry.RECORDS[registry.FOLDER_PREFIX + "tiny-llama"].source == f"tiny-org/tiny-llama@{COMMIT}"  # pinned


def test_a_visitor_may_name_a_hub_id_only_where_any_is_allowed(hub):
    assert local.describe_folder("tiny-org/tiny-llama", allowed=local.visitor_allowed()).kind == "decoder"
    with pytest.raises(local.ModelFolderError, match="not in the list"):
        local.describe_folder("tiny-org/tiny-llama", allowed=["/nowhere"])


def test_a_hub_models_load_error_names_the_model_not_the_cache_folder(hub):
    """The hub cache names a snapshot's folder by a commit hash: a failure once the files are fetched names the
    model, as the learner typed it."""
    source, _ = hub
    for tokenizer_file in source.glob("tokenizer*.json"):
        tokenizer_file.unlink()
    key = registry.register_folder("tiny-org/tiny-llama")
    with pytest.raises(local.ModelFolderError, match=r"^tiny-llama: no usable tokenizer"):
        registry.RECORDS[key].load()
