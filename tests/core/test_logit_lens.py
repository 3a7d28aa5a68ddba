"""Logit lens: the last stage is the model's own logits; every stage is W_U · norm(h_l) of transformers' own
hidden states (stage < L); the first-stage bookkeeping follows its definition."""

import pytest
import torch

from core import logit_lens as lens
from tests.references import assert_close_in_scale


def test_last_stage_equals_the_models_logits(smollm2):
    batch = smollm2.tokenize(["The capital of France is Paris, and the capital of Japan is"])
    ids = batch.input_ids
    streams, logits = lens.residual_streams(smollm2, batch)
    assert len(streams) == smollm2.n_layers + 1
    # logits and SmolLM2's hidden states reach tens to hundreds: tolerances follow their scale
    assert_close_in_scale(lens.lens_logits(smollm2, streams[-1]), logits.float(), what="last stage")
    # the hooks see the same streams transformers returns (its last one is already normed, so stop before it)
    hs = smollm2.model(input_ids=ids, output_hidden_states=True, use_cache=False).hidden_states
    for layer, (ours, theirs) in enumerate(zip(streams[:-1], hs[:-1])):
        assert_close_in_scale(ours, theirs, what=f"stream {layer}")


def test_view_is_consistent(smollm2):
    view = lens.logit_lens(smollm2, "One, two, three, four, five, six")
    S, n, k = view.top_ids.shape
    assert S == smollm2.n_layers + 1 and k == lens.TOP_K and n == len(view.tokens)
    assert torch.equal(view.top_ids[-1, :, 0], view.final_ids)
    assert view.final_is_top[-1].all()
    for pos, stage in enumerate(view.first_stage):
        assert stage is not None  # the last stage always agrees with itself
        assert view.final_is_top[stage:, pos].all()
        assert stage == 0 or not view.final_is_top[stage - 1, pos]
    assert torch.all(view.top_probs[..., :-1] >= view.top_probs[..., 1:])
    # the probabilities are the softmax of the lens logits (checked at one stage against a full softmax)
    streams, _ = lens.residual_streams(smollm2, smollm2.tokenize(["One, two, three, four, five, six"]))
    p = torch.softmax(lens.lens_logits(smollm2, streams[10][0]), -1)
    assert torch.allclose(view.top_probs[10], p.gather(1, view.top_ids[10]), atol=1e-5)
    assert torch.allclose(view.final_prob[10], p.gather(1, view.final_ids[:, None])[:, 0], atol=1e-5)


def test_hostile_text_and_limits(smollm2):
    view = lens.logit_lens(smollm2, "<script>alert(1)</script> 😴 猫 고양이 " * 200)
    assert view.truncated and len(view.tokens) == lens.MAX_TOKENS
    with pytest.raises(ValueError):
        lens.logit_lens(smollm2, "")


def test_encoder_has_no_lens(minilm):
    with pytest.raises(ValueError):
        lens.logit_lens(minilm, "a cat")


def _view_with_first_stages(first_stage: list, stages: int = 31):
    from core.logit_lens import LensView

    n = len(first_stage)
    return LensView(
        tokens=[f"t{i}" for i in range(n)], top_ids=torch.zeros(stages, n, 1, dtype=torch.long),
        top_tokens=[[[f"s{s}p{i}"] for i in range(n)] for s in range(stages)],
        top_probs=torch.ones(stages, n, 1), final_ids=torch.zeros(n, dtype=torch.long),
        final_prob=torch.ones(stages, n), final_is_top=torch.ones(stages, n, dtype=torch.bool),
        first_stage=first_stage,
    )  # fmt: skip


def test_lens_table_names_stages_and_finds_late_predictions():
    """31 stages (SmolLM2: embeddings + 30 layers): stages 27 .. 30 come after layers 26 .. 29, the last 4."""
    table = lens.lens_table(_view_with_first_stages([0, 27, 30, None, 26]))
    assert table.first_stage == [("stage_embed", {}), ("stage_layer", {"l": 26}), ("stage_layer", {"l": 29}),
                                 ("stage_none", {}), ("stage_layer", {"l": 25})]  # fmt: skip
    assert (table.late, table.n, table.from_layer) == (2, 5, 26) and table.finding == "finding_early"
    assert table.final == [f"s30p{i}" for i in range(5)]  # the last stage's top token: the model's own
    assert lens.lens_table(_view_with_first_stages([27, 28, 5])).finding == "finding_late"  # 2 of 3
    assert lens.lens_table(_view_with_first_stages([27, 5])).finding == "finding_early"  # half is not most


def test_lens_table_of_a_model_with_few_layers_counts_its_last_half():
    """4 stages (embeddings + 3 layers): "late" is after the last layer only (layer 2), never a layer -1."""
    table = lens.lens_table(_view_with_first_stages([3, 3, 2, 0], stages=4))
    assert (table.late, table.from_layer) == (2, 2) and table.finding == "finding_early"
    table = lens.lens_table(_view_with_first_stages([3, 3, 1], stages=4))
    assert (table.late, table.from_layer) == (2, 2) and table.finding == "finding_late"
