"""What a run of a learner's model would cost (core/models/local.py): the FLOP count against torch's own FLOP
counter on tiny models run with eager attention, the time estimate from the loading check's measured pass, and the
server's budget said in one sentence."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from core.models import local
from tests.tiny_models import FAMILIES, build


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """{family: loaded model} of a decoder (Llama, GQA, lm_head) and an encoder (BERT)."""
    loaded = {}
    for family in ("llama", "bert"):
        folder = tmp_path_factory.mktemp(family)
        build(family, folder)
        loaded[family] = local.load_folder(folder)
    return loaded


def counted_flops(model, n: int) -> int:
    """torch's FlopCounterMode over one forward of n tokens with transformers' eager attention (plain matmuls)."""
    module = model.model
    module.set_attn_implementation("eager")
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            module(input_ids=torch.randint(4, 20, (1, n)), **model._run_kwargs())
    finally:
        module.set_attn_implementation(model.attn_implementation)
    return counter.get_total_flops()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_forward_flops_equal_torchs_counter_on_every_family(family, tmp_path):
    """Exactly torch's count, except where it is known to differ: BERT's pooler multiplies the first token only (the
    estimate counts every token: 2 D^2 (n - 1) more), and the counter does not see transformers' grouped expert
    products, which the estimate adds for the k experts of each token: 2 n k L (3 D d_ff), by hand from the config."""
    build(family, tmp_path)
    model = local.load_folder(tmp_path)
    caps, config, n = model.capabilities, model.config, 24
    estimated = local.forward_flops(local.matmul_weights(model), caps, n)
    known = 0
    if family in ("bert", "roberta"):
        known = 2 * caps.d_model**2 * (n - 1)
    if caps.n_experts:  # DeepSeek: its first layers dense, its experts of their own width
        layers = caps.n_layers - getattr(config, "first_k_dense_replace", 0)
        width = getattr(config, "moe_intermediate_size", config.intermediate_size)
        known = 2 * n * caps.experts_per_token * layers * 3 * caps.d_model * width
    assert estimated - counted_flops(model, n) == known


@pytest.mark.parametrize("n", [8, 40])
def test_forward_flops_follow_the_length(tiny, n):
    """The counter at two lengths: the n^2 attention term and the n-linear weights term both as counted."""
    model = tiny["llama"]
    assert local.forward_flops(local.matmul_weights(model), model.capabilities, n) == counted_flops(model, n)


def test_the_time_estimate_scales_the_checks_measured_pass(tiny):
    model = tiny["llama"]
    parity = model.parity = local.parity(model)  # as the registry does on loading
    batch = model.tokenize(list(local.PARITY_TEXTS))
    weights = local.matmul_weights(model)
    assert parity.seconds > 0
    assert parity.flops == batch.input_ids.shape[0] * local.forward_flops(
        weights, model.capabilities, batch.input_ids.shape[1]
    )
    run = local.run_estimate(model.capabilities, 200, model)
    want = parity.seconds * local.forward_flops(weights, model.capabilities, 200) / parity.flops
    assert run.seconds == pytest.approx(want) and run.problem is None
    assert local.run_estimate(model.capabilities, 200).seconds is None  # not loaded: memory only


def test_above_the_budget_the_run_is_refused_in_one_sentence(tiny, monkeypatch):
    model = tiny["llama"]
    model.parity = local.Parity((0.0,), seconds=1.0, flops=1000)
    monkeypatch.setattr(local, "MAX_RUN_SECONDS", 5.0)
    slow = local.run_estimate(model.capabilities, 64, model)
    assert slow.seconds > 5 and "above this server's 5 s" in slow.problem and "64 tokens" in slow.problem
    monkeypatch.setattr(local, "MAX_RUN_MIB", 1e-3)
    big = local.run_estimate(model.capabilities, 64, model)
    assert "MiB" in big.problem  # memory is checked first: it needs no loaded model
    assert local.run_estimate(model.capabilities, 64).problem == big.problem


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_memory_estimate_is_what_a_run_keeps_and_every_weight(family, tmp_path):
    """From the config alone: the weights part is 4 bytes per parameter of the loaded model (an untied output
    layer and every expert included; an encoder-decoder whole, as it is loaded), and the q/k and outputs parts are
    the bytes of the tensors a Trace of one n-token text holds (q and k of every layer; the residual stream; a
    decoder's logits)."""
    build(family, tmp_path)
    caps = local.describe_folder(tmp_path)
    model = local.load_folder(tmp_path)
    text = "the cat sat on a mat because it was tired and then dog ran far away"
    trace = model.run(model.tokenize([text]))
    n = trace.batch.input_ids.shape[1]
    memory = local.estimate(caps, n)
    if caps.kind != "encoder-decoder":  # the contract keeps its encoder (the whole: test_models_broken_folders)
        assert memory.weights_bytes == 4 * sum(p.numel() for p in model.model.parameters())
    assert memory.trace_bytes == sum(t.nbytes for t in trace.queries + trace.keys)
    held = [*trace.hidden_states, *([] if trace.logits is None else [trace.logits])]
    assert memory.outputs_bytes == sum(t.nbytes for t in held)
