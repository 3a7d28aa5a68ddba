"""The /kv-cache page's view objects (core/kv_cache/views.py) on a hand-built Generation: no model needed. The
caption numbers, the greedy-only sentence, the kept strip of the one eviction rule, the bytes formula."""

import numpy as np
import pytest

from core.kv_cache import views
from core.kv_cache.generation import Generation, GenerationStep

TOKENS = ["A", " b", " c", " d", " e", " f", " g"]  # 4 prompt tokens, then 3 generated


def step(position: int, heads: int = 2) -> GenerationStep:
    w = np.full((1, heads, position + 1), 1.0 / (position + 1), dtype=np.float16)
    outcome = {"kept": 3, "evicted": position - 2, "kl": 0.25, "top_ids": [1], "top_tokens": [" x"], "top_probs": [0.5]}
    return GenerationStep(
        position=position, fed_id=position, chosen_id=position + 1, attention=w, top_ids=[1], top_tokens=[" y"],
        top_probs=[0.75], cache_bytes=2 * 1 * 1 * 4 * 4 * (position + 1), ms=12.4, policy_ms=30.6,
        policies={"window": dict(outcome), "sinks_window": dict(outcome, kept=4, evicted=position - 3)},
    )  # fmt: skip


def generation(greedy: bool = True) -> Generation:
    return Generation(
        prompt_ids=[0, 1, 2, 3], tokens=TOKENS, steps=[step(3), step(4), step(5)], layers=1, heads=2, kv_heads=1,
        head_dim=4, bytes_per_value=4, window=2, sinks=1, stopped_at_eos=False, greedy=greedy,
    )  # fmt: skip


def test_continuation_says_greedy_only_when_it_was():
    view = views.continuation(generation())
    assert (view.prompt, view.generated, view.n_prompt, view.n_new) == ("A b c d", " e f g", 4, 3)
    assert view.greedy and not views.continuation(generation(greedy=False)).greedy


def test_step_attention_marks_what_the_one_rule_keeps():
    """Query at position 5, W = 2 keys (its own included), S = 1 sink: it sees positions 0, 4 and 5."""
    view = views.step_attention(generation(), 2, 0)
    assert (view.fed, view.chosen, view.position, view.n) == (" f", " g", 5, 6)
    assert view.kept["window"].tolist() == [0, 0, 0, 0, 1, 1]
    assert view.kept["sinks_window"].tolist() == [1, 0, 0, 0, 1, 1]
    np.testing.assert_allclose(view.mean, np.full(6, 1 / 6), rtol=1e-3)


def test_next_tokens_carry_every_policy_and_the_timings():
    view = views.next_tokens(generation(), 99)  # clamped to the last step
    assert view.step == 2 and view.top_tokens == [" y"] and (view.ms, view.policy_ms) == (12.4, 30.6)
    assert view.outcome("window").evicted == 3 and view.outcome("sinks_window").kept == 4
    assert view.outcome("window").kl == 0.25


def test_memory_is_the_formula_with_its_numbers():
    """2 (K, V) x 1 layer x 1 kv head x 4 values x 4 bytes = 32 bytes per position; multi-head: 2 heads, 64."""
    view = views.memory(generation())
    assert view.per_token == "32 B" and view.n == 6 and view.measured == view.formula_gqa == "192 B"
    assert view.formula_mha == "384 B" and view.curves["mha"] == [2 * g for g in view.curves["gqa"]]
    assert view.curves["window"] == [96.0] * 3  # 3 keys seen x 32 bytes


def test_eviction_view_has_one_kl_per_step_and_the_settings():
    view = views.eviction(generation())
    assert view.kl == {"window": [0.25] * 3, "sinks_window": [0.25] * 3}
    assert view.step_labels == [" d", " e", " f"] and (view.window, view.sinks) == (2, 1)


def test_history_names_its_layer_and_head():
    assert views.history(generation(), 0, None).head is None
    h = views.history(generation(), 0, 7)
    assert h.head == 1 and h.layer == 0 and h.masked[0, -1] and not h.masked[-1, -1]
    with pytest.raises(AttributeError):
        h.layer = 3  # frozen: a view is read, never changed
