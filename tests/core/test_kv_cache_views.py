"""The /kv-cache page's view objects (core/kv_cache/views.py) on a hand-built Generation: no model needed. The
caption numbers, the greedy-only sentence, the kept strip of the one eviction rule, the bytes formula."""

import dataclasses

import numpy as np
import pytest

from core.kv_cache import views
from tests.fake_traces import fake_generation


def test_continuation_says_greedy_only_when_it_was():
    view = views.continuation(fake_generation())
    assert (view.prompt, view.generated, view.n_prompt, view.n_new) == ("A b c d", " e f g", 4, 3)
    assert view.greedy and not views.continuation(fake_generation(greedy=False)).greedy


def test_step_attention_marks_what_the_one_rule_keeps():
    """Query at position 5, W = 2 keys (its own included), S = 1 sink: it sees positions 0, 4 and 5."""
    view = views.step_attention(fake_generation(), 2, 0)
    assert (view.fed, view.chosen, view.position, view.n) == (" f", " g", 5, 6)
    assert view.kept["window"].tolist() == [0, 0, 0, 0, 1, 1]
    assert view.kept["sinks_window"].tolist() == [1, 0, 0, 0, 1, 1]
    np.testing.assert_allclose(view.mean, np.full(6, 1 / 6), rtol=1e-3)


def test_next_tokens_carry_every_policy_and_the_timings():
    view = views.next_tokens(fake_generation(), 99)  # clamped to the last step
    assert view.step == 2 and view.top_tokens == [" y"] and (view.ms, view.eviction_ms) == (12.4, 30.6)
    # the fake's window evicts position - 2 entries at positions 3, 4, 5 and sinks + window position - 3 (none at
    # 3): 3 + 2 rows of the one eviction pass
    assert (view.steps, view.eviction_rows) == (3, 5)
    assert view.outcome("window").evicted == 3 and view.outcome("sinks_window").kept == 4
    assert view.outcome("window").kl == 0.25


def test_memory_is_the_formula_with_its_numbers():
    """2 (K, V) x 1 layer x 1 kv head x 4 values x 4 bytes = 32 bytes per position; multi-head: 2 heads, 64."""
    view = views.memory(fake_generation())
    assert view.per_token == "32 B" and view.n == 6 and view.measured == view.formula_gqa == "192 B"
    assert view.formula_mha == "384 B" and view.curves["mha"] == [2 * g for g in view.curves["gqa"]]
    assert view.curves["window"] == [96.0] * 3  # 3 keys seen x 32 bytes


def test_memory_names_how_key_value_heads_are_shared():
    """2 query heads over 1 key/value head: shared by 2, multi-head would store 2x; with 2 key/value heads the two
    formulas are the same bytes and the page says multi-head."""
    gqa = views.memory(fake_generation())
    assert (gqa.group, gqa.sharing) == (2, "memory_gqa")
    mha = views.memory(dataclasses.replace(fake_generation(), kv_heads=2))
    assert (mha.group, mha.sharing) == (1, "memory_mha") and mha.formula_gqa == mha.formula_mha


def test_eviction_view_has_one_kl_per_step_and_the_settings():
    view = views.eviction(fake_generation())
    assert view.kl == {"window": [0.25] * 3, "sinks_window": [0.25] * 3}
    # each step's token after its position: unique even when a token is fed twice (plotly merges equal categories)
    assert view.step_labels == ["3  d", "4  e", "5  f"] and (view.window, view.sinks) == (2, 1)
    fed_twice = dataclasses.replace(fake_generation(), tokens=["A", " b", " c", " d", " d", " d", " g"])
    assert len(set(views.eviction(fed_twice).step_labels)) == 3


def test_history_names_its_layer_and_head():
    assert views.history(fake_generation(), 0, None).head is None
    h = views.history(fake_generation(), 0, 7)
    assert h.head == 1 and h.layer == 0 and h.masked[0, -1] and not h.masked[-1, -1]
    with pytest.raises(AttributeError):
        h.layer = 3  # frozen: a view is read, never changed
