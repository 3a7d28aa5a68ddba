"""core/positions/learned.py, past the table: MiniLM's learned positions stop at row 511. The lookup against the
model's own nn.Embedding (transformers' BertEmbeddings.position_embeddings) and its config."""

import numpy as np
import pytest
import torch

from core.positions.learned import HEAD_NUMBERS, lookup_table, past_table_view


def test_a_small_table_by_hand():
    table = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    inside = lookup_table(table, 2)
    assert (
        inside.exists
        and inside.head.tolist() == [8, 9, 10, 11]
        and inside.norm == pytest.approx(np.sqrt(64 + 81 + 100 + 121))
    )
    past = lookup_table(table, 3)
    assert not past.exists and past.head is None and "out of range" in past.error
    assert (past.table_size, past.width) == (3, 4)


def test_minilm_has_512_positions_and_none_after(minilm):
    hf = minilm.model.base_model
    module = hf.embeddings.position_embeddings  # the model's own lookup
    assert hf.config.max_position_embeddings == 512 == module.num_embeddings
    last = past_table_view(minilm, 511)
    assert last.exists and (last.table_size, last.width) == (512, 384)
    np.testing.assert_allclose(last.head, module(torch.tensor([511]))[0, :HEAD_NUMBERS].detach().double().numpy())
    for position in (512, 2048):
        view = past_table_view(minilm, position)
        assert not view.exists and view.head is None
        with pytest.raises(IndexError) as e:
            module(torch.tensor([position]))
        assert view.error == str(e.value)
