"""/why-head's RoPE decomposition (core/why_head.py), checked against transformers itself on a tiny random Llama
and against a hand-worked two-pair example.

References: the logits transformers' eager attention hands to its softmax (captured there, causal mask added: the
visible cells are compared), the raw q and k its projections make before apply_rotary_pos_emb (forward hooks on
q_proj and k_proj), and that function of its modeling file itself for every turn the counterfactuals need."""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import pytest
import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama import modeling_llama

from core import why_head
from core.models.hf import HFAttentionModel
from tests.tiny_models import FAMILIES, WORDS
from tests.tiny_models import tokenizer as word_tokenizer

TEXT = "the cat sat on the mat because it was tired and then the dog ran far away from home"


def tiny_llama(**changes) -> HFAttentionModel:
    """RoPE on heads of 16 (8 pairs), 3 query heads per key/value head as in SmolLM2."""
    torch.manual_seed(3)
    config = LlamaConfig(
        **{
            "vocab_size": len(WORDS) + 4,
            "hidden_size": 96,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 6,
            "num_key_value_heads": 2,
            "max_position_embeddings": 64,
            **changes,
        }
    )
    return HFAttentionModel(LlamaForCausalLM(config), word_tokenizer(False), "tiny Llama", "rope", True)


@pytest.fixture(scope="module")
def llama():
    return tiny_llama()


def eager_logits_and_raw_qk(model: HFAttentionModel, layer: int, monkeypatch):
    """transformers' own eager pass over TEXT: (the logits its softmax got at `layer` (H, n, n), raw q (H, n, d)
    and raw k (H_kv, n, d) from the layer's projections, before the rotation)."""
    reference = copy.deepcopy(model.model).eval()  # its own config: the model under test keeps its attention
    reference.set_attn_implementation("eager")
    logits, raw = [], {}
    softmax = torch.nn.functional.softmax

    def keep(x, *args, **kwargs):
        logits.append(x.detach().clone())
        return softmax(x, *args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "softmax", keep)
    attention = reference.model.layers[layer].self_attn
    d = attention.head_dim
    hooks = [
        getattr(attention, name).register_forward_hook(lambda _, __, out, name=name: raw.__setitem__(name, out))
        for name in ("q_proj", "k_proj")
    ]
    ids = model.tokenize([TEXT]).input_ids
    with torch.no_grad():
        reference(input_ids=ids, use_cache=False)
    for hook in hooks:
        hook.remove()
    n = ids.shape[1]
    q = raw["q_proj"][0].reshape(n, -1, d).transpose(0, 1)
    k = raw["k_proj"][0].reshape(n, -1, d).transpose(0, 1)
    return logits[layer][0], q, k, reference


def test_bands_add_up_to_eager_attentions_own_logits(llama, monkeypatch):
    layer = 1
    logits, _, _, _ = eager_logits_and_raw_qk(llama, layer, monkeypatch)
    parts = why_head.rope_parts_of(llama, TEXT, layer, "equal", 4, 64)
    visible = parts.visible
    assert parts.bands.shape[:2] == (6, 4) and parts.edges == [(0, 2), (2, 4), (4, 6), (6, 8)]
    total = parts.bands.sum(1)  # (H, n, n)
    assert float((total - logits.double())[:, visible].abs().max()) < 1e-5
    assert float((parts.scores - logits.double())[:, visible].abs().max()) < 1e-5
    assert float(parts.bands.abs().amax(dim=(0, 2, 3)).min()) > 1e-3  # every band carries something


def test_counterfactuals_follow_transformers_own_rotation(llama, monkeypatch):
    """Position removed: the raw q . k (no turn between them); content removed: the rotated query against the mean
    raw key turned to each key's position by the model's own apply_rotary_pos_emb."""
    layer = 1
    _, q, k, reference = eager_logits_and_raw_qk(llama, layer, monkeypatch)
    parts = why_head.rope_parts_of(llama, TEXT, layer, "equal", 2, 64)
    n, scale = q.shape[1], reference.model.layers[layer].self_attn.scaling
    cos, sin = reference.model.rotary_emb(q[None], torch.arange(n)[None])
    group = q.shape[0] // k.shape[0]
    for h in range(q.shape[0]):
        raw_q, raw_k = q[h], k[h // group]
        torch.testing.assert_close(parts.no_position[h], (raw_q @ raw_k.T * scale).double(), atol=1e-5, rtol=0)
        average = raw_k.mean(0, keepdim=True).expand(n, -1)
        turned_q, turned_average = modeling_llama.apply_rotary_pos_emb(raw_q[None], average[None], cos, sin)
        expected = (turned_q[0, 0] @ turned_average[0, 0].T * scale).double()
        torch.testing.assert_close(parts.no_content[h], expected, atol=1e-5, rtol=0)


def test_a_scaled_rope_is_undone_with_its_attention_factor(monkeypatch):
    """YaRN folds an attention factor into cos and sin: position removed is still q . k at one common position
    (the factor squared included), as the model's own rotation at position 0 gives it."""
    model = tiny_llama(rope_parameters={"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0,
                                        "original_max_position_embeddings": 16})  # fmt: skip
    _, q, k, reference = eager_logits_and_raw_qk(model, 0, monkeypatch)
    parts = why_head.rope_parts_of(model, TEXT, 0, "equal", 2, 64)
    n, scale = q.shape[1], reference.model.layers[0].self_attn.scaling
    cos, sin = reference.model.rotary_emb(q[None], torch.zeros(1, n, dtype=torch.long))
    assert float(cos[0, 0, 0]) > 1.01  # the factor is there to undo
    at_zero_q, at_zero_k = modeling_llama.apply_rotary_pos_emb(q[None], k[None], cos, sin)
    expected = at_zero_q[0, 0] @ at_zero_k[0, 0].T * scale
    torch.testing.assert_close(parts.no_position[0], expected.double(), atol=1e-5, rtol=0)


def test_two_pairs_by_hand():
    """Pair 0 turns a quarter turn per position, pair 1 not at all (layout "half": pair 0 is dimensions 0 and 2).
    Raw q = (1, 1, 0, 0) at both positions; raw keys (1, 1, 0, 0) and (3, 1, 0, 0). Rotated: q_1 = (0, 1, 1, 0),
    k_1 = (0, 1, 3, 0). Scores: s_00 = 1 + 1, s_10 = 0 + 1, s_11 = 3 + 1 (band 0 + band 1). No position: raw
    q . raw k: 2 and 4 in every row. No content: the mean raw key (2, 1, 0, 0) turned to each position:
    s_00 = 2 + 1, s_10 = 0 + 1, s_11 = 2 + 1."""
    q = torch.tensor([[[1.0, 1, 0, 0], [0, 1, 1, 0]]])
    k = torch.tensor([[[1.0, 1, 0, 0], [0, 1, 3, 0]]])
    cos = torch.tensor([[1.0, 1, 1, 1], [0, 1, 0, 1]])
    sin = torch.tensor([[0.0, 0, 0, 0], [1, 0, 1, 0]])
    parts = why_head.rope_layer_parts(q, k, 1.0, cos, sin, "half", [(0, 1), (1, 2)], ["a", "b"])
    visible = parts.visible
    band0, band1 = parts.bands[0]
    assert band0[visible].tolist() == [1, 0, 3] and band1[visible].tolist() == [1, 1, 1]
    assert parts.scores[0][visible].tolist() == [2, 1, 4]
    assert parts.no_position[0][visible].tolist() == [2, 2, 4]
    assert parts.no_content[0][visible].tolist() == [3, 1, 3]
    assert parts.band_wavelengths[0] == (4.0, 4.0) and math.isinf(parts.band_wavelengths[1][0])
    # shares of |score| per visible cell: band 0 has 1/2, 0/1, 3/4; band 1 the rest
    assert why_head.band_shares(parts)[0].tolist() == pytest.approx([(0.5 + 0.75) / 3, (0.5 + 1 + 0.25) / 3])


@pytest.mark.parametrize("pairs, first", [("half", [0, 1]), ("interleaved", [0, 2])])
def test_a_quarter_turn_moves_each_pair_in_its_own_layout(pairs, first):
    """(1, 0) of every pair turned a quarter turn is (0, 1): the pair's second member, where its layout keeps it."""
    x = torch.zeros(1, 4, dtype=torch.float64)
    x[0, first] = 1.0
    turned = why_head.turn(x, torch.zeros(1, 4, dtype=torch.float64), torch.ones(1, 4, dtype=torch.float64), pairs)
    expected = torch.ones(1, 4, dtype=torch.float64)
    expected[0, first] = 0.0
    assert turned.tolist() == expected.tolist()


def test_wavelength_bands_cut_at_decades():
    theta = 2 * math.pi / torch.tensor([5.0, 9.0, 50.0, 400.0, 900.0, 2e4], dtype=torch.float64)
    assert why_head.wavelength_edges(theta) == [(0, 2), (2, 3), (3, 5), (5, 6)]
    assert why_head.split_edges(theta, "equal", 3) == [(0, 2), (2, 4), (4, 6)]


def test_a_model_that_turns_part_of_each_head_is_refused_in_words():
    """GPT-NeoX turns half of each head here: the pairs would not cover q and k, so no split is offered."""
    _, model_class, kwargs, _ = FAMILIES["gpt_neox"]
    torch.manual_seed(0)
    module = getattr(transformers, model_class)(transformers.GPTNeoXConfig(**kwargs))
    model = HFAttentionModel(module, word_tokenizer(False), "tiny NeoX", "rope", True)
    with pytest.raises(ValueError, match="whole heads"):
        model.rotary_cos_sin(4)
    assert tiny_llama().rotary_cos_sin(4)[0].shape == (4, 16)


def test_pattern_kept_by_hand():
    """Row 1 sees two keys: scores (0, log 3) give weights (1/4, 3/4), even scores (1/2, 1/2): total variation 1/4,
    so 3/4 of the pattern is kept. Row 0 sees one key only and does not count."""
    visible = torch.ones(2, 2, dtype=torch.bool).tril()
    scores = torch.tensor([[5.0, 0], [0, math.log(3)]], dtype=torch.float64)
    kept = why_head.pattern_kept(scores, why_head.uniform_scores(visible), visible)
    assert float(kept) == pytest.approx(0.75)
    assert float(why_head.pattern_kept(scores, scores + 7.0, visible)) == pytest.approx(1.0)  # a shift per row


def test_a_decoder_has_no_embedding_parts_to_split(llama):
    with pytest.raises(ValueError, match="BERT-style"):
        llama.embedding_parts(torch.tensor([4, 5]))


def test_the_view_of_the_hand_worked_head_and_its_verdict():
    """Row 1's own scores (1, 4); content removed (1, 3); position removed (2, 4): both counterfactuals give the same
    weights, so neither keeps clearly more: 'mixed'. Even attention keeps 1 - |1/(1 + e^3) - 1/2|."""
    q = torch.tensor([[[1.0, 1, 0, 0], [0, 1, 1, 0]]])
    k = torch.tensor([[[1.0, 1, 0, 0], [0, 1, 3, 0]]])
    cos = torch.tensor([[1.0, 1, 1, 1], [0, 1, 0, 1]])
    sin = torch.tensor([[0.0, 0, 0, 0], [1, 0, 1, 0]])
    parts = why_head.rope_layer_parts(q, k, 1.0, cos, sin, "half", [(0, 1), (1, 2)], ["a", "b"])
    view = why_head.rope_view(parts, 0, 1, "content_only")
    assert view.verdict == "mixed" and view.carrier == 1 and view.band_scores[1].tolist() == [1, 1]
    kept = 1 - abs(1 / (1 + math.e**3) - 1 / (1 + math.e**2))
    assert view.kept_here["position_only"] == pytest.approx(kept) == view.kept_here["content_only"]
    assert view.kept_here["uniform"] == pytest.approx(1 - abs(1 / (1 + math.e**3) - 0.5))
    assert view.weights[1].tolist() == pytest.approx([1 / (1 + math.e**2), math.e**2 / (1 + math.e**2)])
    assert [why_head.verdict(0.9, 0.7), why_head.verdict(0.5, 0.7), why_head.verdict(0.5, 0.55)] == [
        "position", "content", "mixed"]  # fmt: skip


def test_the_pages_sum_check_reports_bands_that_do_not_add_up_to_the_scores():
    """The page quotes max |sum of the bands - the head's scores| as its check: it must measure the two apart. The
    hand-worked head's bands add up exactly (0); with the scores moved by 0.25 on every cell the check must say
    0.25 (it reads the visible cells (0, 0), (1, 0), (1, 1)), and 0 again with the move on the hidden (0, 1) only."""
    q = torch.tensor([[[1.0, 1, 0, 0], [0, 1, 1, 0]]])
    k = torch.tensor([[[1.0, 1, 0, 0], [0, 1, 3, 0]]])
    cos = torch.tensor([[1.0, 1, 1, 1], [0, 1, 0, 1]])
    sin = torch.tensor([[0.0, 0, 0, 0], [1, 0, 1, 0]])
    parts = why_head.rope_layer_parts(q, k, 1.0, cos, sin, "half", [(0, 1), (1, 2)], ["a", "b"])
    assert why_head.rope_view(parts, 0, 1, "own").max_diff == 0.0
    moved = dataclasses.replace(parts, scores=parts.scores + 0.25)
    assert why_head.rope_view(moved, 0, 1, "own").max_diff == 0.25
    hidden = dataclasses.replace(parts, scores=parts.scores + 0.25 * ~parts.visible)
    assert why_head.rope_view(hidden, 0, 1, "own").max_diff == 0.0


def test_shares_over_texts_read_every_layer_of_one_pass_as_the_page_reads_one(llama):
    """One forward pass per text (every layer's q and k from run) gives each layer's shares and kept measures as the
    page's pass that stops at that layer (layer_qk) does."""
    texts = [TEXT, "a dog ran far away"]
    found = why_head.shares_over_texts(llama, texts, "equal", 2, 64)
    assert found.shares.shape == (2, 2, 6, 2) and found.tokens == [19, 5]
    for t, text in enumerate(texts):
        for layer in (0, 1):
            view = why_head.rope_view(why_head.rope_parts_of(llama, text, layer, "equal", 2, 64), 0, 0, "own")
            np.testing.assert_allclose(found.shares[t, layer], view.shares, atol=1e-9)
            for key in why_head.KEPT:
                np.testing.assert_allclose(found.kept[key][t, layer], view.kept[key], atol=1e-9)


def test_the_committed_detector_heads_are_read_as_the_file_says():
    """results/why_head_bands.json (scripts/why_head_bands.py): each row is a head of the file, each group's verdict
    follows its kept means, and another model has no such measurement."""
    from core.results import load_result

    data = load_result(why_head.RESULT_NAME)
    found = why_head.committed_detector_heads(data["model"])
    assert why_head.committed_detector_heads("minilm") is None
    first = data["detector_heads"]["previous_token"][0]
    assert found.rows["head"][0] == f"{first['layer']}.{first['head']}"
    assert (
        found.rows["fastest"][0] == first["band_share_mean"][0] and found.rows["rank"][0] == first["fastest_band_rank"]
    )
    assert len(found.rows["head"]) == sum(len(data["detector_heads"][d]) for d in why_head.DETECTOR_HEADS)
    for group in found.groups:
        kept = data["detector_groups"][group.detector]["kept_mean"]
        assert group.verdict == why_head.verdict(kept["position_only"], kept["content_only"])
    assert found.all_fastest_share == data["all_heads"]["band_share_mean"][0]


def test_the_papers_finding_by_hand():
    def group(detector, verdict, fastest, slowest):
        return why_head.DetectorGroup(detector, [], fastest, slowest, {}, verdict)

    agreeing = [group("previous_token", "position", 0.2, 0.5), group("induction", "content", 0.01, 0.8)]
    assert why_head.paper_finding(agreeing, 0.05, 0.6) == "agrees"
    assert why_head.paper_finding(agreeing, 0.25, 0.6) == "differs"  # previous-token heads below the average
    assert why_head.paper_finding(agreeing[:1] + [group("induction", "mixed", 0.01, 0.8)], 0.05, 0.6) == "differs"


@pytest.mark.parametrize("family, offered", [("llama", True), ("qwen2", True), ("mistral", False), ("gemma2", False),
                                             ("gpt_oss", False), ("gpt_neox", False), ("bert", False)])  # fmt: skip
def test_the_rope_part_offers_a_learners_model_only_where_its_patterns_are_its_own(family, offered):
    """Mistral's sliding window, Gemma 2's soft-capping and gpt-oss's sinks change the weights the causal softmax of
    the scores would give, GPT-NeoX turns half of each head, BERT has no RoPE: none is offered."""
    from core.models.capabilities import capabilities_of
    from core.models.needs import PAGE_NEEDS

    config_name, _, kwargs, _ = FAMILIES[family]
    caps = capabilities_of(getattr(transformers, config_name)(**kwargs))
    assert PAGE_NEEDS["why-head/rope"](caps) is offered
