"""Every answer function (core/lessons/answers/) against an independent computation: hand-worked numbers, a
brute-force loop, torch, transformers' own eager attention / full forward, or a paper's formula. Each test sets
the page's state the way a link would (strings) and changes it, so the answer follows the live state."""

import copy
import itertools
import math

import numpy as np
import pytest
import torch

from core import lessons as core
from core.lessons.answers import compute


def ans(name, state=None, **params):
    """The answer as a lesson gets it: the state as a link's strings, parsed by the page's declaration."""
    return compute(name, params, {k: str(v) for k, v in (state or {}).items()})


def softmax(x):
    e = np.exp(np.asarray(x, dtype=np.float64) - np.max(x))
    return e / e.sum()


# ---- /sdpa-steps ---------------------------------------------------------------------------------------------
Q, K = [[1.0, 2.0], [3.0, 4.0]], [[4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]


def test_classic_cells_by_hand():
    assert ans("sdpa_steps.cell", {}, matrix="scores", row=0, col=0).correct == 1 * 4 + 2 * 5
    assert ans("sdpa_steps.cell", {}, matrix="scores", row=1, col=2).correct == 3 * 8 + 4 * 9
    assert math.isclose(ans("sdpa_steps.cell", {}, matrix="scaled", row=1, col=2).correct, 60 / math.sqrt(2))
    w = softmax([(1 * a + 2 * b) / math.sqrt(2) for a, b in K])
    assert math.isclose(ans("sdpa_steps.cell", {}, matrix="weights", row=0, col=2).correct, w[2], rel_tol=1e-12)
    # d_k = 3: the page pads the example with a zero column, so the scores stay and the scale becomes 1/√3
    assert math.isclose(ans("sdpa_steps.cell", {"dk": 3}, matrix="scaled", row=0, col=0).correct, 14 / math.sqrt(3))


def test_classic_output_equals_torch_sdpa():
    v = torch.tensor([[10.0, 11.0, 12.0], [13.0, 14.0, 15.0], [16.0, 17.0, 18.0]], dtype=torch.float64)
    ref = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(Q, dtype=torch.float64)[None], torch.tensor(K, dtype=torch.float64)[None], v[None]
    )[0]
    got = ans("sdpa_steps.cell", {}, matrix="output", row=1, col=2).correct
    assert math.isclose(got, float(ref[1, 2]), rel_tol=1e-12)


def test_top_key_and_key_order_by_hand():
    for i in (0, 1):
        w = softmax([sum(a * b for a, b in zip(Q[i], k)) / math.sqrt(2) for k in K])
        assert ans("sdpa_steps.top_key", query=i).correct == f"k{int(np.argmax(w))}"
        assert ans("sdpa_steps.key_order", query=i).correct == tuple(f"k{j}" for j in np.argsort(-w))
    # d_k = 1 keeps only the first column: q0 = 1, keys 4, 6, 8 -> still k2 > k1 > k0
    assert ans("sdpa_steps.key_order", {"dk": 1}, query=0).correct == ("k2", "k1", "k0")


def test_the_measured_variances_and_their_growth_against_theory():
    for d_k in (1, 64, 1000):
        raw, scaled = ans("sdpa_steps.variance", {"sdk": d_k}), ans("sdpa_steps.variance", {"sdk": d_k}, scaled=True)
        assert raw.correct == pytest.approx(d_k, rel=0.1) and scaled.correct == pytest.approx(1.0, rel=0.1)
    # var(q.k) = d_k: from 64 to 256 it grows about 4 times; a learner who predicts 2 (the spread's growth) is wrong
    growth = ans("sdpa_steps.variance_growth", {"sdk": 64}, to=256)
    assert growth.correct == pytest.approx(4.0, rel=0.1)
    assert core.is_correct(growth, 4) and not core.is_correct(growth, 2) and not core.is_correct(growth, 16)
    # a link's unusable d_k reads as the page's default, 64
    assert ans("sdpa_steps.variance", {"sdk": "not a number"}).correct == ans("sdpa_steps.variance", {}).correct


def monte_carlo_max_weight(d_k, n_keys=16):
    """The mean largest softmax weight of a row of q.k over n_keys keys, entries N(0, 1): (scaled, unscaled)."""
    rng = np.random.default_rng(1)
    scores = np.einsum("sd,skd->sk", rng.standard_normal((4000, d_k)), rng.standard_normal((4000, 16, d_k)))
    e = np.exp(scores - scores.max(1, keepdims=True))
    unscaled = (e / e.sum(1, keepdims=True)).max(1).mean()
    s = scores / math.sqrt(d_k)
    e = np.exp(s - s.max(1, keepdims=True))
    scaled = (e / e.sum(1, keepdims=True)).max(1).mean()
    return scaled, unscaled


@pytest.mark.parametrize("d_k", [1, 16, 256])
def test_saturation_against_a_numpy_monte_carlo(d_k):
    scaled, unscaled = monte_carlo_max_weight(d_k)
    state = {"sdk": d_k, "keys": 16}
    got_u = ans("sdpa_steps.max_weight", state, scaled=False)
    got_s = ans("sdpa_steps.max_weight", state, scaled=True)
    assert abs(got_u.correct - unscaled) < 0.03 and abs(got_s.correct - scaled) < 0.03
    expected = "same" if abs(scaled - unscaled) < 0.01 else ("scaled" if scaled > unscaled else "unscaled")
    assert ans("sdpa_steps.more_peaked", state).correct == expected


def test_the_largest_weight_predictions_against_the_monte_carlo():
    scaled_64, unscaled_64 = monte_carlo_max_weight(64)
    scaled_1024, unscaled_1024 = monte_carlo_max_weight(1024)
    assert abs(scaled_1024 - scaled_64) < 0.01 and unscaled_1024 > unscaled_64 + 0.05  # the reference's verdicts
    assert ans("sdpa_steps.max_weight_change", {"sdk": 64}, to=1024).correct == "same"
    assert ans("sdpa_steps.max_weight_change", {"sdk": 64}, to=1024, scaled=False).correct == "higher"
    assert ans("sdpa_steps.max_weight_change", {"sdk": 1024}, to=64, scaled=False).correct == "lower"


# ---- /attention and /multi-head on MiniLM ------------------------------------------------------------------------
TEXT = "The cat sat on the mat because it was tired."


def eager_attentions(minilm, text):
    ref = copy.deepcopy(minilm.model)
    ref.set_attn_implementation("eager")
    batch = minilm.tokenize([text])
    with torch.no_grad():
        out = ref.eval()(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_attentions=True)
    return batch.tokens[0], out.attentions


@pytest.mark.parametrize("layer, head, word", [(2, 0, "it"), (5, 3, "cat"), (0, 7, "tired")])
def test_attention_top_key_equals_transformers_eager(minilm, layer, head, word):
    tokens, attentions = eager_attentions(minilm, TEXT)
    q = tokens.index(word)
    k = int(attentions[layer][0, head, q].argmax())
    state = {"text": TEXT, "layer": layer, "head": head}
    assert ans("attention.top_key", state, query=word).correct == f"{k} {tokens[k]}"
    assert ans("multi_head.top_key", state, query=word).correct == f"{k} {tokens[k]}"


def test_the_answer_follows_the_sentence(minilm):
    other = "A dog barked at the mailman and it ran away."
    tokens, attentions = eager_attentions(minilm, other)
    k = int(attentions[2][0, 0, tokens.index("it")].argmax())
    assert ans("attention.top_key", {"text": other, "layer": 2, "head": 0}, query="it").correct == f"{k} {tokens[k]}"


def test_multi_head_shapes_from_the_config(minilm):
    config = minilm.model.config
    d_k = config.hidden_size // config.num_attention_heads
    assert ans("multi_head.shape", {"text": TEXT}, what="d_k").correct == d_k
    assert ans("multi_head.shape", {"text": TEXT}, what="concat").correct == config.hidden_size
    assert ans("multi_head.shape", {"text": TEXT}, what="tokens").correct == len(minilm.tokenize([TEXT]).tokens[0])


@pytest.mark.parametrize("heads, n", [(8, 64), (32, 64), (1, 16), (16, 512)])
def test_head_count_against_measured_rank_module_parameters_and_counted_flops(heads, n):
    from torch.utils.flop_counter import FlopCounterMode

    from core import multi_head as mh

    state = {"n": n}
    assert ans("multi_head.head_count", state, heads=heads, what="score_rank").correct == max(
        mh.score_ranks(512, n, heads, seed=1)
    )
    module = torch.nn.MultiheadAttention(512, heads)
    assert ans("multi_head.head_count", state, heads=heads, what="parameters").correct == sum(
        p.numel() for p in module.parameters()
    )
    x, d_k = torch.randn(n, 512), 512 // heads
    with FlopCounterMode(display=False) as counter:
        q, k, v = (x @ torch.randn(512, 512) for _ in range(3))
        q, k, v = (t.reshape(n, heads, d_k).transpose(0, 1) for t in (q, k, v))
        z = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d_k), -1) @ v
        z.transpose(0, 1).reshape(n, 512) @ torch.randn(512, 512)
    assert ans("multi_head.head_count", state, heads=heads, what="flops").correct == counter.get_total_flops()
    one_head = sum(p.numel() for p in torch.nn.MultiheadAttention(512, 1).parameters())
    assert ans("multi_head.head_count", state, heads=heads, what="parameters").correct == one_head  # h changes none


def test_best_head_is_the_maximum_of_the_committed_map_by_a_loop():
    from core import head_detectors as hd

    for model, detector in (("minilm", "previous_token"), ("smollm2", "induction")):
        grid = hd.load_results()["models"][model]["scores"][detector]
        best, where = -1.0, None
        for layer, row in enumerate(grid):
            for head, score in enumerate(row):
                if score > best:
                    best, where = score, f"{layer}.{head}"
        got = ans("head_detectors.best_head", {"model": model, "detector": detector})
        assert got.correct == where and len(got.options) == 4


# ---- /masks ------------------------------------------------------------------------------------------------------
MASK_TEXT = "The cat sat on the mat .\nDogs bark .\nIt was tired because it had chased a mouse ."


@pytest.mark.parametrize("row, kind", [(0, "causal"), (1, "both"), (1, "padding"), (2, "both")])
def test_allowed_cells_by_a_loop(row, kind):
    lengths = [len(s.split()) for s in MASK_TEXT.splitlines()]
    n, real = max(lengths), lengths[row]
    count = 0
    for i, j in itertools.product(range(n), range(n)):
        causal_ok = j <= i
        padding_ok = j < real
        count += {"causal": causal_ok, "padding": padding_ok, "both": causal_ok and padding_ok}[kind]
    assert ans("masks.allowed_count", {"text": MASK_TEXT, "row": row, "mask": kind}).correct == count


@pytest.mark.parametrize("head, word", [(1, "mat"), (3, "sat"), (0, "The")])
def test_masked_top_key_against_sdpa_weights_by_hand(head, word):
    from core.masks import batch as mb
    from core.masks.layers import embed, random_attention

    lists = [s.split() for s in MASK_TEXT.splitlines()]
    padded = mb.pad_batch(lists)
    mha = random_attention(seed=0)
    x = embed(padded.padded, seed=0)
    with torch.no_grad():
        q, k, _ = mha.project(x)
    n, real, i = len(padded.padded[0]), len(lists[0]), lists[0].index(word)
    scores = (q[0, head, i] @ k[0, head].T / math.sqrt(q.shape[-1])).numpy()
    visible = [j for j in range(n) if j <= i and j < real]
    best = max(visible, key=lambda j: scores[j])
    got = ans("masks.top_key", {"text": MASK_TEXT, "row": 0, "head": head, "mask": "both"}, query=word)
    assert got.correct == f"{best} {padded.padded[0][best]}"


def test_three_kinds_by_their_token_counts():
    for src, tgt in ((0, 1), (1, 2), (2, 2)):
        lines = MASK_TEXT.splitlines()
        s, t = len(lines[src].split()), len(lines[tgt].split())
        counts = {"encoder_self": s * s, "decoder_self": t * (t + 1) // 2, "cross": t * s}
        got = ans("masks.kind_order", {"text": MASK_TEXT, "src": src, "tgt": tgt})
        assert got.correct == tuple(sorted(counts, key=lambda k: -counts[k])) and got.detail == counts
        assert ans("masks.cross_shape", {"text": MASK_TEXT, "src": src, "tgt": tgt}).correct == s
        assert ans("masks.cross_shape", {"text": MASK_TEXT, "src": src, "tgt": tgt}, what="queries").correct == t


# ---- /encoder-decoder ------------------------------------------------------------------------------------------------
SENTENCE = "The dog makes the teacher in the school."


def greedy_by_hand(language, steps):
    """HF's full forward (encoder rerun each time), greedy: the decoder inputs, cross-attentions and probs per step.
    transformers' own model and tokenizer from the shipped folder, not the contract the answers use."""
    from transformers import MarianMTModel, PreTrainedTokenizerFast

    from core.encoder_decoder import model as ed
    from core.encoder_decoder.translate import source_text

    model = MarianMTModel.from_pretrained(ed.WEIGHTS_DIR, dtype=torch.float32, attn_implementation="eager").eval()
    tokenizer = PreTrainedTokenizerFast.from_pretrained(ed.WEIGHTS_DIR)
    src = tokenizer(source_text(SENTENCE, language), return_tensors="pt")["input_ids"][0]
    src = torch.cat([src, torch.tensor([tokenizer.eos_token_id])])[None]
    dec = torch.tensor([[model.config.decoder_start_token_id]])
    with torch.no_grad():
        for _ in range(steps + 1):
            out = model(input_ids=src, decoder_input_ids=dec, output_attentions=True)
            dec = torch.cat([dec, out.logits[:, -1].argmax(-1, keepdim=True)], 1)
    return tokenizer.convert_ids_to_tokens(src[0]), out


@pytest.mark.parametrize("language, step, layer, head", [("ja", 1, 0, 0), ("ko", 2, 1, 3), ("ja", 0, 1, 1)])
def test_encoder_decoder_answers_against_a_greedy_loop(encoder_decoder, language, step, layer, head):
    _, tokenizer = encoder_decoder
    source, out = greedy_by_hand(language, step)
    state = {"text": SENTENCE, "target": language, "step": step, "layer": layer, "head": head}
    k = int(out.cross_attentions[layer][0, head, step].argmax())
    assert ans("encoder_decoder.cross_top", state).correct == f"{k} {source[k]}"
    probs = torch.softmax(out.logits[0, step], -1)
    best = tokenizer.convert_ids_to_tokens(int(probs.argmax()))
    assert ans("encoder_decoder.next_token", state).correct == best
    assert ans("encoder_decoder.probability", state).correct == pytest.approx(float(probs.max()), abs=1e-5)
    assert ans("encoder_decoder.source_length", state).correct == len(source)


def test_agreement_against_the_grammar(encoder_decoder):
    from core.encoder_decoder import grammar
    from core.encoder_decoder.translate import greedy_translate, source_text

    model, tokenizer = encoder_decoder
    for language in grammar.LANGUAGES:
        meaning, _ = grammar.parse(SENTENCE.lower().replace(".", " ."))
        reference = grammar.make_pair(meaning, language).target
        written = greedy_translate(model, tokenizer, source_text(SENTENCE, language))
        expected = "yes" if written == reference else "no"
        assert ans("encoder_decoder.agrees", {"text": SENTENCE, "target": language}).correct == expected
    unknown = {"text": "Colourless green ideas sleep furiously", "target": "ja"}
    assert ans("encoder_decoder.agrees", unknown).correct == "no_reference"


# ---- /positions (RoPE) -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("d, base_exp, m", [(16, 4.0, 3), (64, 4.0, 500), (8, 2.5, 10)])
def test_rope_angles_against_transformers_default_rope(d, base_exp, m):
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(hidden_size=d, num_attention_heads=1, rope_theta=10**base_exp)
    inv = LlamaRotaryEmbedding.compute_default_rope_parameters(config)[0].double()
    state = {"part": "rope", "rope_d": d, "rope_base": base_exp, "m": m}
    for pair in (0, 1, d // 2 - 1):
        assert ans("positions.rope_angle", state, pair=pair).correct == pytest.approx(m * float(inv[pair]), rel=1e-6)
    assert ans("positions.rope_wavelength", state, pair="last").correct == pytest.approx(
        2 * math.pi / float(inv[-1]), rel=1e-6
    )
    # the prediction: the base slider moved to base_exp + 1 (a base 10 times larger), from transformers' own table
    wider = LlamaConfig(hidden_size=d, num_attention_heads=1, rope_theta=10 ** (base_exp + 1))
    inv_wider = LlamaRotaryEmbedding.compute_default_rope_parameters(wider)[0].double()
    growth = ans("positions.wavelength_growth", state, pair="last", to_base=base_exp + 1).correct
    assert growth == pytest.approx(float(inv[-1] / inv_wider[-1]), rel=1e-6)
    assert growth == pytest.approx(10 ** ((d - 2) / d), rel=1e-6)  # (base'/base)^(2i/d) with i = d/2 - 1


def test_rope_scores_depend_on_the_offset_only_by_complex_rotation():
    d, base, rng = 16, 1e4, np.random.default_rng(0)
    theta = base ** (-np.arange(0, d, 2) / d)
    q, k = (
        rng.standard_normal(d // 2) + 1j * rng.standard_normal(d // 2),
        rng.standard_normal(d // 2) + 1j * rng.standard_normal(d // 2),
    )

    def score(m, n):  # RoPE as complex multiplication: pair i of position m turned by m * theta_i
        return float(np.real(np.sum(q * np.exp(1j * m * theta) * np.conj(k * np.exp(1j * n * theta)))))

    assert max(abs(score(m, n) - score(m + 7, n + 7)) for m in range(20) for n in range(20)) < 1e-9
    assert ans("positions.relative_only", {"part": "rope"}).correct == "offset"


# ---- /rope-scaling ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("factor", [2, 4, 32])
def test_rope_scaling_against_the_papers_formulas(factor):
    state = {"factor": factor, "maxd": 131072}
    for pair in (0, 17, "last"):
        assert ans("rope_scaling.ratio", state, method="linear", pair=pair).correct == pytest.approx(factor)
    assert ans("rope_scaling.attention_factor", state, method="yarn").correct == pytest.approx(
        0.1 * math.log(factor) + 1
    )
    # YaRN (Peng et al. 2023, eq. 17-18): pair i turns L0 / wavelength_i times in the trained context; pairs
    # turning more than beta_fast = 32 times are kept (ratio 1); the boundary is transformers' find_correction_dim
    d, base, l0 = 64, 100000.0, 8192
    low = math.floor(d * math.log(l0 / (32 * 2 * math.pi)) / (2 * math.log(base)))
    assert ans("rope_scaling.kept_pairs", state, method="yarn").correct == low + 1  # pairs 0..low: ramp 0
    assert ans("rope_scaling.ratio", state, method="yarn", pair=0).correct == pytest.approx(1.0)  # pair 0 kept
    slowest_default = 2 * math.pi * base ** ((d - 2) / d)
    dynamic_base = base * (factor * 131072 / l0 - (factor - 1)) ** (d / (d - 2))
    slowest = {"default": slowest_default, "linear": factor * slowest_default,
               "dynamic": 2 * math.pi * dynamic_base ** ((d - 2) / d)}  # fmt: skip
    assert ans("rope_scaling.slowest_order", state).correct == tuple(sorted(slowest, key=lambda m: -slowest[m]))


# ---- /moe ------------------------------------------------------------------------------------------------------------
MOE_TEXT = "The little cat sees a big dog. She runs to the park quickly, and they play together!"


def hf_router_logits(model, text):
    batch = model.tokenize([text])
    with torch.no_grad():
        out = model.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_router_logits=True)
    return batch.tokens[0], out.router_logits


@pytest.mark.parametrize("layer, word", [(1, "cat"), (0, "runs"), (3, "quickly")])
def test_moe_expert_against_mixtral_router_logits(moe, layer, word):
    tokens, logits = hf_router_logits(moe, MOE_TEXT)
    expected = int(logits[layer].reshape(len(tokens), -1)[tokens.index(word)].argmax())
    assert ans("moe.expert", {"text": MOE_TEXT, "layer": layer}, word=word).correct == expected


def simulated_slots(model, cf: float, layer: int = 1) -> tuple[int, int]:
    """(capacity, dropped assignments) by filling each expert's slots from transformers' own router logits."""
    tokens, logits = hf_router_logits(model, MOE_TEXT)
    probs = torch.softmax(logits[layer].reshape(len(tokens), -1).float(), -1)
    n_experts, k = probs.shape[1], model.top_k
    top = probs.topk(k, -1).indices.tolist()
    capacity = math.ceil(cf * len(tokens) * k / n_experts)
    used, dropped = [0] * n_experts, 0
    for rank in range(k):  # first choices of every token before any second choice (GShard, Switch)
        for t in range(len(tokens)):
            e = top[t][rank]
            if used[e] < capacity:
                used[e] += 1
            else:
                dropped += 1
    return capacity, dropped


@pytest.mark.parametrize("cf", [0.25, 0.5, 1.25, 4.0])
def test_moe_capacity_and_dropped_by_simulating_the_slots(moe, cf):
    capacity, dropped = simulated_slots(moe, cf)
    state = {"text": MOE_TEXT, "layer": 1, "cf": cf}
    assert ans("moe.capacity", state).correct == capacity
    assert ans("moe.dropped", state).correct == dropped


@pytest.mark.parametrize("cf", [0.5, 1.25, 4.0])
def test_moe_dropped_change_by_simulating_both_checkpoints(moe_variants, cf):
    drops = {v: simulated_slots(model, cf)[1] for v, model in moe_variants.items()}
    expected = "same" if drops["collapsed"] == drops["balanced"] else (
        "more" if drops["collapsed"] > drops["balanced"] else "fewer")  # fmt: skip
    state = {"text": MOE_TEXT, "layer": 1, "cf": cf, "ckpt": "balanced"}
    assert ans("moe.dropped_change", state, ckpt="collapsed").correct == expected


# ---- /linear-attention -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, d", [(16, 16), (64, 32), (4096, 64)])
def test_linear_attention_sizes_from_real_tensors_and_costs_by_a_loop(n, d):
    state = {"n": n, "d": d}
    if n * n <= 1 << 20:
        phi_q, phi_k, v = torch.rand(n, d), torch.rand(n, d), torch.rand(n, d)
        assert ans("linear_attention.cost", state, order="quadratic").correct == (phi_q @ phi_k.T).numel()
        assert ans("linear_attention.cost", state, order="linear").correct == (phi_k.T @ v).numel()
    quadratic = n * n * d + n * n * d + n * n  # kernel matrix, times V, row sums
    linear = n * d * d + n * d * d + n * d + n * d  # K^T V, Q times it, z = sum phi(k), phi(q) . z
    assert ans("linear_attention.cheaper", state).correct == ("linear" if linear < quadratic else "quadratic")
    first = next(m for m in itertools.count(1) if 2 * m * d * d + 2 * m * d < m * m * (2 * d + 1))
    crossover = ans("linear_attention.crossover", state)
    assert crossover.correct == first and not core.is_correct(crossover, first - 1)  # exact: one less is not cheaper


@pytest.mark.parametrize("spread, causal", [(1.0, False), (2.0, False), (0.25, True)])
def test_implied_matrix_entropy_by_hand(spread, causal):
    n, d, seed = 12, 16, 0
    g = torch.Generator().manual_seed(seed)
    q, k, _ = (torch.randn(n, d, generator=g, dtype=torch.float64).numpy() * spread for _ in range(3))
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # noqa: E731  elu + 1
    lin, soft = phi(q) @ phi(k).T, q @ k.T / math.sqrt(d)
    ent = {"linear": [], "softmax": []}
    for i in range(n):
        keys = range(i + 1) if causal else range(n)
        a = np.array([lin[i, j] for j in keys])
        a = a / a.sum()
        s = softmax([soft[i, j] for j in keys])
        ent["linear"].append(-(a * np.log(a)).sum())
        ent["softmax"].append(-(s * np.log(s)).sum())
    state = {"im_n": n, "im_d": d, "spread": spread, "seed": seed, "causal": int(causal)}
    got = ans("linear_attention.more_spread", state)
    assert got.detail["linear"] == pytest.approx(np.mean(ent["linear"]), abs=1e-4)
    assert got.correct == max(ent, key=lambda m: np.mean(ent[m]))


# ---- /flash-attention and /sdpa-gqa ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n, br, bc", [(10, 4, 3), (48, 64, 1), (7, 7, 2)])
def test_tiles_by_ceiling_division(n, br, bc):
    state = {"n": n, "br": br, "bc": bc}
    assert ans("flash_attention.tiles", state, what="query").correct == -(-n // br)
    assert ans("flash_attention.tiles", state, what="all").correct == -(-n // br) * -(-n // bc)


@pytest.mark.parametrize("step, qtile, causal", [(0, 0, 0), (1, 0, 0), (3, 2, 1)])
def test_running_max_is_the_largest_score_seen(step, qtile, causal):
    n, d, br, bc, seed = 10, 4, 4, 3, 0
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(n, d, generator=g, dtype=torch.float64) for _ in range(2))
    row = qtile * br
    seen = [j for j in range(min(n, (step + 1) * bc)) if not causal or j <= row]
    expected = max(float(q[row] @ k[j]) / math.sqrt(d) for j in seen)
    state = {"n": n, "d": d, "br": br, "bc": bc, "qtile": qtile, "step": step, "causal": causal, "seed": seed}
    assert ans("flash_attention.running_max", state, row=0).correct == pytest.approx(expected, rel=1e-12)


def test_kv_cache_bytes_equal_a_real_cache_tensor():
    layers, kv, hd, ctx = 32, 8, 128, 16
    cache = [torch.empty(2, 1, kv, ctx, hd, dtype=torch.bfloat16) for _ in range(layers)]  # K and V per layer
    state = {"cfg": "llama-3-8b", "ctx": ctx, "batch": 1, "dtype": "bfloat16"}
    assert ans("sdpa_gqa.kv_bytes", state, unit="bytes").correct == sum(t.nbytes for t in cache)
    assert ans("sdpa_gqa.kv_bytes", {**state, "ctx": 8192}).correct == 2 * 32 * 8 * 128 * 8192 * 2 / 2**30
    custom = {"cfg": "custom", "layers": 2, "heads": 12, "kv": 4, "hd": 64, "ctx": 100, "batch": 3, "dtype": "float32"}
    assert ans("sdpa_gqa.kv_bytes", custom, unit="bytes").correct == 2 * 2 * 4 * 64 * 100 * 3 * 4
    assert ans("sdpa_gqa.group_size", custom).correct == 3
    # the prediction at another context and batch: the cache is linear in both
    assert ans("sdpa_gqa.kv_bytes", custom, unit="bytes", ctx=400, batch=6).correct == 2 * 2 * 4 * 64 * 400 * 6 * 4
    with pytest.raises(ValueError):
        ans("sdpa_gqa.kv_bytes", {**custom, "kv": 5})


# ---- /transformer-xl: eviction ------------------------------------------------------------------------------------


@pytest.mark.parametrize("window, sinks, query", [(16, 4, 100), (16, 4, 10), (1, 0, 5), (8, 20, 12)])
def test_visible_keys_by_a_loop(window, sinks, query):
    state = {"win": window, "sinks": sinks}
    plain = sum(1 for j in range(query + 1) if query - j < window)
    with_sinks = sum(1 for j in range(query + 1) if query - j < window or j < sinks)
    assert ans("transformer_xl.visible_keys", state, policy="window", query=query).correct == plain
    assert ans("transformer_xl.visible_keys", state, policy="sinks_window", query=query).correct == with_sinks


def test_eviction_verdicts_from_the_committed_run():
    import json
    import pathlib

    data = json.loads((pathlib.Path(__file__).parents[2] / "results" / "transformer_xl.json").read_text())
    past = data["mean_loss_past_window"]
    three = ("full", "sinks_window", "window")
    by_hand = tuple(sorted(three, key=lambda m: past[m]))
    assert ans("transformer_xl.loss_order", methods=list(three)).correct == by_hand
    lowest, best = math.inf, None
    for method, loss in past.items():
        if method != "full" and loss < lowest:
            lowest, best = loss, method
    assert ans("transformer_xl.best_after_eviction").correct == best
