"""Segment recurrence and its successors as masks (core/transformer_xl.py): hand-worked masks, the effective
context L x layers, and, on SmolLM2, the masked single pass against the real thing: XL = segment by segment with
the previous segment's keys/values in a DynamicCache, independent = separate passes, full = a plain pass."""

import numpy as np
import pytest
import torch
from transformers import DynamicCache

from core import transformer_xl as tx
from core.models import registry


def rows(mask: torch.Tensor) -> list[str]:
    return ["".join("x" if v else "." for v in row) for row in mask.tolist()]


def test_masks_hand_worked():
    assert rows(tx.method_mask("independent", 5, segment=2)) == ["x....", "xx...", "..x..", "..xx.", "....x"]
    assert rows(tx.method_mask("xl", 6, segment=2)) == ["x.....", "xx....", "xxx...", "xxxx..", "..xxx.", "..xxxx"]
    assert rows(tx.method_mask("window", 5, window=2)) == ["x....", "xx...", ".xx..", "..xx.", "...xx"]
    assert rows(tx.method_mask("sinks_window", 5, window=2, sinks=1)) == ["x....", "xx...", "xxx..", "x.xx.", "x..xx"]
    assert rows(tx.method_mask("full", 3)) == ["x..", "xx.", "xxx"]
    for bad in (dict(segment=0), dict(window=0), dict(sinks=-1)):
        with pytest.raises(ValueError):
            tx.method_mask("xl", 4, **bad)
    with pytest.raises(ValueError):
        tx.method_mask("compressive", 4)


@pytest.mark.parametrize("layers", [1, 2, 3, 5])
def test_xl_effective_context_grows_as_segment_times_layers(layers):
    n, seg = 40, 4
    reach = tx.receptive_field(tx.method_mask("xl", n, segment=seg), layers)
    for i in range(n):
        s = i // seg
        expect = i + 1 if s <= layers else i + 1 - (s - layers) * seg  # segments s - layers .. s
        assert reach[i] == expect
    window = tx.receptive_field(tx.method_mask("window", n, window=4), layers)
    assert window.tolist() == [min(i + 1, layers * 3 + 1) for i in range(n)]


@pytest.fixture(scope="module")
def smollm2():
    if registry.model_status()["smollm2"] is not None:
        pytest.skip(registry.model_status()["smollm2"])
    wrapper = registry.LOADERS["smollm2"]()
    ids = wrapper.tokenizer("The quick brown fox jumps over the lazy dog. " * 8, add_special_tokens=False)["input_ids"]
    return wrapper.model, ids[:48]


def losses_of(logits: torch.Tensor, ids: list[int]) -> np.ndarray:
    return torch.nn.functional.cross_entropy(logits[:-1].float(), torch.tensor(ids[1:]), reduction="none").numpy()


@torch.no_grad()
def test_full_mask_equals_a_plain_pass(smollm2):
    model, ids = smollm2
    plain = losses_of(model(input_ids=torch.tensor([ids]), use_cache=False).logits[0], ids)
    np.testing.assert_allclose(tx.token_losses(model, ids, tx.method_mask("full", len(ids)), chunk=7), plain, atol=1e-4)


@torch.no_grad()
def test_xl_mask_equals_the_recurrence_with_a_cache(smollm2):
    model, ids = smollm2
    seg, logits, memory = 16, [], None
    for s in range(0, len(ids), seg):
        cache = DynamicCache(config=model.config)
        if memory is not None:  # the previous segment's keys and values only (the one before is dropped)
            cache = DynamicCache(
                ddp_cache_data=[(m.keys[:, :, -seg:], m.values[:, :, -seg:]) for m in memory.layers],
                config=model.config,
            )
        out = model(
            input_ids=torch.tensor([ids[s : s + seg]]),
            past_key_values=cache,
            position_ids=torch.arange(s, s + seg)[None],
            use_cache=True,
        )
        memory = out.past_key_values
        logits.append(out.logits[0])
    recurrence = losses_of(torch.cat(logits), ids)
    masked = tx.token_losses(model, ids, tx.method_mask("xl", len(ids), segment=seg))
    np.testing.assert_allclose(masked, recurrence, atol=1e-4)
    full = tx.token_losses(model, ids, tx.method_mask("full", len(ids)))
    assert np.abs(masked[2 * seg :] - full[2 * seg :]).max() > 1e-3  # the mask is really applied


@torch.no_grad()
def test_independent_mask_equals_separate_passes(smollm2):
    model, ids = smollm2
    seg = 16
    separate = torch.cat([model(input_ids=torch.tensor([ids[s : s + seg]])).logits[0] for s in range(0, len(ids), seg)])
    masked = tx.token_losses(model, ids, tx.method_mask("independent", len(ids), segment=seg))
    np.testing.assert_allclose(masked, losses_of(separate, ids), atol=1e-3)  # positions restart: RoPE rounding only


def test_comparison_summaries():
    losses = {m: np.arange(8, dtype=float) for m in tx.METHODS}
    c = tx.Comparison(n=9, segment=4, window=4, sinks=1, losses=losses)
    assert c.by_position_in_segment("xl").tolist() == [2.0, 3.0, 4.0, 5.0]
    assert c.by_block("full", 2).tolist() == [0.5, 2.5, 4.5, 6.5]
    assert c.mean("window", 4) == 5.5


def test_reach_by_layers_is_the_last_row_of_the_receptive_field():
    mask = tx.method_mask("sinks_window", 30, window=3, sinks=2)
    counts = tx.reach_by_layers(mask, 4)
    assert counts == [int(tx.receptive_field(mask, k)[-1]) for k in range(1, 5)]
    ctx = tx.effective_context(64, segment=8, window=8, sinks=1, layers=3)
    assert ctx["xl"] == [8 + 8, 8 * 3, 8 * 4] and ctx["independent"] == [8, 8, 8] and ctx["full"] == [64] * 3


def test_sinks_finding_rule():
    assert tx.sinks_finding_holds({"full": 3.0, "window": 3.7, "sinks_window": 3.1})
    assert not tx.sinks_finding_holds({"full": 3.0, "window": 3.2, "sinks_window": 3.15})
    assert not tx.sinks_finding_holds({"full": 3.0, "window": 2.9, "sinks_window": 3.0})


def test_xl_against_independent_rule():
    assert tx.xl_beats_independent({"xl": 3.1, "independent": 3.3})
    assert not tx.xl_beats_independent({"xl": 3.5, "independent": 3.3})
