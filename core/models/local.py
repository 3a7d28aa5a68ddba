"""A learner's own checkpoint: a folder (config, weights, tokenizer) loaded through the same contract as the
shipped models, after checks that turn every way a folder can be wrong into one sentence.

    describe_folder(path, allowed)  -> Capabilities   (config only: nothing is allocated)
    load_folder(path, allowed)      -> HFAttentionModel
    parity(model)                   -> Parity: every layer's weights against transformers' own eager attention

Nothing is downloaded: a name that is not a folder here is refused with a message (a hub id needs a server
with internet, where the host puts the downloaded folder in its allowed list).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from .capabilities import Capabilities, capabilities_of
from .hf import HFAttentionModel

# Above this many parameters (estimated from the config's sizes) a folder is refused before loading: float32
# weights take 4 bytes each, and one 2-core server shares its memory with a whole class.
MAX_PARAMETERS = int(os.environ.get("ATTENTION_LAB_MAX_PARAMETERS", 1_000_000_000))
EXACT = 1e-5  # attention weights lie in [0, 1]: an absolute bound is the right one
PARITY_TEXTS = ("The cat sat on the mat because it was tired.", "A short one.")


class ModelFolderError(ValueError):
    """A folder or name that cannot be loaded as a model; the message says why in words."""


@dataclass(frozen=True)
class Parity:
    per_layer: tuple[float, ...]  # per layer, the largest |ours - eager| over its heads and real query rows

    @property
    def max_difference(self) -> float:
        return max(self.per_layer)

    @property
    def layers(self) -> int:
        return len(self.per_layer)

    @property
    def exact(self) -> bool:
        return self.max_difference <= EXACT


@dataclass(frozen=True)
class Estimate:
    """What running a text of n tokens costs, from the sizes alone (float32): the weights, the q and k the Trace
    keeps for every layer, and one layer's weights recomputed for display. The Trace never holds L·H·n² weights."""

    n_tokens: int
    weights_bytes: int
    trace_bytes: int
    layer_map_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.trace_bytes + self.layer_map_bytes

    def mib(self) -> dict[str, float]:
        """The three parts in MiB, as a page prints them."""
        return {
            "weights": self.weights_bytes / 2**20,
            "trace": self.trace_bytes / 2**20,
            "layer": self.layer_map_bytes / 2**20,
        }


def estimate(caps: Capabilities, n_tokens: int) -> Estimate:
    n = max(1, int(n_tokens))
    trace = caps.n_layers * (caps.n_heads + caps.n_kv_heads) * n * caps.head_dim * 4
    return Estimate(n, caps.parameters_estimate() * 4, trace, caps.n_heads * n * n * 4)


def _inside(path: Path, roots) -> bool:
    return any(path == root or root in path.parents for root in (Path(r).resolve() for r in roots))


def _folder(path, allowed) -> Path:
    text = str(path).strip()
    if not text:
        raise ModelFolderError("no folder given")
    folder = Path(text).expanduser().resolve()
    if allowed is not None and not _inside(folder, allowed):
        raise ModelFolderError(f"{text}: not in the list of model folders this server allows")
    if not folder.exists():
        if "/" in text and not text.startswith(("/", ".", "~")) and text.count("/") == 1:
            raise ModelFolderError(
                f"{text}: looks like a hub id, but nothing is downloaded here; download it where there is internet "
                "and add its folder"
            )
        raise ModelFolderError(f"{text}: no such folder")
    if not folder.is_dir():
        raise ModelFolderError(f"{text}: a file, not a model folder (config.json, weights and tokenizer)")
    if not (folder / "config.json").is_file():
        raise ModelFolderError(f"{text}: no config.json, so not a transformers model folder")
    return folder


def _config(folder: Path):
    from transformers import AutoConfig

    try:
        json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelFolderError(f"{folder.name}/config.json is not valid JSON ({err})") from err
    try:
        return AutoConfig.from_pretrained(folder, local_files_only=True)
    except (ValueError, KeyError, OSError, TypeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ModelFolderError(f"{folder.name}: transformers does not know this architecture ({first[:200]})") from err


def describe_folder(path, allowed=None) -> Capabilities:
    """The folder's capabilities from its config alone; raises ModelFolderError with the reason."""
    folder = _folder(path, allowed)
    try:
        caps = capabilities_of(_config(folder))
    except ValueError as err:
        raise ModelFolderError(f"{folder.name}: {err}") from err
    if caps.parameters_estimate() > MAX_PARAMETERS:
        raise ModelFolderError(
            f"{folder.name}: about {caps.parameters_estimate() / 1e9:.1f} billion parameters, above this server's "
            f"limit of {MAX_PARAMETERS / 1e9:.1f} billion"
        )
    return caps


def _tokenizer(folder: Path, auto):
    """The folder's tokenizer as it was saved. A plain `tokenizers` file saved by PreTrainedTokenizerFast is read
    back as such: AutoTokenizer would otherwise pick the family's own class (Qwen2's), which rebuilds another
    vocabulary from it."""
    from transformers import PreTrainedTokenizerFast

    settings = folder / "tokenizer_config.json"
    saved = json.loads(settings.read_text(encoding="utf-8")).get("tokenizer_class") if settings.is_file() else None
    if saved in ("TokenizersBackend", "PreTrainedTokenizerFast") and (folder / "tokenizer.json").is_file():
        return PreTrainedTokenizerFast.from_pretrained(folder, local_files_only=True)
    return auto.from_pretrained(folder, local_files_only=True)


def load_folder(path, allowed=None, name: str | None = None) -> HFAttentionModel:
    """Load a folder through the contract. Decoders get their language-model head (logits), encoders the bare
    encoder; an encoder-decoder is shown by its encoder's self-attention (its decoder is not wired to the pages).
    Raises ModelFolderError; a model whose layers bypass transformers' attention interface is named as such."""
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    caps = describe_folder(path, allowed)
    folder = _folder(path, allowed)
    try:
        tokenizer = _tokenizer(folder, AutoTokenizer)
    except (OSError, ValueError, TypeError, KeyError, json.JSONDecodeError) as err:
        raise ModelFolderError(f"{folder.name}: no usable tokenizer in the folder ({str(err)[:200]})") from err
    auto = {"decoder": AutoModelForCausalLM, "encoder": AutoModel, "encoder-decoder": AutoModelForSeq2SeqLM}
    try:
        model = auto[caps.kind].from_pretrained(folder, local_files_only=True, dtype=torch.float32)
    except (OSError, ValueError, TypeError, KeyError, RuntimeError) as err:
        raise ModelFolderError(f"{folder.name}: the weights could not be loaded ({str(err)[:200]})") from err
    if caps.kind == "encoder-decoder":
        model = model.get_encoder()
    positions = caps.positions.kind
    try:
        return HFAttentionModel(
            model,
            tokenizer,
            name=name or folder.name,
            position_kind=positions,
            is_causal=caps.is_causal,
            weights_note=f"from the folder {folder}",
        )
    except ValueError as err:
        raise ModelFolderError(f"{folder.name}: {err}") from err


@torch.no_grad()
def parity(model: HFAttentionModel, texts=PARITY_TEXTS) -> Parity:
    """Every layer and head of our Trace against the same model run with transformers' eager attention
    (output_attentions), on a short padded batch, real query rows only. Done once, right after loading and before
    the model is shared, because it switches the model's attention implementation for one pass."""
    batch = model.tokenize(list(texts))
    try:
        trace = model.run(batch)
    except RuntimeError as err:
        raise ModelFolderError(
            f"{model.name}: {err} Its layers bypass the attention interface (linear-attention or hybrid layers?)"
        ) from err
    module = model.model
    module.set_attn_implementation("eager")
    try:
        out = module(
            input_ids=batch.input_ids,
            attention_mask=batch.attention_mask,
            output_attentions=True,
            **model._run_kwargs(),
        )
    finally:
        module.set_attn_implementation(model.attn_implementation)
    eager = out.attentions
    if eager is None or len(eager) != trace.n_layers:
        raise ModelFolderError(f"{model.name}: transformers' eager run returned no attention weights")
    per_layer = []
    for layer, theirs in enumerate(eager):
        worst = 0.0
        for index in range(len(texts)):
            m = trace.length(index)
            ours = trace.layer_attention(layer, index)[:, :m]
            worst = max(worst, float((ours - theirs[index, :, :m].float()).abs().max()))
        per_layer.append(worst)
    return Parity(tuple(per_layer))
