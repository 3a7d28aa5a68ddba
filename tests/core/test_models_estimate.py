"""What a run of a learner's model would cost (core/models/local.py): the FLOP count against torch's own FLOP
counter on tiny models run with eager attention, the time estimate from the loading check's measured pass, and the
server's budget said in one sentence."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from core.models import local
from core.models.capabilities import capabilities_of
from core.timing import torch_live_peak
from tests.tiny_models import FAMILIES, build, config_of, longer_positions


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


def test_the_time_estimate_follows_the_line_through_the_checks_two_timed_runs(tiny):
    """The loading check times a page's run (the pass and one layer's weights for display) of the short batch and of
    TIMED_TOKENS ids; the estimate is the line through the two in FLOPs: its fixed cost counted once."""
    model = tiny["llama"]
    parity = model.parity = local.parity(model)  # as the registry does on loading
    batch = model.tokenize(list(local.PARITY_TEXTS))
    weights, caps = local.matmul_weights(model), model.capabilities
    assert 0 < parity.seconds and 0 < parity.long_seconds
    assert parity.flops == batch.input_ids.shape[0] * local.page_flops(weights, caps, batch.input_ids.shape[1])
    assert parity.long_flops == local.page_flops(weights, caps, min(local.TIMED_TOKENS, model.max_positions))
    run = local.run_estimate(caps, 200, model)
    assert run.seconds == pytest.approx(parity.seconds_for(local.page_flops(weights, caps, 200))) and not run.problem
    assert local.run_estimate(caps, 200).seconds is None  # not loaded: memory only


def test_the_line_through_two_timed_runs_by_hand():
    """0.1 s for 1,000 FLOPs and 0.5 s for 9,000: 0.05 s per 1,000 FLOPs and a fixed 0.05 s, so 19,000 FLOPs take
    1.0 s. Where the second run was not slower (noise) the longer run alone is scaled; one run alone, likewise."""
    line = local.Parity((0.0,), seconds=0.1, flops=1000, long_seconds=0.5, long_flops=9000)
    assert line.seconds_for(19000) == pytest.approx(1.0)
    assert line.seconds_for(1000) == pytest.approx(0.1) and line.seconds_for(9000) == pytest.approx(0.5)
    flat = local.Parity((0.0,), seconds=0.3, flops=1000, long_seconds=0.2, long_flops=9000)
    assert flat.seconds_for(18000) == pytest.approx(0.4)
    assert local.Parity((0.0,), seconds=0.2, flops=1000).seconds_for(3000) == pytest.approx(0.6)
    assert local.Parity((0.0,)).seconds_for(3000) is None


def test_page_flops_add_one_layers_scores_for_display(tiny):
    model = tiny["llama"]
    caps, weights = model.capabilities, local.matmul_weights(model)
    extra = local.page_flops(weights, caps, 40) - local.forward_flops(weights, caps, 40)
    assert extra == 2 * 6 * 8 * 40 * 40  # 2 n^2 d for each of the tiny Llama's 6 heads of size 48 / 6


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


def test_the_transient_peak_by_hand():
    """At n = 512, float32: a tiny Gemma 2 (4 heads, soft-capped: its own eager attention) holds two (4, n, n) score
    tensors (4 MiB each) and a float mask for each of its two kinds of layer (1 MiB each) in a layer's attention:
    10 MiB, more than its feed-forward (3 x 512 x 48 x 4 B) or the display's two scores (8 MiB). A Llama under SDPA
    holds no scores in the pass: the display's 2 x (6, n, n) = 12 MiB is the moment. Bloom's display adds its
    ALiBi bias (a third), its own attention four scores and one mask: 17 MiB. gpt-oss: three and two masks.
    DeepSeek-V3's values (8) are narrower than its queries and keys (24): SDPA's math path, two scores and a mask."""
    mib = 2**20
    sizes = {"gemma2": (10 * mib, 8 * mib), "llama": (3 * 512 * 48 * 4, 12 * mib)}
    sizes |= {"bloom": (17 * mib, 12 * mib), "gpt_oss": (14 * mib, 8 * mib), "deepseek_v3": (9 * mib, 8 * mib)}
    for family, (passing, display) in sizes.items():
        caps = capabilities_of(config_of(family))
        memory = local.estimate(caps, 512)
        assert (memory.pass_bytes, memory.layer_map_bytes) == (passing, display), family
        assert memory.run_bytes == memory.trace_bytes + memory.outputs_bytes + max(passing, display)


def test_a_scaled_or_capped_head_holds_a_second_copy_of_the_scores():
    """Cohere multiplies its logits by logit_scale, Gemma 2 caps them: one more n x V tensor while it does."""
    for family in ("cohere", "gemma2"):
        caps = dataclasses.replace(capabilities_of(config_of(family)), vocab_size=100_000)
        assert local.estimate(caps, 64).pass_bytes == 64 * 100_000 * 4, family


@pytest.mark.parametrize("family", ["llama", "gemma2", "gpt_oss", "bloom", "bert", "deepseek_v3"])
def test_the_estimate_is_the_tensors_a_run_holds_at_its_peak(family, tmp_path):
    """A property, measured in bytes (no clock): torch's profiler sums every allocation and free of its CPU
    allocator in order during a page's run (the pass, one layer's weights for display) of 256 tokens; the most held
    at once is within 25 % of the estimate's run part (its weights are resident before)."""
    build(family, tmp_path, **longer_positions(family, 512))
    model = local.load_folder(tmp_path)
    ids = model.ordinary_ids()
    batch = model.batch_of_ids([ids[torch.arange(256) % len(ids)].tolist()])
    model.run(batch)  # lazily built state (rotary tables, masks' caches) is not a run's
    held = torch_live_peak(lambda: model.run(batch).layer_attention(0))
    assert held == pytest.approx(local.estimate(local.describe_folder(tmp_path), 256).run_bytes, rel=0.25)


def test_a_one_thread_run_is_timed_by_its_threads_cpu_time(monkeypatch):
    """The server runs torch on one thread: the loading check then times that thread's CPU time, which other
    processes on a busy machine do not inflate; spread over threads, the wall clock (the others' work counts)."""
    import time

    monkeypatch.setattr(local.torch, "get_num_threads", lambda: 1)
    assert local.run_clock() is time.thread_time
    monkeypatch.setattr(local.torch, "get_num_threads", lambda: 2)
    assert local.run_clock() is time.perf_counter
