"""A model folder's files, checked before anything in them is used, and its size counted before any weight is read.

    read_config(folder)        -> dict: config.json, small and plain (no number wider than 64 bits, none infinite)
    weight_files(folder)       -> the safetensors files a load would read (model.safetensors, or the index's shards)
    stored_parameters(folder)  -> the parameters those files hold, from their headers (each header checked: JSON of
                                  tensors whose byte ranges fill the file exactly, as the safetensors format says)
    parameters_of(config)      -> the parameters of the model the config describes, counted on a model built on
                                  torch's meta device (shapes only: nothing allocated), so every expert, an untied
                                  output layer and the family's own feed-forward width are counted as the real one

Pickled weights (pytorch_model.bin, *.pt) are refused: unpickling can run code. Every problem is a ValueError whose
message is one sentence (core/models/local.py prefixes the folder's name).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

MAX_CONFIG_BYTES = 4 * 2**20  # real configs are a few KB; one with a long label list a few hundred
MAX_HEADER_BYTES = 100 * 2**20  # the safetensors library's own limit
MAX_DIGITS = 19  # an int64; a longer number in a config is no size of a model
MAX_LAYERS = 10_000  # above this a config is refused before a model is built on the meta device
SINGLE_FILE, INDEX_FILE = "model.safetensors", "model.safetensors.index.json"
PICKLED = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")
DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip


def _small_json(path: Path, limit: int, what: str):
    """A JSON file of at most `limit` bytes, its numbers kept to 64-bit integers and finite floats."""
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{what} is {size:,} bytes, more than the {limit:,} a model's file needs")

    def integer(text: str) -> int:
        if len(text.lstrip("-")) > MAX_DIGITS:
            raise ValueError(f"{what} holds a number of {len(text.lstrip('-'))} digits, not a model's size")
        return int(text)

    def finite(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(f"{what} holds the number {text[:30]}, too large to be a model's setting")
        return value

    def constant(text: str):
        raise ValueError(f"{what} holds {text}, which is no number")

    try:
        raw = path.read_text(encoding="utf-8")
        return json.loads(raw, parse_int=integer, parse_float=finite, parse_constant=constant)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{what} is not valid JSON ({str(err)[:120]})") from err


def read_config(folder: Path) -> dict:
    """config.json as a dict; ValueError in words when it is too big, not JSON or holds absurd numbers."""
    config = _small_json(folder / "config.json", MAX_CONFIG_BYTES, "config.json")
    if not isinstance(config, dict):
        raise ValueError("config.json is not a JSON object of settings")
    return config


def weight_files(folder: Path) -> list[Path]:
    """The safetensors files transformers would load from `folder`: the index's shards, or model.safetensors.
    ValueError when there are none (pickled weights named as such) or the index names a file that is not there."""
    index = folder / INDEX_FILE
    if index.is_file():
        weight_map = _small_json(index, MAX_CONFIG_BYTES, INDEX_FILE)
        weight_map = weight_map.get("weight_map") if isinstance(weight_map, dict) else None
        if not isinstance(weight_map, dict) or not weight_map:
            raise ValueError(f"{INDEX_FILE} has no weight_map of tensors to files")
        names = sorted({str(name) for name in weight_map.values()})
        for name in names:
            if Path(name).name != name or not (folder / name).is_file():
                raise ValueError(f"{INDEX_FILE} names the weights file {name[:80]!r}, which is not in the folder")
        return [folder / name for name in names]
    if (folder / SINGLE_FILE).is_file():
        return [folder / SINGLE_FILE]
    pickled = sorted(p.name for pattern in PICKLED for p in folder.glob(pattern) if p.is_file())
    if pickled:
        raise ValueError(
            f"its weights are pickled ({', '.join(pickled[:3])}), and loading a pickle can run any code: save them "
            "as safetensors (model.save_pretrained does by default) and add the folder again"
        )
    raise ValueError(f"no weights in the folder ({SINGLE_FILE} or {INDEX_FILE})")


def file_parameters(path: Path) -> int:
    """The parameters one safetensors file holds, from its header, after checking that the header is JSON of
    tensors (a known dtype, a shape, a byte range that matches them) whose ranges end exactly at the file's end."""
    what = f"{path.name} is not a safetensors file"
    with open(path, "rb") as handle:
        size = path.stat().st_size
        head = handle.read(8)
        length = int.from_bytes(head, "little") if len(head) == 8 else 0
        if length < 2 or length > MAX_HEADER_BYTES or 8 + length > size:
            raise ValueError(f"{what} (its first bytes give no header that fits its {size:,} bytes)")
        raw = handle.read(length)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{what} (its header is not JSON)") from err
    if not isinstance(header, dict):
        raise ValueError(f"{what} (its header is not a table of tensors)")
    count, end = 0, 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        shape = entry.get("shape") if isinstance(entry, dict) else None
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        width = DTYPE_BYTES.get(entry.get("dtype")) if isinstance(entry, dict) else None
        if (
            width is None
            or not isinstance(shape, list)
            or not all(isinstance(n, int) and n >= 0 for n in shape)
            or not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1]
            or offsets[1] - offsets[0] != math.prod(shape) * width
        ):
            raise ValueError(f"{what} (the entry of tensor {str(name)[:60]!r} does not describe a tensor)")
        count += math.prod(shape)
        end = max(end, offsets[1])
    if 8 + length + end != size:
        raise ValueError(
            f"{what} (its header describes {end:,} bytes of tensors, the file holds {size - 8 - length:,})"
        )
    return count


def stored_parameters(folder: Path) -> int:
    """The parameters of every weights file a load would read (weight_files), from their checked headers."""
    return sum(file_parameters(path) for path in weight_files(folder))


def parameters_of(config, kind: str) -> int:
    """The parameters of the model `config` describes (decoders with their language-model head, encoders bare,
    encoder-decoders whole, as core/models/local.py loads them), counted on a build on the meta device: shapes
    without storage, so nothing is allocated and no weight is read. A tied output layer is counted once, as
    `parameters()` counts it. ValueError when transformers cannot build it."""
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM

    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    if int(getattr(text, "num_hidden_layers", 0) or 0) > MAX_LAYERS:
        raise ValueError(f"{text.num_hidden_layers:,} layers, more than any model this app can show")
    auto = {"decoder": AutoModelForCausalLM, "encoder": AutoModel, "encoder-decoder": AutoModelForSeq2SeqLM}[kind]
    try:
        with torch.device("meta"):
            model = auto.from_config(config)
    except (ValueError, TypeError, KeyError, AttributeError, RuntimeError, OverflowError, IndexError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"transformers cannot build the model this config describes ({first[:160]})") from err
    return sum(p.numel() for p in model.parameters())
