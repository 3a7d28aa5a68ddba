"""The MoE layer in core/moe/ against transformers' Mixtral block and hand-worked examples; the labelled
data generator; training; the shipped checkpoints; the table of real MoE models."""

import itertools
import math

import pytest
import torch
from transformers import MixtralConfig
from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock, load_balancing_loss_func

from app import i18n
from core import moe
from core.models import moe_model
from core.moe import catalog as moe_catalog
from core.moe import data as moe_data
from core.moe import training as moe_training
from tests.references import assert_close_in_scale

# --- the MoE layer -------------------------------------------------------------------------------------------


def _mixtral_block(n_experts=6, top_k=2, d=32, inner=48, seed=0):
    torch.manual_seed(seed)
    cfg = MixtralConfig(
        hidden_size=d,
        intermediate_size=inner,
        num_local_experts=n_experts,
        num_experts_per_tok=top_k,
        router_jitter_noise=0.0,
    )
    cfg._experts_implementation = "eager"
    block = MixtralSparseMoeBlock(cfg).eval()
    with torch.no_grad():  # larger than the default init so routing is far from uniform
        block.gate.weight.normal_(0, 0.5)
        block.experts.gate_up_proj.normal_(0, 0.2)
        block.experts.down_proj.normal_(0, 0.2)
    return block


def _weights(block):
    return dict(
        router_weight=block.gate.weight, gate_up_proj=block.experts.gate_up_proj, down_proj=block.experts.down_proj
    )


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_moe_forward_reproduces_mixtral_block(top_k):
    block = _mixtral_block(top_k=top_k)
    x = torch.randn(3, 11, 32)
    with torch.no_grad():
        expected = block(x)
        got, routing = moe.moe_forward(x, top_k=top_k, **_weights(block))
        logits, scores, index = block.gate(x)
    assert_close_in_scale(got, expected, what="MoE block output")
    torch.testing.assert_close(routing.logits, logits)
    torch.testing.assert_close(routing.gates, scores, atol=1e-6, rtol=1e-6)
    assert torch.equal(routing.top_k_index, index)


def test_top_k_renormalisation():
    torch.manual_seed(1)
    logits = torch.randn(50, 8) * 3
    r = moe.route_tokens(logits, top_k=2)
    probs = torch.softmax(logits, -1)
    torch.testing.assert_close(r.probs, probs)
    # The chosen experts are the two most probable, in order.
    top2 = probs.sort(-1, descending=True)
    assert torch.equal(r.top_k_index, top2.indices[:, :2])
    # Gates sum to 1 and keep the ratio of the two probabilities.
    torch.testing.assert_close(r.gates.sum(-1), torch.ones(50))
    torch.testing.assert_close(r.gates[:, 0] / r.gates[:, 1], top2.values[:, 0] / top2.values[:, 1])
    # Hand-worked: probs (0.5, 0.3, 0.2) with top-2 -> gates (0.625, 0.375).
    hand = moe.route_tokens(torch.log(torch.tensor([[0.5, 0.3, 0.2]])), top_k=2)
    torch.testing.assert_close(hand.gates, torch.tensor([[0.625, 0.375]]))
    # Without renormalisation the gates are the raw probabilities (Switch, top-1 style).
    raw = moe.route_tokens(torch.log(torch.tensor([[0.5, 0.3, 0.2]])), top_k=2, renormalize=False)
    torch.testing.assert_close(raw.gates, torch.tensor([[0.5, 0.3]]))


def test_capacity_drops_overflow_in_order():
    # 6 tokens, 2 experts, top-1, everyone wants expert 0. Capacity = ceil(1.0 * 6 * 1 / 2) = 3.
    index = torch.zeros(6, 1, dtype=torch.long)
    assert moe.expert_capacity(6, 2, 1, 1.0) == 3
    kept = moe.capacity_keep_mask(index, n_experts=2, capacity=3)
    assert kept[:, 0].tolist() == [True, True, True, False, False, False]
    # Capacity 1.5 -> ceil(4.5) = 5 slots.
    assert moe.expert_capacity(6, 2, 1, 1.5) == 5


def test_capacity_keeps_first_choices_before_second_choices():
    # 3 tokens, top-2. Expert 0 is token 2's FIRST choice and tokens 0 and 1's SECOND choice.
    # With capacity 1, token 2's first choice wins the slot although token 2 comes last.
    index = torch.tensor([[1, 0], [2, 0], [0, 1]])
    kept = moe.capacity_keep_mask(index, n_experts=3, capacity=1)
    assert kept.tolist() == [[True, False], [True, False], [True, False]]
    # Expert 1: token 0 (first choice) before token 2 (second choice) -> token 2's second choice dropped.


def test_capacity_ignores_padding_and_counts_drops():
    index = torch.tensor([[0], [0], [0], [0]])
    mask = torch.tensor([True, False, True, True])
    kept = moe.capacity_keep_mask(index, n_experts=2, capacity=2, token_mask=mask)
    assert kept[:, 0].tolist() == [True, False, True, False]  # the pad takes no slot and is never kept
    shares = moe.dropped_share_by_capacity(index, 2, [0.5, 1.0, 2.0], token_mask=mask)
    # 3 real tokens all on expert 0: capacity ceil(f * 3 / 2) = 1, 2, 3 -> dropped 2/3, 1/3, 0.
    assert shares == pytest.approx([2 / 3, 1 / 3, 0.0])


def test_moe_forward_with_capacity():
    block = _mixtral_block(top_k=2)
    x = torch.randn(40, 32)
    with torch.no_grad():
        full, _ = moe.moe_forward(x, top_k=2, **_weights(block))
        # A factor of E/k means every expert could take every token: nothing dropped, same output.
        same, r_big = moe.moe_forward(x, top_k=2, capacity_factor=6 / 2, **_weights(block))
        tight, r = moe.moe_forward(x, top_k=2, capacity_factor=0.5, **_weights(block))
    torch.testing.assert_close(same, full)
    assert bool(r_big.kept.all())
    assert r.capacity == math.ceil(0.5 * 40 * 2 / 6)
    counts = torch.bincount(r.top_k_index[r.kept], minlength=6)
    assert int(counts.max()) <= r.capacity and not bool(r.kept.all())
    # A token whose every choice was dropped gets exactly zero from the layer (it rides the residual).
    fully_dropped = ~r.kept.any(-1)
    assert torch.all(tight[fully_dropped] == 0)
    # A token that kept everything is unchanged.
    all_kept = r.kept.all(-1)
    torch.testing.assert_close(tight[all_kept], full[all_kept])


# --- load-balancing losses -----------------------------------------------------------------------------------


def test_switch_loss_hand_worked():
    # Uniform router probabilities: P_i = 1/N, so N * sum f_i / N = 1 whatever f is.
    uniform = torch.full((4, 4), 0.25)
    assert float(moe.switch_balance_loss(uniform, torch.tensor([[0], [1], [2], [3]]))) == pytest.approx(1.0)
    # Complete collapse: every token on expert 0 with probability 1 -> N.
    collapsed = torch.tensor([[1.0, 0, 0, 0]] * 5)
    assert float(moe.switch_balance_loss(collapsed, torch.zeros(5, 1, dtype=torch.long))) == pytest.approx(4.0)
    # 2 experts, probs (0.9, 0.1) and (0.6, 0.4), top-1: f = (1, 0), P = (0.75, 0.25) -> 2 * 0.75 = 1.5.
    probs = torch.tensor([[0.9, 0.1], [0.6, 0.4]])
    assert float(moe.switch_balance_loss(probs, torch.tensor([[0], [0]]))) == pytest.approx(1.5)


@pytest.mark.parametrize("top_k", [1, 2])
def test_switch_loss_matches_transformers(top_k):
    """transformers' Mixtral loss counts all k choices without dividing by k: it is k x ours for one layer."""
    torch.manual_seed(2)
    logits = torch.randn(64, 8) * 2
    r = moe.route_tokens(logits, top_k)
    theirs = load_balancing_loss_func((logits,), num_experts=8, top_k=top_k)
    torch.testing.assert_close(theirs, top_k * moe.switch_balance_loss(r.probs, r.top_k_index))
    # With a padding mask as well.
    mask = (torch.arange(64) % 5 != 0).reshape(4, 16)
    theirs = load_balancing_loss_func((logits,), num_experts=8, top_k=top_k, attention_mask=mask)
    ours = moe.switch_balance_loss(r.probs, r.top_k_index, token_mask=mask.reshape(-1))
    torch.testing.assert_close(theirs, top_k * ours)


def test_uniform_deviation_loss():
    assert float(moe.uniform_deviation_loss(torch.full((8,), 1 / 8))) == pytest.approx(0.0, abs=1e-7)
    assert float(moe.uniform_deviation_loss(torch.tensor([1.0, 0, 0, 0]))) == pytest.approx(3.0)
    x = torch.softmax(torch.randn(8), 0)
    cv2 = x.var(unbiased=False) / x.mean() ** 2  # squared coefficient of variation
    torch.testing.assert_close(moe.uniform_deviation_loss(x), cv2)


def test_expert_load_entropy_and_categories():
    index = torch.tensor([[0, 1], [0, 2], [1, 0]])
    torch.testing.assert_close(moe.expert_load(index, 4), torch.tensor([3, 2, 1, 0]) / 6.0)
    torch.testing.assert_close(
        moe.expert_load(index, 4, token_mask=torch.tensor([1, 1, 0])), torch.tensor([2, 1, 1, 0]) / 4.0
    )
    h = moe.router_entropy(torch.tensor([[0.25] * 4, [1.0, 0, 0, 0]]))
    torch.testing.assert_close(h, torch.tensor([math.log(4), 0.0]))
    cats = torch.tensor([0, 1, 1])  # token 0 is category 0, tokens 1 and 2 category 1
    counts = moe.category_counts(index, cats, n_experts=4, n_categories=2)
    assert counts.tolist() == [[1, 2], [1, 1], [0, 1], [0, 0]]
    shares = moe.category_shares(counts)
    torch.testing.assert_close(shares[0], torch.tensor([1 / 3, 2 / 3]))
    assert shares[3].tolist() == [0, 0]
    # Lift: expert 0 sees category 0 at 1/3 vs 2/6 overall -> 1.0; expert 2 sees only category 1 (1 vs 4/6).
    lift = moe.category_lift(counts)
    assert float(lift[0, 0]) == pytest.approx(1.0) and float(lift[2, 1]) == pytest.approx(1.5)
    assert moe.top_categories(counts, ["a", "b"])[2] == ("b", 1.0, pytest.approx(1.5))
    assert moe.top_categories(counts, ["a", "b"])[3] == ("", 0.0, 0.0)
    # A rare category with a high lift is not a speciality: expert 0 sees 95 b and 5 a, where a is rare overall.
    rare = torch.tensor([[5.0, 95.0], [0.0, 900.0]])
    assert moe.top_categories(rare, ["a", "b"])[0][0] == "b"
    assert moe.top_categories(rare, ["a", "b"], min_share=0.01)[0][0] == "a"


def test_balance_bounds_hand_worked():
    """Under top-k routing an expert takes at most T of the T * k assignments: f_i <= 1/k. The Switch loss is then
    at most N/k and the deviation at most N/k - 1 (issue #19: the page said N and N - 1 for top-2)."""
    b = moe.balance_bounds(8, 2)
    assert (b.max_load, b.switch_max, b.deviation_max) == (0.5, 4.0, 3.0)
    assert b.entropy_max == pytest.approx(math.log(8))
    # top-1 is the only case where one expert can take everything: N and N - 1.
    assert (moe.balance_bounds(8, 1).switch_max, moe.balance_bounds(8, 1).deviation_max) == (8.0, 7.0)
    # k = N: every token uses every expert, the load is uniform whatever the router does.
    assert (moe.balance_bounds(4, 4).switch_max, moe.balance_bounds(4, 4).deviation_max) == (1.0, 0.0)
    # Hand-worked deviation at the extreme vertex, N = 6, k = 4: shares (1/4 x4, 0 x2)
    # -> 6 * (4 * (1/4 - 1/6)^2 + 2 * (1/6)^2) = 6 * (4/144 + 2/36) = 0.5 = 6/4 - 1.
    assert moe.balance_bounds(6, 4).deviation_max == pytest.approx(0.5)
    assert float(moe.uniform_deviation_loss(torch.tensor([0.25, 0.25, 0.25, 0.25, 0, 0]))) == pytest.approx(0.5)
    for bad in [(8, 0), (8, 9), (0, 1)]:
        with pytest.raises(ValueError):
            moe.balance_bounds(*bad)


@pytest.mark.parametrize("n_experts,top_k", [(3, 1), (3, 2), (4, 2), (4, 3)])
def test_no_top_k_routing_exceeds_the_load_bounds_brute_force(n_experts, top_k):
    """Every way 3 tokens can pick k distinct experts each: the deviation never exceeds N/k - 1 and no expert's
    share exceeds 1/k; the maximum is reached (all tokens pick the same k experts)."""
    subsets = list(itertools.combinations(range(n_experts), top_k))
    b = moe.balance_bounds(n_experts, top_k)
    worst, worst_load = 0.0, 0.0
    for choice in itertools.product(subsets, repeat=3):
        load = moe.expert_load(torch.tensor(choice), n_experts)
        worst = max(worst, float(moe.uniform_deviation_loss(load)))
        worst_load = max(worst_load, float(load.max()))
    assert worst == pytest.approx(b.deviation_max, abs=1e-6)
    assert worst_load == pytest.approx(b.max_load)


@pytest.mark.parametrize("n_experts,top_k", [(8, 2), (8, 1), (6, 3), (16, 4)])
def test_switch_loss_and_deviation_stay_within_bounds_and_reach_them(n_experts, top_k):
    b = moe.balance_bounds(n_experts, top_k)
    g = torch.Generator().manual_seed(n_experts * 10 + top_k)
    for trial in range(200):
        # From almost uniform to almost one-hot routers, some biased towards a few experts.
        temperature = 10.0 ** (trial % 7 - 3)
        bias = torch.randn(n_experts, generator=g) * (trial % 3) * 5
        logits = (
            torch.randn(int(torch.randint(1, 40, (1,), generator=g)), n_experts, generator=g) + bias
        ) / temperature
        r = moe.route_tokens(logits, top_k)
        assert float(moe.switch_balance_loss(r.probs, r.top_k_index)) <= b.switch_max + 1e-5
        load = moe.expert_load(r.top_k_index, n_experts)
        assert float(load.max()) <= b.max_load + 1e-6
        assert float(moe.uniform_deviation_loss(load)) <= b.deviation_max + 1e-5
    # Reached: every token certain of expert 0 (probability 1), its other k - 1 choices on experts 1..k-1.
    probs = torch.zeros(10, n_experts)
    probs[:, 0] = 1.0
    index = torch.arange(top_k).expand(10, top_k)
    assert float(moe.switch_balance_loss(probs, index)) == pytest.approx(b.switch_max)
    assert float(moe.uniform_deviation_loss(moe.expert_load(index, n_experts))) == pytest.approx(b.deviation_max)
    # And through route_tokens, with a router that is (numerically) certain: the loss approaches N/k.
    logits = torch.zeros(10, n_experts)
    logits[:, 0] = 100.0
    logits[:, 1:top_k] = torch.linspace(50, 40, top_k - 1) if top_k > 1 else logits[:, 1:top_k]
    r = moe.route_tokens(logits, top_k)
    assert float(moe.switch_balance_loss(r.probs, r.top_k_index)) == pytest.approx(b.switch_max, rel=1e-5)


# --- data and tokenizer ----------------------------------------------------------------------------------------


def test_generator_is_deterministic_and_labelled():
    a, b = moe_data.generate_sentences(200, seed=5), moe_data.generate_sentences(200, seed=5)
    assert [s.words for s in a] == [s.words for s in b]
    assert [s.words for s in a] != [s.words for s in moe_data.generate_sentences(200, seed=6)]
    for s in a:
        assert len(s.words) == len(s.categories)
        assert all(c in moe_data.CATEGORIES for c in s.categories)
        assert s.words[-1] in (".", "!", "?")
    seen = {c for s in a for c in s.categories}
    assert seen == set(moe_data.CATEGORIES)
    # Agreement the model can learn: "does" only before a singular subject ("does the cats ..." never).
    for s in moe_data.generate_sentences(500, seed=7):
        if s.words[0] == "does":
            assert s.words[1] not in ("i", "you", "we", "they", "these", "some", "many")


def test_tokenizer_matches_generator_ids():
    tok = moe_model.build_tokenizer()
    ids = moe_training.word_ids()
    for s in moe_data.generate_sentences(50, seed=3):
        enc = tok(s.text)["input_ids"]
        assert enc == [moe_model.BOS_ID] + [ids[w] for w in s.words]
    enc = tok("The zebra sees a cat!?")["input_ids"]
    assert tok.convert_ids_to_tokens(enc) == ["[BOS]", "the", "[UNK]", "sees", "a", "cat", "!", "?"]
    cats = moe_model.token_categories(torch.tensor(enc))
    names = moe_model.category_names()
    assert [names[c] for c in cats.tolist()] == [
        "special",
        "determiner",
        "unknown",
        "verb",
        "determiner",
        "noun",
        "punctuation",
        "punctuation",
    ]


def test_training_is_deterministic():
    a = moe_training.train(steps=2, seed=3, aux_coef=0.01, batch_size=2, seq_len=16, log_every=1)
    b = moe_training.train(steps=2, seed=3, aux_coef=0.01, batch_size=2, seq_len=16, log_every=1)
    assert a.log[-1]["lm_loss"] == b.log[-1]["lm_loss"]
    for p, q in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(p, q)


def test_a_few_training_steps_lower_the_loss():
    # (Its former wall-clock bound, < 30 s, is gone: no timed assertions in unit tests. On the shared 2-core
    # machine at load 12 this run took 248 s; the training speed belongs in a benchmark, not here.)
    result = moe_training.train(
        steps=40, seed=0, aux_coef=0.01, batch_size=8, seq_len=64, lr=3e-3, warmup=5, log_every=39
    )
    first, last = result.log[0]["lm_loss"], result.log[-1]["lm_loss"]
    assert first == pytest.approx(math.log(len(moe_model.vocabulary())), abs=0.3)  # random init ~ uniform
    assert last < first - 0.8


# --- the shipped checkpoints ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def held_out_metrics(moe_variants):
    batch = moe_training.held_out_batch()
    return {v: moe_model.evaluate(m.model, batch) for v, m in moe_variants.items()}


def test_shipped_weights_reproduce_reported_held_out_loss(moe_variants, held_out_metrics):
    for variant in moe_variants:
        report = moe_model.load_report(variant)
        assert held_out_metrics[variant]["held_out_loss"] == pytest.approx(report["held_out_loss"], abs=2e-3)
        # It learned context: clearly below the unigram entropy of the held-out tokens (what a model that ignores
        # context can reach at best), itself below log V (uniform guessing).
        targets = moe_training.held_out_batch()[:, 1:].flatten()
        p = torch.bincount(targets).float()
        p = p[p > 0] / p.sum()
        unigram_entropy = float(-(p * p.log()).sum())
        assert unigram_entropy < math.log(len(moe_model.vocabulary()))
        assert report["held_out_loss"] < unigram_entropy - 1.0
        assert (moe_model.variant_dir(variant) / "model.safetensors").stat().st_size <= 5 * 2**20


def test_balanced_checkpoint_uses_every_expert(held_out_metrics):
    for layer in held_out_metrics["balanced"]["layers"]:
        assert min(layer["expert_load"]) >= 0.05, layer["expert_load"]


def test_collapsed_checkpoint_is_more_imbalanced(held_out_metrics):
    def worst(variant):
        return max(
            float(moe.uniform_deviation_loss(torch.tensor(layer["expert_load"])))
            for layer in held_out_metrics[variant]["layers"]
        )

    def min_share(variant):
        return min(min(layer["expert_load"]) for layer in held_out_metrics[variant]["layers"])

    assert worst("collapsed") > 3 * worst("balanced")
    assert min_share("collapsed") < 0.05 <= min_share("balanced")


def test_core_layer_reproduces_the_trained_block(moe_variants):
    """moe_forward from the trained layer's weights equals the Mixtral block's output inside the real model."""
    m = moe_variants["balanced"]
    captured = {}
    block = m.moe_block(2)
    handle = block.register_forward_hook(lambda mod, inp, out: captured.update(x=inp[0].detach(), y=out.detach()))
    try:
        trace = m.run(m.tokenize(["The little cat sees a big dog. She runs to the park!"]))
    finally:
        handle.remove()
    got, routing = moe.moe_forward(captured["x"], top_k=m.top_k, **m.expert_weights(2))
    assert_close_in_scale(got, captured["y"], what="trained block output")
    # The router logits the trace carries are the ones this layer used.
    assert_close_in_scale(trace.router_logits[2], routing.logits, what="router logits")
    assert len(trace.router_logits) == m.n_layers and trace.router_logits[0].shape == (
        trace.batch.input_ids.numel(),
        m.n_experts,
    )


def test_moe_model_plugs_into_the_model_contract(moe_variants):
    from core.sdpa import sdpa

    m = moe_variants["collapsed"]
    assert (m.position_kind, m.is_causal, m.n_heads, m.n_kv_heads) == ("rope", True, 4, 2)
    source, fields = m.weights  # said on screen from [models] weights_<source>
    assert source == "moe_unbalanced" and fields == {"seed": m.report["seed"], "steps": m.report["steps"]}
    assert "WITHOUT" in i18n.text("en", "models", f"weights_{source}", **fields)
    batch = m.tokenize(["Tom likes the red ball.", "Does she sing?"])
    trace = m.run(batch)
    w = trace.attention(1, 3, index=0)
    n = int(batch.lengths[0])
    assert torch.all(w.triu(1) == 0)  # causal: no query sees a later key
    torch.testing.assert_close(w[:n, :n].sum(-1), torch.ones(n))
    # The recorded q/k reproduce SDPA with the causal mask (independent reference).
    q, k = trace.queries[1][:1], trace.keys[1][:1]
    v = torch.randn_like(k)
    out = sdpa(q, k, v, trace.mask(0)[None, None], trace.scale)
    assert_close_in_scale(trace.attention(1, 3, 0) @ v[0, trace.kv_head(3)], out[0, 3], what="head output")
    assert trace.router_logits[0].shape == (batch.input_ids.numel(), m.n_experts)


# --- real MoE models ------------------------------------------------------------------------------------------


def test_real_moe_table_fractions():
    table = moe_catalog.moe_table()
    assert table["model"] == ["Mixtral 8x22B", "DeepSeek-V3", "Llama 4 Scout", "Qwen3-235B-A22B"]
    for m in moe_catalog.REAL_MOE_MODELS:
        assert m.active_fraction == pytest.approx(m.active_params_b / m.total_params_b)
        assert 0 < m.routed_per_token <= m.routed_experts and m.source
        # Attention, embeddings and shared experts always run, so a token uses a larger share of all
        # parameters than of the routed experts.
        assert m.active_fraction > m.routed_fraction
    mixtral = moe_catalog.REAL_MOE_MODELS[0]
    assert mixtral.active_fraction == pytest.approx(39 / 141) and mixtral.routed_fraction == 0.25
    with pytest.raises(ValueError):
        moe_catalog.active_fraction(50, 10)


def test_parameter_counts_of_our_model():
    model = moe_model.new_model(0)
    total, active = moe_model.parameter_counts(model)
    cfg = model.config
    d, inner, e, k, L, V = (
        cfg.hidden_size,
        cfg.intermediate_size,
        cfg.num_local_experts,
        cfg.num_experts_per_tok,
        cfg.num_hidden_layers,
        cfg.vocab_size,
    )
    attention = d * d * 2 + d * (d // 2) * 2  # q, o: d x d; k, v: d x (2 heads x 32)
    per_layer = attention + e * d + e * 3 * d * inner + 2 * d  # + router, experts, two RMSNorms
    assert total == V * d + L * per_layer + d  # + tied embeddings, final norm
    assert active == total - L * (e - k) * 3 * d * inner
