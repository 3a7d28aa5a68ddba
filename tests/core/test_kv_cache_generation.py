"""Generation with the KV cache (core/kv_cache/): cached = uncached greedy decoding token for token, the cache's
bytes against the formula and the tensors, the recorded attention against a full uncached pass, eviction
policies' kept positions and KL = 0 when nothing is evicted."""

import dataclasses
import math

import numpy as np
import pytest
import torch

from core import kv_cache as kc
from core.kv_cache import eviction, generation, views

PROMPT = "The cat sat on the mat because it"


def test_kept_positions_hand_worked():
    """W counts keys, the query's own included: at position 10 a window of 3 sees 8, 9, 10 and keeps 8, 9 cached."""
    assert kc.visible_positions("window", 10, 3) == [8, 9, 10]
    assert kc.kept_positions("window", 10, 3) == [8, 9]
    assert kc.kept_positions("sinks_window", 10, 3, sinks=2) == [0, 1, 8, 9]
    assert kc.kept_positions("sinks_window", 4, 3, sinks=2) == [0, 1, 2, 3]  # overlap: nothing evicted
    assert kc.kept_positions("window", 2, 5) == [0, 1]
    assert kc.kept_positions("window", 0, 1) == []
    assert kc.kept_positions("sinks_window", 10, 1, sinks=0) == kc.kept_positions("window", 10, 1) == []
    assert kc.visible_positions("window", 10, 1) == [10]  # W = 1: the new token sees only itself
    with pytest.raises(ValueError):
        kc.kept_positions("window", 5, 0)
    with pytest.raises(ValueError):
        kc.kept_positions("lru", 5, 2)


def test_kl_divergence_hand_worked():
    p = torch.tensor([0.5, 0.5], dtype=torch.float64).log()
    q = torch.tensor([0.25, 0.75], dtype=torch.float64).log()
    expect = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    assert kc.kl_divergence(p, q) == pytest.approx(expect, rel=1e-12)
    assert kc.kl_divergence(p, p) == 0.0
    zero = torch.tensor([1.0, 0.0], dtype=torch.float64).log()  # 0 log 0 = 0
    assert kc.kl_divergence(zero, q) == pytest.approx(math.log(4.0))


@pytest.fixture(scope="module")
def greedy(smollm2):
    ids, _ = kc.prompt_ids(smollm2, PROMPT, 512)
    return ids, kc.generate(smollm2, ids, 5, window=2, sinks=1)


def test_cached_generation_equals_uncached_greedy_token_for_token(smollm2, greedy):
    ids, gen = greedy
    reference = kc.greedy_uncached(smollm2, ids, 5, smollm2.config.eos_token_id)
    assert gen.generated_ids == reference
    assert [s.position for s in gen.steps] == list(range(len(ids) - 1, len(ids) - 1 + len(gen.steps)))


def test_cache_bytes_formula_equals_the_tensors(greedy):
    _, gen = greedy
    per_token = 2 * 30 * 3 * 64 * 4  # K and V, 30 layers, 3 kv heads, head size 64, float32
    for s in gen.steps:
        assert s.cache_bytes == per_token * (s.position + 1) == gen.formula_bytes(s.position + 1)
    curves = views.memory_curves(gen)
    assert curves["mha"] == [3 * g for g in curves["gqa"]]  # 9 query heads: MHA would store 9 kv heads, not 3


def test_recorded_attention_equals_a_full_uncached_pass(smollm2, greedy):
    ids, gen = greedy
    step = gen.steps[-1]
    sequence = ids + gen.generated_ids[:-1]  # every token fed so far; the last one is the query of the last step
    batch = smollm2.tokenize([smollm2.tokenizer.decode(sequence)])
    assert batch.input_ids[0].tolist() == sequence
    trace = smollm2.run(batch, logits=False, hidden_states=False)
    for layer in (0, 14, 29):
        full = trace.layer_attention(layer, rows=[step.position])[:, 0].numpy()  # (heads, n)
        np.testing.assert_allclose(step.attention[layer].astype(np.float32), full, atol=2e-3)
    assert np.allclose(step.attention.astype(np.float32).sum(-1), 1.0, atol=1e-2)


def test_kl_is_zero_when_nothing_is_evicted(smollm2):
    ids, _ = kc.prompt_ids(smollm2, PROMPT, 512)
    gen = kc.generate(smollm2, ids, 2, window=64, sinks=4)
    for s in gen.steps:
        for policy in kc.POLICIES:
            assert s.policies[policy]["evicted"] == 0 and s.policies[policy]["kl"] == 0.0


def test_a_slice_that_keeps_every_position_changes_nothing(smollm2):
    """The eviction path itself (slice the cache, feed the token again) is exact: keeping all gives KL ~ 0."""
    ids, _ = kc.prompt_ids(smollm2, PROMPT, 512)
    cache = smollm2.new_cache()
    smollm2.prefill(cache, ids[:-1])
    p = len(ids) - 1
    full = eviction.next_token_logprobs(smollm2, smollm2.sliced_cache(cache, list(range(p))), ids[-1], p)
    again = eviction.next_token_logprobs(smollm2, cache, ids[-1], p)
    assert kc.kl_divergence(full, again) < 1e-9
    assert cache.get_seq_length() == p + 1  # the original cache grew by the fed token only


def test_evicting_moves_the_distribution_and_sinks_help_here(greedy):
    _, gen = greedy
    window = [s.policies["window"] for s in gen.steps]
    sinks = [s.policies["sinks_window"] for s in gen.steps]
    assert all(w["evicted"] > 0 and w["kl"] > 0 for w in window)
    assert all(s["kept"] == 3 for s in sinks)  # W = 2 keys (the fed token and the one before) + S = 1 sink
    # StreamingLLM's finding on this prompt: keeping the first token makes the window far less harmful
    assert np.mean([s["kl"] for s in sinks]) < np.mean([w["kl"] for w in window])


def test_a_window_of_one_sees_only_the_new_token(smollm2):
    """W = 1, no sinks: nothing of the cache is kept, and the prediction is the token's own, alone at its
    position (a pass of that one token with no cache at all)."""
    ids, _ = kc.prompt_ids(smollm2, PROMPT, 512)
    gen = kc.generate(smollm2, ids, 1, window=1, sinks=0, policies=("window",))
    step = gen.steps[0]
    assert step.policies["window"]["kept"] == 1 and step.policies["window"]["evicted"] == step.position
    with torch.no_grad():
        alone = smollm2.model(input_ids=torch.tensor([[step.fed_id]]), position_ids=torch.tensor([[step.position]]))
    logq = torch.log_softmax(alone.logits[0, -1].double(), -1)
    assert step.policies["window"]["top_ids"] == torch.topk(logq, 5).indices.tolist()


def test_sampling_is_reproducible_and_top_k_1_is_greedy(smollm2, greedy):
    ids, gen = greedy
    a = kc.generate(smollm2, ids, 3, temperature=1.0, top_k=20, seed=7, policies=())
    b = kc.generate(smollm2, ids, 3, temperature=1.0, top_k=20, seed=7, policies=())
    assert a.generated_ids == b.generated_ids
    one = kc.generate(smollm2, ids, 3, temperature=1.5, top_k=1, seed=3, policies=())
    assert one.generated_ids == gen.generated_ids[:3]


def test_views_pool_long_rows_and_mask_the_future(greedy):
    _, gen = greedy
    v = views.step_attention(gen, 99, 3, max_cols=4)  # a step out of range is clamped to the last
    assert v.step == len(gen.steps) - 1 and v.weights.shape == (9, 4) and v.pooled
    assert v.kept["window"][-1] > 0 and v.kept["window"][0] == 0 and v.kept["sinks_window"][0] > 0
    h = views.history(gen, 3, None, max_cols=200)
    assert h.weights.shape == (len(gen.steps), gen.steps[-1].position + 1)
    assert h.masked[0, -1] and not h.masked[-1, -1]
    np.testing.assert_allclose(np.nansum(h.weights, axis=1), 1.0, atol=1e-2)


def test_empty_prompt_is_refused(smollm2):
    with pytest.raises(ValueError):
        kc.prompt_ids(smollm2, "", 512)
    ids, total = kc.prompt_ids(smollm2, "word " * 700, 512)
    assert len(ids) == 512 and total > 512


# --- a learner's decoder with sliding-window layers or a learned position table ------------------------------------


def test_sliding_window_weights_are_zero_outside_the_window_and_equal_the_models_own(tmp_path):
    """Gemma 2 (sliding layers of 4 keys beside global ones) past its window: every step's weights span all
    positions, 0 outside a sliding layer's window, and equal transformers' eager attention of the whole sequence
    at that query row; the eviction policies are not measured on it (its layers evict by themselves)."""
    from core.models import local
    from tests.tiny_models import TEXTS, build

    build("gemma2", tmp_path)
    model = local.load_folder(tmp_path)
    ids, _ = kc.prompt_ids(model, TEXTS[0], 512, 6)
    gen = kc.generate(model, ids, max_new_tokens=6)
    assert not gen.eviction_measured and all(not s.policies for s in gen.steps)
    sequence = ids + gen.generated_ids
    module = model.model
    module.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            eager = module(input_ids=torch.tensor([sequence[:-1]]), output_attentions=True, use_cache=False).attentions
    finally:
        module.set_attn_implementation(model.attn_implementation)
    windows = model.capabilities.sliding_window
    for step in gen.steps:
        p = step.position
        assert step.attention.shape == (model.n_layers, model.n_heads, p + 1)
        for layer in range(model.n_layers):
            ours = torch.tensor(step.attention[layer], dtype=torch.float32)
            assert torch.allclose(ours, eager[layer][0, :, p, : p + 1], atol=2e-3)  # float16 storage
            if windows[layer] is not None and p + 1 > windows[layer]:
                assert float(ours[:, : p + 1 - windows[layer]].abs().max()) == 0.0


@pytest.mark.parametrize("family", ["mistral", "gemma2"])
def test_a_sliding_layers_cache_stops_at_its_window_as_the_formula_counts(family, tmp_path):
    """Measured on transformers' own cache tensors after every step: equal to the formula counted layer by layer,
    a sliding layer (W = 4) at W - 1 = 3 positions. A tiny Mistral slides in all 3 layers, so its cache stops
    growing: 3 layers x 2 (K, V) x 2 key/value heads x 8 values x 3 positions x 4 bytes = 1,152 bytes at every
    step; Gemma 2's full middle layer still grows by 2 x 2 x 8 x 4 = 128 bytes a token."""
    from core.kv_cache.memory import model_cache_bytes
    from core.models import local
    from tests.tiny_models import TEXTS, build

    build(family, tmp_path)
    model = local.load_folder(tmp_path)
    ids, _ = kc.prompt_ids(model, TEXTS[0], 512, 5)
    gen = kc.generate(model, ids, max_new_tokens=5, policies=())
    measured = [s.cache_bytes for s in gen.steps]
    assert measured == [gen.formula_bytes(s.position + 1) for s in gen.steps]
    # /models' sentence on the model's cache counts the same
    assert measured == [model_cache_bytes(model.capabilities, s.position + 1) for s in gen.steps]
    if family == "mistral":
        assert measured == [1152] * len(gen.steps)
    else:
        assert [b - a for a, b in zip(measured, measured[1:])] == [128] * (len(measured) - 1)


def test_a_learned_table_keeps_prompt_and_new_tokens_within_its_positions(tmp_path):
    from core.models import local
    from tests.tiny_models import build

    build("gpt2", tmp_path)  # 64 positions
    model = local.load_folder(tmp_path)
    limit = kc.context_limit(model.capabilities)
    assert limit == model.capabilities.max_positions == 64
    ids, total = kc.prompt_ids(model, "the cat sat " * 40, 512, 6)
    assert total == 120 and len(ids) == limit - 6
    gen = kc.generate(model, ids, max_new_tokens=6)
    assert len(gen.steps) <= 6 and len(ids) + len(gen.steps) <= limit
    with pytest.raises(ValueError, match="fills all 64 positions"):
        kc.generate(model, model.encode("the cat sat " * 40)[:64], max_new_tokens=1)


# --- what a layer adds to its scores (soft-capping, learned sinks): the model's own weights at every step ---------


def _eager_rows(model, sequence):
    """transformers' eager attention of the whole sequence (no cache): per layer (H, n, n)."""
    module = model.model
    module.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            out = module(input_ids=torch.tensor([sequence]), output_attentions=True, use_cache=False)
    finally:
        module.set_attn_implementation(model.attn_implementation)
    return [a[0] for a in out.attentions]


@pytest.mark.parametrize(
    "family, change",
    [
        ("gemma2", dict(attn_logit_softcapping=0.5)),  # a cap that bends every score
        ("gpt_oss", {}),  # learned sinks: each row sums to less than 1
        ("bloom", {}),  # ALiBi, added inside Bloom's own attention code
        ("llama", {}),
    ],
)
def test_every_step_equals_eager_attention_with_softcap_and_sinks(tmp_path, family, change):
    """Every step's weights (every layer and head) equal transformers' eager attention of the whole sequence at
    that query row within 1e-5, and each row sums as eager's does (gpt-oss' sinks take a share: < 1)."""
    from core.models import local
    from tests.tiny_models import TEXTS, build

    build(family, tmp_path, **change)
    model = local.load_folder(tmp_path)
    ids, _ = kc.prompt_ids(model, TEXTS[0], 512, 6)
    gen = kc.generate(model, ids, max_new_tokens=6, policies=())
    eager = _eager_rows(model, ids + gen.generated_ids[:-1])
    for step in gen.steps:
        p = step.position
        for layer in range(model.n_layers):
            theirs = eager[layer][:, p, : p + 1]
            ours = torch.from_numpy(step.attention[layer])
            torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=0)
            torch.testing.assert_close(ours.sum(-1), theirs.sum(-1), atol=1e-5, rtol=0)
    if family == "gpt_oss":
        assert float(torch.from_numpy(gen.steps[-1].attention).sum(-1).max()) < 0.999
    # what the page says it checked: the same comparison against one whole pass of the model's own run
    assert gen.full_pass_difference <= 1e-5
    # ... and that check reads the steps against the pass: the last step's weights moved by 2^-10 must show
    last = gen.steps[-1]
    moved = dataclasses.replace(last, attention=last.attention + np.float32(2.0**-10))
    difference = generation.full_pass_difference(model, dataclasses.replace(gen, steps=[*gen.steps[:-1], moved]))
    assert abs(difference - 2.0**-10) <= 1e-5


# --- the eviction comparisons: one pass of every step and policy against each step on its own sliced cache --------


def _sliced_path(model, gen) -> dict[tuple[int, str], dict]:
    """The definition, step by step: the cache of every position before the step, cut to the policy's positions
    (sliced_cache), the step's token fed on it (step), against the same token on the uncut cache."""
    fed = (gen.prompt_ids + gen.generated_ids)[: gen.steps[-1].position]
    cache = model.new_cache()
    model.prefill(cache, fed)
    out = {}
    for i, step in enumerate(gen.steps):
        p = step.position
        full = eviction.next_token_logprobs(model, model.sliced_cache(cache, list(range(p))), step.fed_id, p)
        for policy in eviction.POLICIES:
            keep = eviction.kept_positions(policy, p, gen.window, gen.sinks)
            logq = eviction.next_token_logprobs(model, model.sliced_cache(cache, keep), step.fed_id, p)
            out[i, policy] = {"kl": kc.kl_divergence(full, logq), "probs": torch.topk(logq, 5).values.exp().tolist()}
    return out


def _assert_one_pass_is_the_sliced_path(model, gen) -> None:
    assert gen.eviction_measured
    for (i, policy), want in _sliced_path(model, gen).items():
        got = gen.steps[i].policies[policy]
        assert got["kl"] == pytest.approx(want["kl"], rel=1e-3, abs=1e-7), (i, policy)
        np.testing.assert_allclose(got["top_probs"], want["probs"], rtol=1e-4, atol=1e-7)


def test_the_eviction_pass_equals_each_step_on_its_own_sliced_cache(smollm2):
    """SmolLM2 with a window of 3 keys and 2 sinks: every step evicts under both policies, each differently."""
    ids, _ = kc.prompt_ids(smollm2, PROMPT, 512)
    gen = kc.generate(smollm2, ids, 4, window=3, sinks=2)
    assert all(s.policies[p]["evicted"] > 0 for s in gen.steps for p in eviction.POLICIES)
    _assert_one_pass_is_the_sliced_path(smollm2, gen)


def test_the_eviction_pass_equals_the_sliced_path_on_the_mixture_of_experts(moe):
    """The tiny MoE (offered on /kv-cache): its experts route each of the pass's rows on its own, as in a step."""
    ids, _ = kc.prompt_ids(moe, "the cat sat on the mat because it was tired and the dog ran", 512, 5)
    _assert_one_pass_is_the_sliced_path(moe, kc.generate(moe, ids, 5, window=3, sinks=2))


@pytest.mark.parametrize("family", ["gpt2", "gpt_neox", "llama", "qwen2", "phi3", "bloom", "gptj", "deepseek_v3"])
def test_the_eviction_pass_equals_the_sliced_path_on_other_decoders(tmp_path, family):
    """Learned positions (GPT-2), partial rotary (NeoX), GQA (Llama), ALiBi inside Bloom's own attention, MLA
    (DeepSeek-V3): the mask of the one pass means on each what a sliced cache means."""
    from core.models import local
    from tests.tiny_models import TEXTS, build

    build(family, tmp_path)
    model = local.load_folder(tmp_path)
    ids, _ = kc.prompt_ids(model, TEXTS[0], 512, 4)
    gen = kc.generate(model, ids, 4, window=2, sinks=1)
    _assert_one_pass_is_the_sliced_path(model, gen)


@pytest.mark.parametrize(
    "family, note",
    [("llama", "positions_note"), ("bloom", "positions_note_alibi"), ("gpt2", "positions_note_absolute")],
)
def test_the_page_says_what_a_kept_key_keeps_of_its_place(tmp_path, family, note):
    """RoPE keys keep their rotation; Bloom's ALiBi is built from the count of keys present (transformers'
    build_alibi_tensor over an all-ones mask of a cut cache's length gives slope x 0 .. k-1, whatever positions the
    k keys had), so its kept keys are renumbered; a learned table's entries keep the positions they were made at."""
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    from core.models import local
    from tests.tiny_models import TEXTS, build

    build(family, tmp_path)
    model = local.load_folder(tmp_path)
    ids, _ = kc.prompt_ids(model, TEXTS[0], 512, 2)
    gen = kc.generate(model, ids, 2, window=2, sinks=1)
    assert views.eviction(gen).positions_note == note
    if family == "bloom":  # a sink and two window keys cut from positions 0, 7, 8: ALiBi sees them at 0, 1, 2
        alibi = build_alibi_tensor(torch.ones(1, 3), num_heads=1, dtype=torch.float32)  # one head: slope 2^-8
        assert alibi[0, 0].tolist() == [0.0, 2**-8, 2 * 2**-8]  # not 8 x 2^-8 for the key at position 8
