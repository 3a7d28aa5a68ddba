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


def test_the_server_computes_on_the_gpu_unless_told_the_cpu(monkeypatch):
    from core import device

    monkeypatch.setattr(device.torch.cuda, "is_available", lambda: True)
    monkeypatch.delenv(device.DEVICE_ENV, raising=False)
    assert device.default_device().type == "cuda"
    monkeypatch.setenv(device.DEVICE_ENV, "cpu")
    assert device.default_device().type == "cpu"
    monkeypatch.setattr(device.torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv(device.DEVICE_ENV)
    assert device.default_device().type == "cpu"


def test_every_page_gets_the_one_smollm2_where_the_server_computes(monkeypatch, tmp_path):
    """The registry's SmolLM2 is moved to core.device's device ("meta" here stands for a GPU) and stays on the CPU
    when that is the CPU: the pages share that one copy (the tiny Llama stands in for SmolLM2's weights)."""
    from core.models import registry, smollm2

    build("llama", tmp_path / "tiny-llama")
    monkeypatch.setattr(smollm2, "load_smollm2", lambda: local.load_folder(tmp_path / "tiny-llama"))
    monkeypatch.setattr(smollm2, "default_device", lambda: torch.device("meta"))
    assert registry.RECORDS["smollm2"].load().device.type == "meta"
    monkeypatch.setattr(smollm2, "default_device", lambda: torch.device("cpu"))
    assert registry.RECORDS["smollm2"].load().device.type == "cpu"


def generation_and_lens(model) -> tuple:
    """What /kv-cache and /logit-lens compute with a model: a greedy generation with every eviction policy, and
    the lens of one text."""
    from core import logit_lens
    from core.kv_cache import generation

    gen = generation.generate(model, model.encode(TEXTS[0])[:12], 4, window=4, sinks=1)
    lens = logit_lens.logit_lens(model, TEXTS[0])
    return gen, lens


def ablation_losses(model) -> list[float]:
    """/ablation's metric on repeated random sequences: clean, and with two heads zeroed and mean-ablated."""
    from core import ablation

    evalset = ablation.repeated_eval_set(model, 2, 8, 0)
    means = ablation.head_means(model, evalset.batch)
    found = [ablation.measure(model, evalset)["value"]]
    for mode in ("zero", "mean"):
        with ablation.ablated(model, [(0, 0), (1, 1)], mode, means):
            found.append(ablation.measure(model, evalset)["value"])
    return found


def assert_same_generation_and_lens(on_cpu: tuple, elsewhere: tuple) -> None:
    (gen, lens), (other_gen, other_lens) = on_cpu, elsewhere
    assert [s.chosen_id for s in gen.steps] == [s.chosen_id for s in other_gen.steps]
    for step, other in zip(gen.steps, other_gen.steps):
        assert torch.allclose(torch.tensor(step.top_probs), torch.tensor(other.top_probs), atol=1e-5)
        assert torch.allclose(torch.from_numpy(step.attention), torch.from_numpy(other.attention), atol=1e-5)
        for policy, found in step.policies.items():
            assert abs(found["kl"] - other.policies[policy]["kl"]) < 1e-5
    assert torch.equal(lens.top_ids, other_lens.top_ids) and lens.top_probs.device.type == "cpu"
    assert torch.allclose(lens.top_probs, other_lens.top_probs, atol=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_generation_the_lens_and_ablation_on_the_gpu_give_the_cpu_ones(tmp_path):
    """The KV cache's steps, its eviction policies' sliced caches, the logit lens and /ablation's losses run with the
    model on the GPU (inputs moved there, results brought back) and give the CPU's tokens, probabilities, weights and
    losses."""
    build("llama", tmp_path / "tiny-llama")
    model = local.load_folder(tmp_path / "tiny-llama")
    on_cpu, losses = generation_and_lens(model), ablation_losses(model)
    model.to_device("cuda")
    assert_same_generation_and_lens(on_cpu, generation_and_lens(model))
    assert ablation_losses(model) == pytest.approx(losses, abs=1e-5)
