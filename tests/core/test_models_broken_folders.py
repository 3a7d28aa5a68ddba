"""Broken model folders are refused in one sentence when they are added (core/models/local.py describe_folder, through
core/models/checkpoint.py), before the registry holds them and before any weight is read: pickled weights only
(a zip pickle, a raw one, one with a planted payload), a garbage or a huge sparse model.safetensors, an index naming
a file outside the folder, a config with a 401-digit size or of 256 MB. Nothing planted ever runs. The size guard
counts parameters on a meta-device build: equal to the real model's count for every tiny family."""

from __future__ import annotations

import json
import os
import pickle
import shutil

import pytest
import torch
import transformers
from safetensors.torch import load_file

from core.models import checkpoint, local, registry
from tests.tiny_models import EXTRA_FAMILIES, FAMILIES, build

PLANTED = "planted-ran"


class Planted:
    """A pickle payload that would create a file if it were ever unpickled."""

    def __init__(self, target: str):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def _config_with(folder, **changes) -> None:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))


def _zip_pickle(folder):
    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()


def _raw_pickle(folder):
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps({"weights": Planted(str(folder.parent / PLANTED))}))
    (folder / "model.safetensors").unlink()


def _garbage(folder):
    (folder / "model.safetensors").write_bytes(os.urandom(4096))


def _sparse(folder):  # 2 GB of nothing: a header length of 0
    (folder / "model.safetensors").unlink()
    with open(folder / "model.safetensors", "wb") as handle:
        handle.truncate(2 * 1024**3)


def _short_of_its_header(folder):  # a real header, the tensors cut off
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])


def _index_outside(folder):
    (folder / "model.safetensors").rename(folder.parent / "elsewhere.safetensors")
    index = {"metadata": {}, "weight_map": {"model.norm.weight": "../elsewhere.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))


def _digits(folder):
    _config_with(folder, num_hidden_layers=int("9" * 401))


def _digits_vocab(folder):
    _config_with(folder, vocab_size=int("9" * 401))


def _infinite(folder):
    text = (folder / "config.json").read_text()
    (folder / "config.json").write_text(text.replace('"rms_norm_eps": 1e-06', '"rms_norm_eps": 1e999'))


def _huge_config(folder):
    text = (folder / "config.json").read_text().rstrip().rstrip("}")
    with open(folder / "config.json", "w") as handle:
        handle.write(text + ', "padding": "' + "x" * (256 * 2**20) + '"}')


BROKEN = {
    "zip pickle only": (_zip_pickle, "pickled"),
    "raw pickle with a payload": (_raw_pickle, "pickled"),
    "garbage safetensors": (_garbage, "not a safetensors file"),
    "2 GB sparse safetensors": (_sparse, "not a safetensors file"),
    "safetensors cut short": (_short_of_its_header, "not a safetensors file"),
    "index naming a file outside": (_index_outside, "not in the folder"),
    "401-digit layer count": (_digits, "401 digits"),
    "401-digit vocabulary": (_digits_vocab, "401 digits"),
    "infinite number": (_infinite, "too large"),
    "256 MB config.json": (_huge_config, "more than the"),
}


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    folder = tmp_path_factory.mktemp("source") / "llama"
    build("llama", folder)
    return folder


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_folder_is_refused_in_one_sentence_before_it_is_added(case, llama, tmp_path):
    spoil, words = BROKEN[case]
    folder = tmp_path / "broken"
    shutil.copytree(llama, folder)
    spoil(folder)
    before = set(registry.RECORDS)
    with pytest.raises(local.ModelFolderError) as err:
        registry.register_folder(folder)
    message = str(err.value)
    assert set(registry.RECORDS) == before, "added before it was refused"
    assert message.startswith("broken: ") and words in message, message
    assert "\n" not in message and len(message) < 400 and "Traceback" not in message
    with pytest.raises(local.ModelFolderError):
        local.load_folder(folder)  # loading it directly: the same refusal
    assert not (tmp_path / PLANTED).exists(), "a planted pickle ran"


def test_a_pickle_put_beside_good_weights_is_never_read(llama, tmp_path):
    """A folder with a good model.safetensors and a planted pytorch_model.bin loads from the safetensors only."""
    folder = tmp_path / "both"
    shutil.copytree(llama, folder)
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(Planted(str(tmp_path / PLANTED))))
    model = local.load_folder(folder)
    assert local.parity(model).exact
    assert not (tmp_path / PLANTED).exists()


def test_a_config_read_is_refused_by_its_size_before_its_content(tmp_path, monkeypatch):
    """The 256 MB config is refused from its size (one stat call), never read whole."""
    folder = tmp_path / "big"
    build("llama", folder)
    _huge_config(folder)
    read = []
    monkeypatch.setattr(type(folder), "read_text", lambda self, *a, **k: read.append(self) or "")
    with pytest.raises(ValueError, match="more than the"):
        checkpoint.read_config(folder)
    assert not read


@pytest.mark.parametrize("family", sorted(FAMILIES) + sorted(EXTRA_FAMILIES))
def test_the_parameters_counted_from_the_config_equal_the_real_model(family, tmp_path):
    """Every parameter (all experts, an untied output layer, the family's own feed-forward widths) without a weight
    read: the meta-device count equals the sum of numel of the model transformers builds for real."""
    build(family, tmp_path)
    config = transformers.AutoConfig.from_pretrained(tmp_path)
    kind = (FAMILIES.get(family) or EXTRA_FAMILIES[family])[3]["kind"]
    auto = {
        "decoder": transformers.AutoModelForCausalLM,
        "encoder": transformers.AutoModel,
        "encoder-decoder": transformers.AutoModelForSeq2SeqLM,
    }[kind]
    real = sum(p.numel() for p in auto.from_pretrained(tmp_path).parameters())
    assert checkpoint.parameters_of(config, kind) == real
    assert local.describe_folder(tmp_path).parameters == real


def test_experts_and_an_untied_head_count_where_the_old_estimate_did_not(tmp_path):
    """A mixture of 8 experts with a wide feed-forward layer and an untied head: the old lower bound (a 4x
    feed-forward, one expert, no head) said a sixth of it."""
    config = transformers.MixtralConfig(
        vocab_size=1000, hidden_size=64, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, num_local_experts=8, tie_word_embeddings=False,
    )  # fmt: skip
    real = sum(p.numel() for p in transformers.MixtralForCausalLM(config).parameters())
    counted = checkpoint.parameters_of(config, "decoder")
    assert counted == real
    from core.models.capabilities import capabilities_of

    assert capabilities_of(config).parameters_estimate() < real / 5


PLANTED_CODE = """import pathlib
pathlib.Path({target!r}).write_text("ran")
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast


class PlantedConfig(LlamaConfig):
    pass


class PlantedModel(LlamaForCausalLM):
    config_class = PlantedConfig


class PlantedTokenizer(PreTrainedTokenizerFast):
    pass
"""


def test_a_folders_own_model_code_is_never_run(llama, tmp_path):
    """A folder whose config and tokenizer settings name code of its own (auto_map, as hub models with
    trust_remote_code do) beside a planted module: describing, adding and loading it never imports that module
    (no trust_remote_code anywhere); the folder loads as the stock family it declares, or is refused in one
    sentence."""
    folder = tmp_path / "custom"
    shutil.copytree(llama, folder)
    (folder / "planted.py").write_text(PLANTED_CODE.format(target=str(tmp_path / PLANTED)))
    mapping = {"AutoConfig": "planted.PlantedConfig", "AutoModelForCausalLM": "planted.PlantedModel"}
    _config_with(folder, auto_map=mapping)
    settings = folder / "tokenizer_config.json"
    tokenizer = json.loads(settings.read_text()) if settings.is_file() else {}
    tokenizer["auto_map"] = {"AutoTokenizer": [None, "planted.PlantedTokenizer"]}
    settings.write_text(json.dumps(tokenizer))
    try:
        local.describe_folder(folder)
        model = local.load_folder(folder)
        assert type(model.model).__module__.startswith("transformers."), type(model.model)
    except local.ModelFolderError as err:
        assert "\n" not in str(err) and str(err).startswith("custom: "), err
    assert not (tmp_path / PLANTED).exists(), "the folder's own code ran"
