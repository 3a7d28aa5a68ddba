"""/why-head's four-term split of an absolute-position encoder's first layer (core/why_head.py), on a tiny random
BERT against transformers itself, and by hand.

References: the sum transformers' BertEmbeddings hands its LayerNorm (a forward pre-hook there), pushed through the
first layer's own query and key nn.Linear modules; and the logits its eager attention hands its softmax in the
first layer (the model's own scores)."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import BertConfig, BertModel

from core import why_head
from core.models.hf import HFAttentionModel
from tests.tiny_models import WORDS
from tests.tiny_models import tokenizer as word_tokenizer

TEXT = "the cat sat on a mat because it was tired"


@pytest.fixture(scope="module")
def bert() -> HFAttentionModel:
    torch.manual_seed(5)
    config = BertConfig(vocab_size=len(WORDS) + 4, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=48, max_position_embeddings=32, type_vocab_size=2,
                        initializer_range=0.3)  # fmt: skip  # scores of order 1, not 1e-5
    module = BertModel(config)
    with torch.no_grad():  # a LayerNorm that is not the identity at start, and a token type that is not zero
        module.embeddings.LayerNorm.weight.normal_(1, 0.3)
        module.embeddings.LayerNorm.bias.normal_(0, 0.3)
    return HFAttentionModel(module, word_tokenizer(True), "tiny BERT", "learned", False)


@pytest.fixture(scope="module")
def reference(bert):
    """transformers' own pass over TEXT: (the pre-norm sum (n, D), the first layer's query and key modules, the
    logits its eager softmax got in the first layer (H, n, n))."""
    module = copy.deepcopy(bert.model).eval()
    module.set_attn_implementation("eager")
    kept, logits = {}, []
    module.embeddings.LayerNorm.register_forward_pre_hook(lambda _, args: kept.update(sum=args[0][0]))
    softmax = torch.nn.functional.softmax

    def keep(x, *args, **kwargs):
        logits.append(x.detach().clone())
        return softmax(x, *args, **kwargs)

    torch.nn.functional.softmax = keep
    try:
        with torch.no_grad():
            module(input_ids=bert.tokenize([TEXT]).input_ids)
    finally:
        torch.nn.functional.softmax = softmax
    return kept["sum"], module.encoder.layer[0].attention.self, logits[0][0]


def per_head(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    return x.reshape(x.shape[0], n_heads, -1).transpose(0, 1)


def test_before_norm_the_four_terms_add_up_to_the_layers_scores_on_the_sum(bert, reference):
    total, attention, _ = reference
    parts = why_head.absolute_parts_of(bert, TEXT, "before_norm", 64)
    assert parts.terms.shape == (4, 4, 12, 12)  # [CLS] + 10 words + [SEP]
    with torch.no_grad():
        q, k = per_head(attention.query(total), 4), per_head(attention.key(total), 4)
    expected = (q @ k.transpose(-1, -2) * attention.scaling).double()
    assert float((parts.terms.sum(1) - expected).abs().max()) < 1e-5
    assert float(parts.terms.abs().amax(dim=(0, 2, 3)).min()) > 1e-2  # each term carries something


def test_after_norm_the_four_terms_add_up_to_the_models_own_scores(bert, reference):
    _, _, logits = reference
    parts = why_head.absolute_parts_of(bert, TEXT, "after_norm", 64)
    assert float((parts.terms.sum(1) - logits.double()).abs().max()) < 1e-5
    assert float((parts.model_scores - logits.double()).abs().max()) < 1e-5
    before = why_head.absolute_parts_of(bert, TEXT, "before_norm", 64)
    assert float((before.model_scores - logits.double()).abs().max()) < 1e-5
    assert float((before.scores - logits.double()).abs().max()) > 1e-2  # the norm changes the scores


def test_four_terms_by_hand():
    """One head, D = 2, W_q = W_k = I, b_q = (1, 0): tokens t = I, positions p = ((0, 2), (1, 0)). The query's
    token part is t + b_q = ((2, 0), (1, 1)), its position part p; keys: t and p.
    token.token = ((2, 0), (1, 1)) t^T = ((2, 0), (1, 1)); token.position = ((2, 0), (1, 1)) p^T = ((0, 2), (2, 1));
    position.token = p t^T = ((0, 2), (1, 0)); position.position = p p^T = ((4, 0), (0, 1))."""
    t, p, eye = torch.eye(2), torch.tensor([[0.0, 2], [1, 0]]), torch.eye(2)
    terms = why_head.four_terms(t, p, eye, torch.tensor([1.0, 0]), eye, torch.zeros(2), 1, 1.0)[0]
    assert terms.tolist() == [[[2, 0], [1, 1]], [[0, 2], [2, 1]], [[0, 2], [1, 0]], [[4, 0], [0, 1]]]
    parts = why_head.AbsoluteLayerParts(
        ["0 a", "1 b"], "before_norm", terms[None], terms.sum(0)[None], terms.sum(0)[None]
    )
    # shares of |term| per cell, averaged: cell (0, 0) 2/6, 0, 0, 4/6; (0, 1) 0, 2/4, 2/4, 0; ...
    shares = why_head.term_shares(parts)[0]
    assert shares.tolist() == pytest.approx([(2 / 6 + 0 + 1 / 4 + 1 / 3) / 4, (0 + 2 / 4 + 2 / 4 + 1 / 3) / 4,
                                             (0 + 2 / 4 + 1 / 4 + 0) / 4, (4 / 6 + 0 + 0 + 1 / 3) / 4])  # fmt: skip


def test_the_pages_sum_check_reports_terms_that_do_not_add_up_to_the_scores():
    """The page quotes max |sum of the four terms - the scores they split| as its check: it must measure the two
    apart. The hand-worked terms above add up to ((6, 4), (4, 3)) exactly (0); with one score moved by 0.5 the
    check must say 0.5."""
    t, p, eye = torch.eye(2), torch.tensor([[0.0, 2], [1, 0]]), torch.eye(2)
    terms = why_head.four_terms(t, p, eye, torch.tensor([1.0, 0]), eye, torch.zeros(2), 1, 1.0)
    scores = torch.tensor([[[6.0, 4], [4, 3]]])
    parts = why_head.AbsoluteLayerParts(["0 a", "1 b"], "before_norm", terms, scores, scores)
    assert why_head.absolute_view(parts, 0, why_head.TERMS[0]).max_diff == 0.0
    moved = scores + torch.tensor([[[0.0, 0], [0.5, 0]]])
    parts = why_head.AbsoluteLayerParts(["0 a", "1 b"], "before_norm", terms, moved, moved)
    assert why_head.absolute_view(parts, 0, why_head.TERMS[0]).max_diff == 0.5
