"""Shared test set-up. The repository root is on sys.path through pytest's `pythonpath` (pyproject.toml), and models
load from installed packages with local_files_only=True, so no environment preamble is needed here.

The pretrained models are session fixtures: each test process loads each model at most once (MiniLM about a
second, SmolLM2 a few seconds from its cache, ~25 s the very first time), whichever test files use them. A model
whose weight package is missing skips the tests that need it, with the install command as the reason."""

from __future__ import annotations

import pytest

from core.models import registry


def load_or_skip(key: str):
    reason = registry.model_status().get(key)
    if reason is not None:
        pytest.skip(f"{key}: {reason}")
    return registry.LOADERS[key]()


@pytest.fixture(scope="session")
def minilm():
    """MiniLM-L6 (all-MiniLM-L6-v2): 6-layer encoder, 12 heads."""
    return load_or_skip("minilm")


@pytest.fixture(scope="session")
def smollm2():
    """SmolLM2-135M-Instruct: 30-layer decoder, 9 query heads over 3 key/value heads."""
    return load_or_skip("smollm2")


@pytest.fixture(scope="session")
def moe():
    """The tiny MoE trained by this repository (its default, balanced variant)."""
    return load_or_skip("moe")
