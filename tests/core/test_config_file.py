"""A shipped model's config.json read as JSON (core.models.capabilities.config_file, no transformers imported) gives
the capabilities transformers' own reading of the same file gives: MiniLM's package file, each shipped MoE
checkpoint's (SmolLM2's cached copy's: tests/core/test_models_builtin_capabilities.py)."""

from __future__ import annotations

import pytest
from transformers import AutoConfig

from core.models import minilm, moe_model, smollm2
from core.models.capabilities import capabilities_of, config_file


def both_ways(folder):
    return capabilities_of(config_file(folder)), capabilities_of(
        AutoConfig.from_pretrained(folder, local_files_only=True)
    )


@pytest.mark.parametrize("variant", moe_model.VARIANTS)
def test_a_moe_checkpoints_config_file_reads_as_transformers_reads_it(variant):
    as_json, as_transformers = both_ways(moe_model.variant_dir(variant))
    assert as_json == as_transformers and as_json.n_experts and as_json.experts_per_token


def test_minilms_config_file_reads_as_transformers_reads_it():
    as_json, as_transformers = both_ways(minilm.weights_dir())
    assert as_json == as_transformers and as_json.positions.kind == "learned" and as_json.bert_layer


def test_smollm2s_cache_stamp_names_the_installed_transformers_without_importing_it():
    """SmolLM2's cached copy's config.json is read as JSON too: tests/core/test_models_builtin_capabilities.py compares
    what the registry reads from it with the loaded model's (transformers') capabilities. Here: the copy's stamp,
    which says which transformers wrote it, reads the version from the installed package's metadata."""
    import transformers

    assert smollm2.fingerprint(smollm2.gguf_path())["transformers"] == transformers.__version__
