"""/padded-batch's answer functions against independent computations: token counts worked by hand from the
wordpieces, and transformers' own eager attention (output_attentions) on a batch padded and unmasked here by hand,
compared with each sentence's own forward. Each test sets the page's state as a link would (strings)."""

import pytest
import torch

from core.lessons.answers import compute
from core.models import registry

TEXTS = ["The cat sat on the mat.", "It was tired because it had chased a mouse all night.", "Dogs bark."]


def ans(name, **state):
    return compute(name, {}, {k: str(v) for k, v in state.items()})


def test_pad_tokens_by_hand():
    """MiniLM: [CLS] the cat sat on the mat . [SEP] (9), [CLS] it was ... night . [SEP] (14), [CLS] dogs bark .
    [SEP] (5): padded to 14, the batch carries 5 + 0 + 9 padding tokens; 'a b c' and 'a': 5 and 3 tokens, 2."""
    assert ans("padded_batch.pad_tokens").correct == 14
    assert ans("padded_batch.pad_tokens", text="a b c\na").correct == 2
    assert ans("padded_batch.pad_tokens", text="a b c\na", pad="left", nomask=1).correct == 2  # same padding


@pytest.fixture(scope="module")
def eager():
    """Fresh copies of MiniLM and the MoE with transformers' eager attention, which returns its weights."""
    out = {}
    for key in ("minilm", "moe"):
        reason = registry.model_status().get(key)
        if reason is not None:
            pytest.skip(reason)
        model = registry.RECORDS[key].load()
        model.model.set_attn_implementation("eager")
        out[key] = model
    return out


def transformers_check(model, side: str, masked: bool) -> tuple[float, float]:
    """(largest weight a real query gives a padded key, largest |batch - alone| over the real tokens' weights),
    every layer and head, from transformers' own output_attentions; the batch arranged here by hand."""
    batch = model.tokenize(TEXTS, 96)
    ids, mask = batch.input_ids.clone(), batch.attention_mask.clone()
    width = ids.shape[1]
    real = mask.bool().clone()
    if side == "left":
        for i in range(len(TEXTS)):
            pad = width - int(mask[i].sum())
            ids[i] = torch.cat([batch.input_ids[i, width - pad :], batch.input_ids[i, : width - pad]])
            real[i] = torch.cat([torch.zeros(pad, dtype=torch.bool), torch.ones(width - pad, dtype=torch.bool)])
    fed = real.long() if masked else torch.ones_like(mask)
    with torch.no_grad():
        together = model.model(input_ids=ids, attention_mask=fed, output_attentions=True).attentions
    pad_weight, diff = 0.0, 0.0
    for i, text in enumerate(TEXTS):
        alone_ids = model.tokenize([text], 96).input_ids
        with torch.no_grad():
            alone = model.model(input_ids=alone_ids, output_attentions=True).attentions
        keep = real[i]
        for layer, a in enumerate(together):
            rows = a[i][:, keep]  # (H, n, width)
            if (~keep).any():
                pad_weight = max(pad_weight, float(rows[:, :, ~keep].max()))
            diff = max(diff, float((rows[:, :, keep] - alone[layer][0]).abs().max()))
    return pad_weight, diff


# MiniLM without the mask, and with the padding in front; the causal MoE without the mask, and with the padding in front
CASES = [("minilm", "right", False), ("minilm", "left", True), ("moe", "right", False), ("moe", "left", True)]


@pytest.mark.slow
@pytest.mark.parametrize("key, side, masked", CASES)
def test_pad_weight_and_matches_alone_against_transformers_eager(eager, key, side, masked):
    pad_weight, diff = transformers_check(eager[key], side, masked)
    state = {"model": key, "pad": side, "nomask": int(not masked)}
    weight = ans("padded_batch.pad_weight", **state)
    assert abs(weight.correct - pad_weight) < 1e-3, (weight.correct, pad_weight)
    expected = "yes" if pad_weight == 0.0 and diff <= 1e-4 else "no"
    assert ans("padded_batch.matches_alone", **state).correct == expected
    assert (pad_weight == 0.0) == (CASES.index((key, side, masked)) > 0)  # the mask or the causal mask hides padding
    assert (expected == "yes") == (key == "moe")  # positions moved (MiniLM's table) or padding weighed: no
