"""Ablation: no head removed leaves the logits exactly as they were; removing a head equals recomputing the attention
output by hand with that head's output zeroed (a small random Llama); placebo draws come from the same layers and
are seeded; the verdict follows its stated rule."""

from types import SimpleNamespace

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from core import ablation as ab
from core.models.hf import HFAttentionModel
from core.results import load_result
from tests.references import assert_close_in_scale

N_HEADS, N_KV, D_HEAD, LAYERS = 4, 2, 8, 2


class _Tokenizer:
    """Just enough of a tokenizer for HFAttentionModel's constructor."""

    pad_token, eos_token, padding_side = "<pad>", "<pad>", "right"
    all_special_ids = [0]


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=40, hidden_size=N_HEADS * D_HEAD, intermediate_size=48, num_hidden_layers=LAYERS,
                      num_attention_heads=N_HEADS, num_key_value_heads=N_KV, max_position_embeddings=64)  # fmt: skip
    return HFAttentionModel(LlamaForCausalLM(cfg), _Tokenizer(), "tiny", "rope", is_causal=True)


def _logits(model, ids):
    return model.model(input_ids=ids, use_cache=False).logits


def test_no_head_removed_changes_nothing(tiny):
    ids = torch.randint(1, 40, (2, 9), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        before = _logits(tiny, ids)
        with ab.ablated(tiny, []):
            same = _logits(tiny, ids)
        after = _logits(tiny, ids)
    assert torch.equal(before, same) and torch.equal(before, after)


def _attention_output_by_hand(model, ids, removed_head):
    """Layer 0's attention output recomputed from its parameters: RMSNorm, q/k/v, RoPE, causal softmax, heads
    side by side with `removed_head`'s output set to 0, then W^O."""
    hf = model.model.model
    layer = hf.layers[0]
    attn = layer.self_attn
    x = layer.input_layernorm(hf.embed_tokens(ids))  # (B, n, D)
    B, n, _ = x.shape
    q = attn.q_proj(x).view(B, n, N_HEADS, D_HEAD).transpose(1, 2)  # (B, H, n, d)
    k = attn.k_proj(x).view(B, n, N_KV, D_HEAD).transpose(1, 2)  # (B, H_kv, n, d)
    v = attn.v_proj(x).view(B, n, N_KV, D_HEAD).transpose(1, 2)
    cos, sin = hf.rotary_emb(x, torch.arange(n)[None])
    q, k = apply_rotary_pos_emb(q, k, cos, sin)
    k, v = (t.repeat_interleave(N_HEADS // N_KV, dim=1) for t in (k, v))  # consecutive heads share a kv head
    scores = q @ k.transpose(-1, -2) / D_HEAD**0.5
    scores = scores.masked_fill(~torch.tril(torch.ones(n, n, dtype=torch.bool)), float("-inf"))
    z = torch.softmax(scores, -1) @ v  # (B, H, n, d)
    z[:, removed_head] = 0.0
    return attn.o_proj(z.transpose(1, 2).reshape(B, n, N_HEADS * D_HEAD))


@pytest.mark.parametrize("head", range(N_HEADS))
def test_zero_ablation_equals_the_recomputed_output(tiny, head):
    ids = torch.randint(1, 40, (2, 7), generator=torch.Generator().manual_seed(2))
    seen = {}
    handle = tiny.model.model.layers[0].self_attn.o_proj.register_forward_hook(
        lambda m, a, out: seen.__setitem__("out", out)
    )
    try:
        with torch.no_grad(), ab.ablated(tiny, [(0, head)]):
            _logits(tiny, ids)
    finally:
        handle.remove()
    with torch.no_grad():
        expected = _attention_output_by_hand(tiny, ids, head)
        unablated = _attention_output_by_hand(tiny, ids, [])
    assert_close_in_scale(seen["out"], expected, what="attention output")
    assert not torch.allclose(expected, unablated, atol=1e-4)  # the head did contribute


def test_mean_ablation_puts_the_mean_in(tiny):
    ids = torch.randint(1, 40, (2, 7), generator=torch.Generator().manual_seed(3))

    class _Batch:
        input_ids, attention_mask = ids, torch.ones_like(ids)

    means = ab.head_means(tiny, _Batch())
    assert means.shape == (LAYERS, N_HEADS, D_HEAD)
    seen = {}
    proj = tiny.model.model.layers[1].self_attn.o_proj
    # a forward (not pre-) hook sees the input as the ablation hook left it
    handle = proj.register_forward_hook(lambda m, a, out: seen.__setitem__("in", a[0].clone()))
    try:
        with torch.no_grad(), ab.ablated(tiny, [(1, 2)], "mean", means):
            _logits(tiny, ids)
    finally:
        handle.remove()
    z = seen["in"].view(2, 7, N_HEADS, D_HEAD)
    assert torch.allclose(z[:, :, 2], means[1, 2].expand(2, 7, D_HEAD))


def test_a_card_measures_the_model_as_often_as_the_page_says(tiny, monkeypatch):
    calls = []
    monkeypatch.setattr(ab, "measure", lambda model, evalset: calls.append(evalset) or {"value": 1.0})
    evalset = SimpleNamespace(metric="repeated_loss", batch=None)
    card = ab.claim_card("tiny", tiny, "induction", heads=[(0, 1)], draws=3, evalset=evalset)
    assert len(card.placebo_harms) == 3 and len(calls) == ab.forward_runs(3) == 5  # unchanged, ablated, 3 placebos


def test_placebo_draws_same_layers_seeded():
    heads = [(3, 0), (3, 4), (7, 1)]
    a = ab.placebo_sets(heads, 9, 20, seed=0)
    assert a == ab.placebo_sets(heads, 9, 20, seed=0)
    assert a != ab.placebo_sets(heads, 9, 20, seed=1)
    for drawn in a:
        assert sorted(layer for layer, _ in drawn) == [3, 3, 7]
        assert not set(drawn) & set(heads)
        assert len(set(drawn)) == 3
    # every head of a layer chosen: the only possible draw is the same set
    assert ab.placebo_sets([(0, h) for h in range(4)], 4, 3, seed=0) == [[(0, h) for h in range(4)]] * 3


def test_verdict_rule():
    placebo = [0.1, 0.2, 0.3, 0.2]
    assert ab.verdict("repeated_loss", 5.0, placebo) == "far_more"
    assert ab.verdict("repeated_loss", 0.31, placebo) == "more"  # above every draw but not twice the mean
    assert ab.verdict("repeated_loss", 0.2, placebo) == "no_more"
    assert ab.verdict("repeated_loss", 0.01, [-0.5, -0.4]) == "no_more"  # below the noise floor
    assert ab.verdict("repeated_loss", 1.0, []) == "no_placebo"
    assert ab.harm_of("antecedent_accuracy", 0.6, 0.5) == pytest.approx(0.1)
    assert ab.harm_of("repeated_loss", 2.0, 2.5) == pytest.approx(0.5)


def test_committed_cards_are_consistent():
    data = ab.load_results()
    if data is None:
        pytest.skip("results/ablation.json not written yet")
    for card in data["cards"]:
        harm = ab.harm_of(card["metric"], card["clean"]["value"], card["ablated"]["value"])
        assert card["harm"] == pytest.approx(harm)
        if card["verdict"] != "no_placebo":
            assert card["verdict"] == ab.verdict(card["metric"], card["harm"], card["placebo_harms"])
        assert len(card["placebo_harms"]) == card["draws"]


def test_batched_antecedent_choice_equals_core_antecedents(smollm2):
    """The batched (right-padded) choice prompts give the log-probabilities core.antecedents.next_token_choice
    gives one sentence at a time."""
    from core import antecedents

    smol = smollm2
    evalset = ab.antecedent_eval_set(smol)
    with torch.no_grad():
        pair = ab.choice_logprobs(ab._logits_at(smol, evalset.batch, evalset.rows, evalset.cols), evalset)
    _, held_out = antecedents.split_pairs(antecedents.load_pairs()["pairs"])
    p = held_out[0]
    for i, s in enumerate(p["sentences"]):
        own = antecedents.next_token_choice(smol, s["text"], p["pronoun"], p["candidates"])
        correct = p["candidates"].index(s["answer"])
        assert pair[i].tolist() == pytest.approx([own[correct], own[1 - correct]], abs=1e-3)


# --- candidates and the page's view of a card -------------------------------------------------------------------


def _selection_grid(model_key: str) -> list[list[float]]:
    data = load_result("antecedents")
    return data["models"][model_key]["per_head"]["selection"]["accuracy"]


def test_antecedent_candidates_are_the_heads_above_chance():
    """SmolLM2: every head ties at 50% on the selection half, so there is no candidate; MiniLM: the heads above
    50%, best first (read straight from results/antecedents.json)."""
    assert {v for row in _selection_grid("smollm2") for v in row} == {0.5}
    assert ab.antecedent_candidates("smollm2") == ([], [])
    grid = _selection_grid("minilm")
    heads, scores = ab.antecedent_candidates("minilm")
    expect = sorted((-v, a, b) for a, row in enumerate(grid) for b, v in enumerate(row) if v > 0.5)
    assert heads == [(a, b) for _, a, b in expect] and scores == sorted(scores, reverse=True)


class _NoModel:
    """claim_card must not run a model when there is nothing to test: only these attributes are read."""

    name, n_layers, n_heads = "SmolLM2-135M-Instruct", 30, 9


def test_antecedent_card_without_candidates_tests_no_claim():
    card = ab.claim_card("smollm2", _NoModel(), "antecedent", k=5)
    assert card.verdict == "no_candidates" and card.heads == [] and card.placebo_harms == []
    view = ab.card_view(card)
    assert view.status == "no_candidates" and view.verdict == "no_candidates" and not view.placebo_harms
    assert view.candidates == {"reason": "tied", "n": 270, "best": 0.5}


def test_committed_card_views():
    """The committed antecedent card removed heads chosen among ties (by index): its view tests no claim. The
    others show the committed numbers and verdict as they are."""
    views = ab.committed_cards()
    data = ab.load_results()
    for c in data["cards"]:
        view = views[f"{c['claim']}-{c['mode']}"]
        assert view.provenance["draws"] == c["draws"]
        if c["claim"] == "antecedent":
            assert view.status == "no_candidates" and view.harm is None and view.placebo_interval is None
        else:
            assert view.status == "tested" and view.verdict == c["verdict"] and view.harm == c["harm"]
            assert view.placebo_interval == tuple(c["placebo_interval"]) and view.heads_text.startswith("L")
            assert view.strong == (c["verdict"] == "far_more")
