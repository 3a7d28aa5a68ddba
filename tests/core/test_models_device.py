"""The contract's device: where the weights are, and moving them (app/models.py moves a SmolLM2 to the GPU this
way), read back against the wrapped module's own parameters."""

import pytest
import torch

from core.models import local
from tests.tiny_models import TEXTS, build


def test_device_is_where_the_parameters_are_and_moving_moves_them(tmp_path):
    build("llama", tmp_path / "tiny-llama")
    model = local.load_folder(tmp_path / "tiny-llama")
    assert model.device == torch.device("cpu")
    assert model.to_device("meta") is model  # "meta": a device every machine has (shapes only, no data)
    assert model.device.type == "meta"
    assert all(p.device.type == "meta" for p in model.model.parameters())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_a_model_moved_to_the_gpu_gives_the_cpu_attention(tmp_path):
    build("llama", tmp_path / "tiny-llama")
    model = local.load_folder(tmp_path / "tiny-llama")
    batch = model.tokenize(TEXTS)
    on_cpu = model.run(batch).layer_attention(1)
    assert model.to_device("cuda").device.type == "cuda"
    on_gpu = model.run(batch).layer_attention(1)
    assert torch.allclose(on_cpu, on_gpu, atol=1e-5)
