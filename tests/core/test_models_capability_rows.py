"""The capability table /models shows (core.models.capabilities.capability_rows): numbers and the config's own names
as they are, everything else in the reader's words. In Japanese and Korean it read '9 query / 3 key-value',
'decoder', 'yes' and '2 of 8', in English."""

import re

import pytest

from app import i18n
from core.models.capabilities import Capabilities, Positions, capability_rows

# every optional field set: a rope model with scaling, a partial and interleaved rotation, sliding windows, soft caps,
# sinks and experts
EVERYTHING = Capabilities(
    model_type="made-up",
    kind="decoder",
    n_layers=4,
    n_heads=8,
    n_kv_heads=2,
    head_dim=64,
    d_model=512,
    positions=Positions(
        "rope",
        rope_theta=10000.0,
        rope_scaling="linear",
        rope_factor=4.0,
        rotary_fraction=0.25,
        rope_pairs="interleaved",
    ),  # fmt: skip
    max_positions=8192,
    vocab_size=32000,
    sliding_window=(4096, None, 4096, None),
    attn_softcap=50.0,
    final_softcap=30.0,
    sinks=True,
    n_experts=8,
    experts_per_token=2,
)


def rows(lang: str, caps: Capabilities = EVERYTHING) -> dict[str, str]:
    return dict(capability_rows(caps, lambda key, **fmt: i18n.text(lang, "models", key, **fmt)))


def test_the_english_table_says_what_it_said():
    assert rows("en") == {
        "kind": "decoder",
        "layers": "4",
        "heads": "8 query / 2 key-value",
        "groups": "0,1,2,3 | 4,5,6,7",
        "head_dim": "64",
        "positions": "rope (θ = 10000, linear × 4, 25% of each head, pairs (2i, 2i+1))",
        "max_positions": "8,192",
        "windows": "2/4 layers: 4096 keys",
        "softcap": "50 (final logits 30)",
        "sinks": "yes",
        "experts": "2 of 8",
        "vocabulary": "32,000",
    }


# the config's own names, the same in every language
CONFIG_NAMES = {"rope", "linear"}


@pytest.mark.parametrize("lang", ["ja", "ko"])
@pytest.mark.parametrize("kind", ["encoder", "decoder", "encoder-decoder"])
def test_japanese_and_korean_tables_have_no_english_words(lang, kind):
    import dataclasses

    shown = rows(lang, dataclasses.replace(EVERYTHING, kind=kind))
    words = {w for value in shown.values() for w in re.findall(r"[A-Za-z]{2,}", value)}
    assert words <= CONFIG_NAMES, shown
    assert shown["heads"].count("8") == 1 and shown["experts"].count("8") == 1  # the numbers kept


def test_a_rope_model_without_details_has_no_empty_brackets():
    import dataclasses

    plain = dataclasses.replace(EVERYTHING, positions=Positions("rope"))
    assert rows("en", plain)["positions"] == "rope"
