"""The /kv-cache and /logit-lens answer functions against transformers' own modules, on tiny random decoders saved
as a learner's folders (tests/tiny_models.py): the bytes of transformers' DynamicCache after a context, the
multiply-adds torch's FlopCounterMode counts in a cached and an uncached step, greedy next tokens and eager attention
weights, and the logit lens from transformers' hidden states, final norm and lm_head; SmolLM2's cache by hand."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache

from core.lessons.answers import compute
from core.models.hf import cache_keyword  # the installed transformers' name for the cache argument
from tests.tiny_models import TEXTS, registered_folders


def ans(name, state, **params):
    return compute(name, params, {k: str(v) for k, v in state.items()})


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """{family: (registry key, transformers' model in eager attention, the token ids of TEXTS[0], its tokenizer)}."""
    root = tmp_path_factory.mktemp("tiny")
    with registered_folders(root, ("llama", "gemma2")) as keys:
        found = {}
        for family, key in keys.items():
            folder = root / f"tiny-{family}"
            model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
            tokenizer = AutoTokenizer.from_pretrained(folder)
            found[family] = key, model, tokenizer(TEXTS[0], add_special_tokens=False).input_ids, tokenizer
        yield found


def state_of(key, **more):
    return {"model": key, "prompt": TEXTS[0], "new": 1, "window": 64, **more}  # nothing evicted: no extra passes


@torch.no_grad()
def cache_bytes_after(model, n: int) -> int:
    cache = DynamicCache(config=model.config)
    model(input_ids=torch.arange(n)[None] % model.config.vocab_size, use_cache=True, **{cache_keyword(): cache})
    return sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))


@pytest.mark.parametrize("family", ["llama", "gemma2"])  # gemma2: sliding layers of W = 4 beside a global one
@pytest.mark.parametrize("ctx", [3, 20])
def test_cache_bytes_at_a_context_equal_transformers_own_cache(tiny, family, ctx):
    key, model, _, _ = tiny[family]
    got = ans("kv_cache.bytes_at", state_of(key, ctx=ctx), unit="bytes")
    assert got.correct == cache_bytes_after(model, ctx)
    # by hand: 2 (K, V) x kv heads x head_dim x 4 bytes per cached position; gemma2's sliding layers hold W - 1 = 3
    kv, d, heads = (2, 8, 6) if family == "llama" else (2, 8, 4)
    positions = 3 * ctx if family == "llama" else ctx + 2 * min(ctx, 3)
    assert got.correct == 2 * kv * d * 4 * positions
    assert ans("kv_cache.bytes_at", state_of(key, ctx=ctx), unit="bytes", heads="query").correct == (
        2 * heads * d * 4 * positions
    )


def test_smollm2_cache_at_8k_by_hand(smollm2):
    """30 layers, 3 key/value heads of 64 (9 query heads), float32: the lesson's two numbers."""
    state = {"new": 1, "window": 64, "ctx": 8192}
    assert ans("kv_cache.bytes_at", state).correct == 2 * 30 * 3 * 64 * 8192 * 4 / 2**20 == 360
    assert ans("kv_cache.bytes_at", state, heads="query").correct == 2 * 30 * 9 * 64 * 8192 * 4 / 2**20 == 1080


@torch.no_grad()
def counted_flops(model, ids: list[int], cached: bool) -> int:
    """torch's count of the step that feeds ids[-1]: on a cache of ids[:-1] (filled before counting), or with no
    cache (all of ids again); the head turns only the last row into scores either way (logits_to_keep=1)."""
    cache = DynamicCache(config=model.config)
    if cached:
        model(input_ids=torch.tensor([ids[:-1]]), use_cache=True, **{cache_keyword(): cache})
    fed = ids[-1:] if cached else ids
    with FlopCounterMode(display=False) as counter:
        model(
            input_ids=torch.tensor([fed]),
            use_cache=cached,
            logits_to_keep=1,
            **{cache_keyword(): cache if cached else None},
        )
    return counter.get_total_flops()


def test_work_saved_per_token_equals_the_multiply_adds_torch_counts(tiny):
    key, model, ids, _ = tiny["llama"]
    got = ans("kv_cache.work_ratio", state_of(key))
    with_cache, without = counted_flops(model, ids, True), counted_flops(model, ids, False)
    assert got.detail["n"] == len(ids) == 19
    # FlopCounterMode counts 2 per multiply-add; RoPE's small angle product is the only thing it counts beside them
    assert got.detail["with_cache"] == pytest.approx(with_cache / 2, rel=1e-3)
    assert got.detail["without"] == pytest.approx(without / 2, rel=1e-3)
    assert got.correct == pytest.approx(without / with_cache, rel=1e-3)
    assert 1 < got.correct < len(ids)  # less than n: the head's row costs the same both ways


@torch.no_grad()
def test_next_token_and_top_key_equal_transformers_greedy_and_eager_attention(tiny):
    key, model, ids, tokenizer = tiny["llama"]
    out = model(input_ids=torch.tensor([ids]), output_attentions=True, use_cache=False)
    nxt = ans("kv_cache.next_token", state_of(key))
    assert (
        nxt.correct == tokenizer.convert_ids_to_tokens(int(out.logits[0, -1].argmax())) and nxt.correct in nxt.options
    )
    for layer in range(3):
        mean = out.attentions[layer][0, :, -1].mean(0)  # the last query's row, mean over heads
        got = ans("kv_cache.top_key", state_of(key, layer=layer))
        assert got.correct.split(" ", 1)[0] == str(int(mean.argmax()))
        assert got.detail["weight"] == pytest.approx(float(mean.max()), abs=1e-4)


# ---- /logit-lens ----------------------------------------------------------------------------------------------------


@torch.no_grad()
def lens_by_hand(model, ids) -> torch.Tensor:
    """(stages, n) top token ids: transformers' hidden states before the last (embeddings, after layer 0, ...) through
    its final norm and lm_head, then its own logits (its last hidden state comes back normed already)."""
    out = model(input_ids=torch.tensor([ids]), output_hidden_states=True, use_cache=False)
    stages = [model.lm_head(model.model.norm(h))[0] for h in out.hidden_states[:-1]] + [out.logits[0]]
    return torch.stack(stages).argmax(-1)


def test_lens_answers_equal_transformers_hidden_states_through_norm_and_head(tiny):
    key, model, ids, tokenizer = tiny["llama"]
    top = lens_by_hand(model, ids)  # (4, 19): embeddings and 3 layers
    word = tokenizer.convert_ids_to_tokens
    state = {"model": key, "text": TEXTS[0]}
    for pos in (0, 7, len(ids) - 1):
        final = int(top[-1, pos])
        assert ans("logit_lens.final", state, word=pos).correct == word(final)
        for layer in (-1, 0, 1, 2):
            got = ans("logit_lens.top_at", state, word=pos, layer=layer)
            assert got.correct == word(int(top[layer + 1, pos])) and word(final) in got.options
        stage = next(s for s in range(len(top)) if all(int(t) == final for t in top[s:, pos]))  # the last always is
        assert ans("logit_lens.first_layer", state, word=pos).correct == stage - 1
    firsts = [next(s for s in range(len(top)) if (top[s:, p] == top[-1, p]).all()) for p in range(len(ids))]
    late = sum(s >= len(top) - 1 for s in firsts)  # 3 layers: "late" is the last one (half of them, rounded down)
    assert ans("logit_lens.finding", state).correct == ("late" if 2 * late > len(ids) else "early")
