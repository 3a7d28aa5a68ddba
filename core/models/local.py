"""A learner's own checkpoint: a folder (config, weights, tokenizer) loaded through the same contract as the
shipped models, after checks that turn every way a folder can be wrong into one sentence.

    describe_folder(path, allowed)  -> Capabilities   (config only: nothing is allocated); `allowed`: what a visitor
                                       may name (visitor_allowed(): folders under the allowed roots, symlinks
                                       followed, refused in one sentence that tells nothing of what exists); None:
                                       the operator's list, trusted
    load_folder(path, allowed)      -> HFAttentionModel (an encoder-decoder: its encoder)
    load_seq2seq(path)              -> (Seq2Seq, TextTokenizer): an encoder-decoder's encoder, decoder and
                                       cross-attention through core/models/seq2seq.py's contract
    parity(model)                   -> Parity: every layer's weights against transformers' own eager attention,
                                       and the speed of a pass as the pages run it
    run_estimate(caps, n, model)    -> RunEstimate: memory and time of n tokens, refused above the server's budget

A hub id ("org/name") is downloaded where the server has internet: its config.json first, then the size of its
weights from their safetensors headers on the hub (the capabilities and the size limit are checked before any weight
is fetched), its weights (safetensors only: a pickled file from the internet can run code) and tokenizer when the
model is loaded, at the commit whose config was read (registered as "org/name@<commit>"). Offline (HF_HUB_OFFLINE, as on this project's
machines) a hub id is refused with a message: nothing is downloaded.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from . import checkpoint
from .base import ModelUnavailable, Reason
from .capabilities import Capabilities, capabilities_of
from .hf import HFAttentionModel

# Above this many parameters (estimated from the config's sizes) a folder is refused before loading: float32
# weights take 4 bytes each, and one 2-core server shares its memory with a whole class.
MAX_PARAMETERS = int(os.environ.get("ATTENTION_LAB_MAX_PARAMETERS", 1_000_000_000))
EXACT = 1e-5  # attention weights lie in [0, 1]: an absolute bound is the right one
# The budget of one run of a learner's model on this server (a page refuses a text whose estimate is above it):
# seconds of CPU a visitor may hold one of the server's cores for, and MiB one run may add to the process.
MAX_RUN_SECONDS = float(os.environ.get("ATTENTION_LAB_MAX_RUN_SECONDS", 120))
MAX_RUN_MIB = float(os.environ.get("ATTENTION_LAB_MAX_RUN_MIB", 4096))
PARITY_TEXTS = ("The cat sat on the mat because it was tired.", "A short one.")
TIMED_REPEATS = 3
TIMED_TOKENS = 256  # the loading check also times a run this long: with the short one, a line for the time estimate


class ModelFolderError(ModelUnavailable, ValueError):
    """A folder or name that cannot be loaded as a model; its message says why in one sentence (a ValueError too: a
    bad value the visitor typed). Its argument is a Reason ([models] folder_*, with the path it was given) where core
    knows why without a library's words, as every ModelUnavailable's."""


@dataclass(frozen=True)
class Parity:
    per_layer: tuple[float, ...]  # per layer, the largest |ours - eager| over its heads and real query rows
    # two runs timed as the pages run them (timed_passes): the short padded batch, and one sequence of TIMED_TOKENS
    # ordinary ids; with their matrix-product FLOPs (page_flops per sequence x batch), they give a run's fixed cost
    # and its cost per FLOP (seconds_for)
    seconds: float = 0.0
    flops: int = 0
    long_seconds: float = 0.0
    long_flops: int = 0

    @property
    def max_difference(self) -> float:
        return max(self.per_layer)

    @property
    def layers(self) -> int:
        return len(self.per_layer)

    @property
    def exact(self) -> bool:
        return self.max_difference <= EXACT

    def seconds_for(self, flops: int) -> float | None:
        """A pass of `flops` FLOPs: the line through the two timed passes (a fixed cost per pass, Python and the
        hooks, plus seconds per FLOP); through the origin and the longer pass where the two do not give a
        rising line (timing noise), or the one pass where only one was timed. None: nothing was timed."""
        if self.long_seconds > 0 and self.long_flops > self.flops > 0:
            per_flop = (self.long_seconds - self.seconds) / (self.long_flops - self.flops)
            fixed = self.seconds - per_flop * self.flops
            if per_flop > 0 and fixed >= 0:
                return fixed + per_flop * flops
            return self.long_seconds * flops / self.long_flops
        if self.seconds > 0 and self.flops > 0:
            return self.seconds * flops / self.flops
        return None


@dataclass(frozen=True)
class Estimate:
    """What running a text of n tokens costs, from the sizes alone (float32): the weights (every parameter, where
    they were counted), and what one run adds to them: the q and k the Trace keeps for every layer, its other
    outputs (the residual stream of every layer, a decoder's next-token scores over the whole vocabulary), and the
    larger of two moments that come and go: one layer's weights recomputed for display (layer_map) and the most the
    forward pass holds at once beyond what it keeps (pass: a layer's eager attention, a layer's feed-forward
    activations, or the head's transformed logits). The Trace never holds L·H·n² weights."""

    n_tokens: int
    weights_bytes: int
    trace_bytes: int
    layer_map_bytes: int
    outputs_bytes: int = 0
    pass_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.run_bytes

    @property
    def run_bytes(self) -> int:
        """What one run adds to the loaded model at its peak: everything but the weights."""
        return self.trace_bytes + self.outputs_bytes + max(self.layer_map_bytes, self.pass_bytes)

    def mib(self) -> dict[str, float]:
        """The parts in MiB, as a page prints them ("peak": the larger of the two passing moments)."""
        return {
            "weights": self.weights_bytes / 2**20,
            "trace": self.trace_bytes / 2**20,
            "outputs": self.outputs_bytes / 2**20,
            "layer": self.layer_map_bytes / 2**20,
            "passing": self.pass_bytes / 2**20,
            "peak": max(self.layer_map_bytes, self.pass_bytes) / 2**20,
            "run": self.run_bytes / 2**20,
        }


# How many (H, n, n) float32 score tensors one layer's attention holds at once, by how the model runs it. Under
# SDPA (core/models/hf.py, most models) torch's fused CPU kernel works in blocks and holds none. Soft-capping,
# learned sinks and Bloom's ALiBi run the family's own eager attention, as transformers writes it: Gemma 2's scaled,
# capped, masked scores and their softmax replace one another two at a time; gpt-oss keeps its masked scores, the
# scores joined with the sink column less their maximum, and the softmax (three); Bloom's baddbmm expands its ALiBi
# to the scores' shape, then adds the mask and takes the softmax beside them (four). Where a head's values are not
# the size of its queries and keys (DeepSeek's latent attention), torch's fused CPU kernel declines and SDPA's math
# path holds the scores and their softmax (two, measured by the profiler: 9.2 MiB for (4, 512, 512) scores).
EAGER_SCORE_COPIES = {"alibi": 4, "sinks": 3, "softcap": 2, "math": 2}
# The display's recompute (core/sdpa.py attention_weights) holds the scores and the weights, and ALiBi's bias too.
DISPLAY_SCORE_COPIES = 2
# A gated feed-forward holds act(gate(x)), up(x) and their product at once, each n x ffn_dim.
FEED_FORWARD_COPIES = 3


def eager_attention(caps: Capabilities) -> str | None:
    """Which attention holds whole score tensors (a key of EAGER_SCORE_COPIES), or None: SDPA's fused kernel."""
    if caps.positions.kind == "alibi":
        return "alibi"
    if caps.sinks:
        return "sinks"
    if caps.attn_softcap is not None:
        return "softcap"
    return "math" if caps.value_dim not in (None, caps.head_dim) else None


def matmul_weights(model: HFAttentionModel) -> int:
    """Entries of the weight matrices one token is multiplied by in a forward: every nn.Linear (and GPT-2's
    Conv1D), the output layer included even when it shares the embedding table; a router's matrix held as a bare
    parameter (Mixtral, gpt-oss); and of a mixture of experts' stacked (E, out, in) matrices, the share of the
    k experts each token goes to. Embedding lookups and norms cost no products."""
    caps = model.capabilities
    total = 0
    for module in model.model.modules():
        if isinstance(module, torch.nn.Linear) or type(module).__name__ == "Conv1D":
            total += module.weight.numel()
        elif not isinstance(module, torch.nn.Embedding):
            for name, p in module.named_parameters(recurse=False):
                if p.dim() == 2 and not name.endswith("bias"):
                    total += p.numel()
                elif p.dim() == 3 and caps.n_experts and p.shape[0] == caps.n_experts:
                    total += p.numel() * (caps.experts_per_token or 1) // caps.n_experts
    return total


def forward_flops(weights: int, caps: Capabilities, n_tokens: int) -> int:
    """Matrix-product FLOPs of one forward over n tokens (a multiply-add counted as 2): 2 n per weight entry, and
    per layer and head 2 n^2 d for the scores plus 2 n^2 d_v for the weighted sum of values (the whole n x n, as the
    kernels compute it, causal or not)."""
    n = int(n_tokens)
    per_head = caps.head_dim + (caps.value_dim or caps.head_dim)
    return 2 * n * weights + 2 * caps.n_layers * caps.n_heads * per_head * n * n


def page_flops(weights: int, caps: Capabilities, n_tokens: int) -> int:
    """What a page's run of n tokens multiplies: the forward pass, and one layer's scores of every head recomputed
    for display (2 n^2 d per head)."""
    n = int(n_tokens)
    return forward_flops(weights, caps, n) + 2 * caps.n_heads * caps.head_dim * n * n


@dataclass(frozen=True)
class RunEstimate:
    """What one run of n tokens would take: memory from the sizes (Estimate) and seconds from the loading check's
    two timed runs (Parity.seconds_for: a fixed cost and seconds per FLOP), with the server's verdict: `over` names
    the budget it would exceed ("memory" or "time"; None: within budget), `need` and `limit` the two numbers (MiB
    or s)."""

    n_tokens: int
    memory: Estimate
    seconds: float | None  # None until the model was loaded and checked
    over: str | None = None
    need: float = 0.0
    limit: float = 0.0

    @property
    def problem(self) -> str | None:
        """The verdict in one English sentence (logs, tests); pages say it in the reader's language."""
        if self.over is None:
            return None
        unit = "MiB" if self.over == "memory" else "s"
        verb = "need" if self.over == "memory" else "take"
        return f"{self.n_tokens:,} tokens would {verb} about {self.need:,.0f} {unit}, above this server's {self.limit:,.0f} {unit}"


def run_estimate(caps: Capabilities, n_tokens: int, model: HFAttentionModel | None = None) -> RunEstimate:
    """The memory (and, for a loaded model with its parity check, the time) of a run over n tokens, refused when
    above MAX_RUN_MIB or MAX_RUN_SECONDS (memory first: it needs no loaded model)."""
    memory = estimate(caps, n_tokens)
    parity = getattr(model, "parity", None)
    seconds = None if parity is None else parity.seconds_for(page_flops(matmul_weights(model), caps, n_tokens))
    run_mib = memory.run_bytes / 2**20
    if run_mib > MAX_RUN_MIB:
        return RunEstimate(int(n_tokens), memory, seconds, "memory", run_mib, MAX_RUN_MIB)
    if seconds is not None and seconds > MAX_RUN_SECONDS:
        return RunEstimate(int(n_tokens), memory, seconds, "time", seconds, MAX_RUN_SECONDS)
    return RunEstimate(int(n_tokens), memory, seconds)


def estimate(caps: Capabilities, n_tokens: int) -> Estimate:
    n = max(1, int(n_tokens))
    trace = caps.n_layers * (caps.n_heads + caps.n_kv_heads) * n * caps.head_dim * 4
    outputs = (caps.n_layers + 1) * n * caps.d_model  # the residual stream: the embeddings and every layer's output
    logits = n * caps.vocab_size if caps.kind == "decoder" else 0
    outputs += logits  # next-token scores
    weights = (caps.parameters or caps.parameters_estimate()) * 4
    scores = caps.n_heads * n * n * 4  # one layer's (H, n, n) in float32
    eager = eager_attention(caps)
    display = scores * (DISPLAY_SCORE_COPIES + (eager == "alibi"))
    attention = 0
    if eager is not None:  # and an additive float mask (n, n) per kind of layer (full, each window) beside them
        attention = scores * EAGER_SCORE_COPIES[eager] + len(set(caps.sliding_window) or {None}) * n * n * 4
    feed_forward = FEED_FORWARD_COPIES * n * (caps.ffn_dim or 4 * caps.d_model) * 4
    head = logits * 4 if caps.logit_scale is not None or caps.final_softcap is not None else 0  # a scaled copy
    return Estimate(n, weights, trace, display, outputs * 4, max(attention, feed_forward, head))


# A visitor's folder (the /models page on a laptop run) must lie, symlinks followed, under one of these folders
# (os.pathsep-separated; default: the home folder of the user running the server).
FOLDER_ROOTS_ENV = "ATTENTION_LAB_FOLDER_ROOTS"
ANY_HUB_ID = "hub:*"  # in `allowed`: any hub id (a laptop's visitor may name one; the operator lists theirs)
MAX_FOLDER_ENTRIES = 1000  # a visitor's folder with more entries than this is refused unread
REFUSED = "not a model folder this server may open (a folder of config.json, weights and tokenizer, inside the folders it allows: {env})"


def visitor_allowed() -> tuple[str, ...]:
    """What a visitor may name: a folder under $ATTENTION_LAB_FOLDER_ROOTS (default: the home folder), or a hub id."""
    raw = os.environ.get(FOLDER_ROOTS_ENV, "").strip()
    roots = [r for r in raw.split(os.pathsep) if r.strip()] if raw else [str(Path.home())]
    return (*roots, ANY_HUB_ID)


def _inside(path: Path, roots) -> bool:
    """path (resolved: symlinks followed) is one of the roots or lies under one (each resolved too)."""
    roots = [Path(r).expanduser().resolve() for r in roots if str(r) != ANY_HUB_ID and not is_hub_id(str(r))]
    return any(path == root or root in path.parents for root in roots)


HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w.-]+)?")  # org/name, or org/name@revision
HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.txt", "*.tiktoken"]  # config, weights, tokenizer: no code
COMMIT = re.compile(r"[0-9a-f]{40}")


def is_hub_id(text: str) -> bool:
    """'org/name' (or 'org/name@revision') that is not a folder here."""
    text = str(text).strip()
    return bool(HUB_ID.fullmatch(text)) and not Path(text).expanduser().exists()


def hub_revision(text: str) -> tuple[str, str | None]:
    """('org/name', its revision or None) of a hub id."""
    repo_id, _, revision = str(text).strip().partition("@")
    return repo_id, revision or None


def pinned_hub_id(text: str, config_folder: Path) -> str:
    """'org/name@<commit>': the hub id at the commit whose config was read (the hub cache keeps each snapshot in a
    folder named by its commit), so the weights fetched later, and a restart, load that same revision."""
    repo_id, revision = hub_revision(text)
    commit = config_folder.name if COMMIT.fullmatch(config_folder.name) else revision
    return f"{repo_id}@{commit}" if commit else repo_id


def hub_offline() -> bool:
    from huggingface_hub import constants

    flags = (os.environ.get(name, "").strip().lower() for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    return bool(constants.HF_HUB_OFFLINE) or any(flag in ("1", "true", "yes", "on") for flag in flags)


def display_name(path) -> str:
    """What a folder or hub id is called on the pages: the folder's name, or the name part of 'org/name'."""
    text = str(path).strip()
    return hub_revision(text)[0].rsplit("/", 1)[-1] if is_hub_id(text) else Path(text).expanduser().resolve().name


def _first_line(err: Exception) -> str:
    return (str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__)[:200]


def _hub_folder(hub_id: str, weights: bool) -> Path:
    """The hub's files of hub_id ('org/name', or pinned 'org/name@revision') in the local hub cache: config.json
    alone, or everything a load needs."""
    repo_id, revision = hub_revision(hub_id)
    if hub_offline():
        said = (
            f"{repo_id}: looks like a hub id, but this server is offline (HF_HUB_OFFLINE): nothing is downloaded "
            "here; download it where there is internet and add its folder"
        )
        raise ModelFolderError(Reason(said, "folder_hub_offline", path=repo_id))
    import huggingface_hub

    try:
        if weights:
            return Path(huggingface_hub.snapshot_download(repo_id, revision=revision, allow_patterns=HUB_FILES))
        return Path(huggingface_hub.hf_hub_download(repo_id, "config.json", revision=revision)).parent
    except (OSError, ValueError) as err:  # no network, no such repository, a gated one: one sentence
        raise ModelFolderError(f"{repo_id}: could not be downloaded from the hub ({_first_line(err)})") from err


def hub_parameters(hub_id: str) -> int:
    """The parameters a hub model's weights hold, read from the safetensors headers on the hub (huggingface_hub
    fetches the index and each file's header, a few KB, never a weight): checked before any weight is fetched."""
    import huggingface_hub
    from huggingface_hub.errors import NotASafetensorsRepoError, SafetensorsParsingError

    repo_id, revision = hub_revision(hub_id)
    try:
        found = huggingface_hub.get_safetensors_metadata(repo_id, revision=revision)
    except (OSError, ValueError, NotASafetensorsRepoError, SafetensorsParsingError) as err:
        raise ModelFolderError(
            f"{repo_id}: no readable safetensors weights on the hub ({_first_line(err)}); pickled weights are "
            "not loaded here"
        ) from err
    return int(sum(found.parameter_count.values()))


def resolve_folder(path, allowed=None) -> Path:
    """The local folder behind `path`: the folder itself, or the hub cache's folder of a hub id (its config)."""
    return _folder(path, allowed)


def _folder(path, allowed, weights: bool = False) -> Path:
    """The local folder of `path` (a folder, or a hub id fetched where there is internet: with `weights`, all of
    it; else its config alone). `allowed`: the folders (and hub ids) a server lets visitors load; None: any."""
    text = str(path).strip()
    if not text:
        raise ModelFolderError(Reason("no folder given", "folder_empty"))
    if is_hub_id(text):
        if allowed is not None and not {text, hub_revision(text)[0], ANY_HUB_ID} & {str(a) for a in allowed}:
            raise ModelFolderError(
                Reason(f"{text}: not in the list of models this server allows", "folder_not_allowed", path=text)
            )
        return _hub_folder(text, weights)
    folder = Path(text).expanduser().resolve()
    if allowed is not None:  # a visitor's path: one sentence whatever is or is not there
        if not _visitor_may_open(folder, allowed):
            refused = f"{text}: " + REFUSED.format(env=FOLDER_ROOTS_ENV)
            raise ModelFolderError(Reason(refused, "folder_refused", path=text, env=FOLDER_ROOTS_ENV))
        return folder
    if not folder.exists():
        raise ModelFolderError(Reason(f"{text}: no such folder", "folder_no_such", path=text))
    if not folder.is_dir():
        a_file = f"{text}: a file, not a model folder (config.json, weights and tokenizer)"
        raise ModelFolderError(Reason(a_file, "folder_a_file", path=text))
    if not (folder / "config.json").is_file():
        no_config = f"{text}: no config.json, so not a transformers model folder"
        raise ModelFolderError(Reason(no_config, "folder_no_config", path=text))
    return folder


def _visitor_may_open(folder: Path, allowed) -> bool:
    """folder (resolved) lies under an allowed root, is a folder with a config.json, and none of its entries (at
    most MAX_FOLDER_ENTRIES) leads outside the roots through a symlink: the answer tells nothing of what exists
    elsewhere, and nothing outside the roots is ever read."""
    if not _inside(folder, allowed):
        return False
    try:
        if not (folder / "config.json").is_file():
            return False
        entries = list(itertools.islice(folder.iterdir(), MAX_FOLDER_ENTRIES + 1))
    except OSError:  # unreadable, or a path component that is a file
        return False
    return len(entries) <= MAX_FOLDER_ENTRIES and all(_inside(entry.resolve(), allowed) for entry in entries)


def _config(folder: Path, name: str):
    from transformers import AutoConfig

    try:
        checkpoint.read_config(folder)  # small, JSON, plain numbers: before transformers reads it
    except ValueError as err:
        raise ModelFolderError(f"{name}: {err}") from err
    try:
        return AutoConfig.from_pretrained(folder, local_files_only=True)
    except (ValueError, KeyError, OSError, TypeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ModelFolderError(f"{name}: transformers does not know this architecture ({first[:200]})") from err
    except Exception as err:  # a config class's own validation (huggingface_hub's strict dataclasses raise their own)
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        raise ModelFolderError(
            f"{name}: transformers refuses this config ({(lines[-1] if lines else type(err).__name__)[:200]})"
        ) from err


def describe_folder(path, allowed=None) -> Capabilities:
    """The folder's capabilities from its config alone; raises ModelFolderError with the reason."""
    folder, name = _folder(path, allowed), display_name(path)
    config = _config(folder, name)
    try:
        caps = capabilities_of(config)
    except (ValueError, OverflowError) as err:
        raise ModelFolderError(f"{name}: {err}") from err
    if caps.positions.kind == "alibi" and not caps.through_attention_interface:  # no contract reads it
        said = (
            f"{name}: a {caps.model_type} model adds its ALiBi position biases inside its own attention code, "
            "which never calls transformers' attention interface, so this app cannot record its attention weights"
        )
        raise ModelFolderError(Reason(said, "folder_alibi_inside", path=name, model_type=caps.model_type))
    _within_size(caps.parameters_estimate(), name)  # a lower bound: an enormous config goes before any build
    try:
        caps = dataclasses.replace(caps, parameters=checkpoint.parameters_of(config, caps.kind))
    except ValueError as err:
        raise ModelFolderError(f"{name}: {err}") from err
    _within_size(caps.parameters, name)
    if is_hub_id(path):  # the size of its weights on the hub, at the revision whose config was read
        _within_size(hub_parameters(pinned_hub_id(path, folder)), name)
    else:  # a hub model's files are checked once fetched (load_folder)
        _check_weights(folder, name)
    return caps


def _within_size(parameters: int, name: str) -> None:
    if parameters > MAX_PARAMETERS:
        billions, limit = parameters / 1e9, MAX_PARAMETERS / 1e9
        said = f"{name}: about {billions:.1f} billion parameters, above this server's limit of {limit:.1f} billion"
        raise ModelFolderError(Reason(said, "folder_too_large", path=name, billions=billions, limit=limit))


def _check_weights(folder: Path, name: str) -> int:
    """The parameters the folder's safetensors files hold, after checking each header (core/models/checkpoint.py);
    pickled weights, garbage or a file its header does not fill are refused in one sentence."""
    try:
        stored = checkpoint.stored_parameters(folder)
    except (ValueError, OSError) as err:
        raise ModelFolderError(f"{name}: {err}") from err
    _within_size(stored, name)  # files larger than their config says are not read either
    return stored


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


def _tokenizer_and_weights(folder: Path, caps: Capabilities, label: str, **options):
    """(tokenizer, transformers model) of a checked folder: decoders with their language-model head, encoders
    bare, encoder-decoders whole (AutoModelForSeq2SeqLM); each failure in one sentence that starts with `label`
    (display_name: a hub model's folder is named by a commit hash)."""
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    try:
        tokenizer = _tokenizer(folder, AutoTokenizer)
    except (OSError, ValueError, TypeError, KeyError, json.JSONDecodeError) as err:
        raise ModelFolderError(f"{label}: no usable tokenizer in the folder ({str(err)[:200]})") from err
    auto = {"decoder": AutoModelForCausalLM, "encoder": AutoModel, "encoder-decoder": AutoModelForSeq2SeqLM}
    _check_weights(folder, label)  # a hub model's files too, now that they are here
    try:  # safetensors only: never a pickle, even one added to the folder since it was described
        model = auto[caps.kind].from_pretrained(
            folder, local_files_only=True, dtype=torch.float32, use_safetensors=True, **options
        )
    except (OSError, ValueError, TypeError, KeyError, RuntimeError) as err:
        raise ModelFolderError(f"{label}: the weights could not be loaded ({str(err)[:200]})") from err
    return tokenizer, model


def load_folder(path, allowed=None, name: str | None = None) -> HFAttentionModel:
    """Load a folder through the contract. Decoders get their language-model head (logits), encoders the bare
    encoder; an encoder-decoder is shown here by its encoder's self-attention (load_seq2seq gives its decoder and
    cross-attention). Raises ModelFolderError; a model whose layers bypass transformers' attention interface is
    named as such."""
    caps, label = describe_folder(path, allowed), display_name(path)
    folder = _folder(path, allowed, weights=True)
    tokenizer, model = _tokenizer_and_weights(folder, caps, label)
    if caps.kind == "encoder-decoder":
        model = model.get_encoder()
    positions = caps.positions.kind
    try:
        return HFAttentionModel(
            model,
            tokenizer,
            name=name or label,
            position_kind=positions,
            is_causal=caps.is_causal,
            weights=("hub", {"path": str(path)}) if is_hub_id(path) else ("folder", {"folder": str(folder)}),
        )
    except ValueError as err:
        raise ModelFolderError(f"{label}: {err}") from err
    except AttributeError as err:  # a config that lacks what the contract reads (T5's encoder has no position table)
        raise ModelFolderError(f"{label}: the attention contract cannot read this model ({err})") from err


def not_encoder_decoder(name: str) -> Reason:
    """Why a model (a folder's name, a record's title) cannot be shown whole on /encoder-decoder."""
    said = f"{name}: not an encoder-decoder, so it has no cross-attention to show"
    return Reason(said, "folder_not_encoder_decoder", path=name)


def load_seq2seq(path, allowed=None):
    """An encoder-decoder folder (Marian, BART, T5, ...: anything AutoModelForSeq2SeqLM loads) whole, with its own
    tokenizer and eager attention: (Seq2Seq, TextTokenizer) of core/models/seq2seq.py, whose encode, decode, step
    and greedy read every attention weight as transformers computes it (a registered folder loads through its
    registry key: registry.seq2seq_key). Raises ModelFolderError, also for a folder that is no encoder-decoder."""
    from . import seq2seq

    caps, label = describe_folder(path, allowed), display_name(path)
    if caps.kind != "encoder-decoder":  # a folder overwritten by another model since it was added, too
        raise ModelFolderError(not_encoder_decoder(label))
    folder = _folder(path, allowed, weights=True)  # a hub model's weights only now, once it is known to fit
    tokenizer, model = _tokenizer_and_weights(folder, caps, label, attn_implementation="eager")
    try:
        return seq2seq.pretrained(model, tokenizer)
    except ValueError as err:
        raise ModelFolderError(f"{label}: {err}") from err


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
    seconds, flops, long_seconds, long_flops = timed_passes(model, batch)
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
    return Parity(tuple(per_layer), seconds, flops, long_seconds, long_flops)


def run_clock():
    """The clock a run is timed by: the calling thread's CPU time where torch runs on that one thread (the server's
    setting, app/serving.py), so that other processes on a busy machine do not inflate the loading check's runs
    (a 30 ms run on a machine at load 16 took from 0.2 to 4 times its own time on the wall clock); the wall clock
    where torch spreads a run over several threads, whose work the calling thread's CPU time would miss."""
    return time.thread_time if torch.get_num_threads() == 1 else time.perf_counter


def timed_passes(model: HFAttentionModel, batch) -> tuple[float, int, float, int]:
    """(seconds, FLOPs) of a page's run over `batch` and of one over TIMED_TOKENS ordinary ids (fewer where the
    model's positions end first): the pass, then one layer's weights of every head recomputed for display
    (page_flops), each the fastest of TIMED_REPEATS after one untimed run of the same shape (which warms it up)."""
    weights = matmul_weights(model)
    ids = model.ordinary_ids()
    n = min(TIMED_TOKENS, model.max_positions)
    long = model.batch_of_ids([ids[torch.arange(n) % len(ids)].tolist()]) if len(ids) else None
    timed = []
    for b in (batch, long):
        if b is None:
            timed.append((0.0, 0))
            continue
        model.run(b).layer_attention(0)
        seconds = float("inf")
        clock = run_clock()
        for _ in range(TIMED_REPEATS):  # the fastest: a busy machine only ever adds time
            start = clock()
            model.run(b).layer_attention(0)
            seconds = min(seconds, clock() - start)
        timed.append((seconds, b.input_ids.shape[0] * page_flops(weights, model.capabilities, b.input_ids.shape[1])))
    (seconds, flops), (long_seconds, long_flops) = timed
    return seconds, flops, long_seconds, long_flops
