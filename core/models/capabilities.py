"""What a model offers the pages, read from its transformers config: the contract's `capabilities`.

Pages ask for a capability ("a decoder with RoPE", "per-layer sliding windows"), never for a model by name. Read
from the config only (no weights), so a folder can be described before it is loaded; `HFAttentionModel` checks
the same facts against what its modules pass to the attention function on the first run.

Config names differ by family (GPT-2's n_head, GPT-NeoX's rotary_pct, Mistral's sliding_window on every layer,
Gemma 2's layer_types): transformers' attribute maps resolve most; the rest is spelled out below, once.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# Families whose position information is a learned table added to the embeddings.
_LEARNED = {"bert", "roberta", "xlm-roberta", "electra", "gpt2", "gpt_neo", "opt", "bart", "mbart", "whisper"}
_SINUSOIDAL = {"marian", "pegasus", "fsmt"}
_ALIBI = {"bloom", "mpt"}
ALIBI_READ = {"bloom"}  # ALiBi families whose own attention core/models/hf.py reads (the others are refused)
_RELATIVE_BUCKETS = {"t5", "mt5", "umt5"}
# Families that rotate the first config.rotary_dim dimensions of each head, with base 10,000 (their rotary code
# has it written in; the config names no base).
_ROTARY_DIM = {"gptj", "codegen"}
# Families whose rotated q and k pair dimensions (2i, 2i + 1) in place (transformers' rotate_every_two, Cohere's
# rotate_half), where the others pair (i, i + d/2).
_INTERLEAVED = {"gptj", "codegen", "cohere", "cohere2"}
# Families whose language-model head multiplies its logits by config.logit_scale.
_LOGIT_SCALE = {"cohere", "cohere2"}
_ENCODERS = {"bert", "roberta", "xlm-roberta", "distilbert", "electra", "albert", "deberta", "deberta-v2", "modernbert"}


@dataclass(frozen=True)
class Positions:
    kind: str  # "learned", "sinusoidal", "rope", "alibi", "relative-buckets", "none"
    rope_theta: float | None = None
    rope_scaling: str | None = None  # rope_type other than "default": "linear", "dynamic", "yarn", "llama3", ...
    rope_factor: float | None = None
    rotary_fraction: float = 1.0  # GPT-NeoX / Phi / GPT-J rotate only part of each head; DeepSeek's MLA a third
    # how the rotated q and k hold their pairs: "half" pairs dimensions (i, i + d/2) (Llama, GPT-NeoX), "interleaved"
    # pairs (2i, 2i + 1) (GPT-J, Cohere)
    rope_pairs: str = "half"


@dataclass(frozen=True)
class Capabilities:
    model_type: str
    kind: str  # "encoder", "decoder", "encoder-decoder"
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int  # of q and k
    d_model: int
    positions: Positions
    max_positions: int | None
    vocab_size: int
    sliding_window: tuple[int | None, ...] = field(default_factory=tuple)  # per layer: window in keys, or None
    attn_softcap: float | None = None
    final_softcap: float | None = None
    logit_scale: float | None = None  # the head's logits multiplied by this (Cohere), before any final soft-cap
    sinks: bool = False
    n_experts: int | None = None  # mixture of experts: experts per layer
    experts_per_token: int | None = None
    # A post-LayerNorm BERT layer (transformers' BertLayer layout, exact GELU, absolute positions): /multi-head
    # recomputes it by hand from core/models/weights.py's EncoderLayerWeights.
    bert_layer: bool = False
    value_dim: int | None = None  # of v, where it differs from head_dim (DeepSeek's latent attention)
    # latent attention (MLA: DeepSeek V2/V3): the cache keeps one compressed vector per token and layer of this
    # width (kv_lora_rank + the rotated part), not keys and values per head
    kv_latent_dim: int | None = None
    # the width of one token's feed-forward activations (config.intermediate_size, n_inner, ffn_dim or d_ff: a dense
    # layer's, or else one expert's); None where the config names none (GPT-2 and Bloom build 4 x d_model)
    ffn_dim: int | None = None
    # every parameter of the model the config describes (core/models/checkpoint.py: counted on a meta-device build,
    # all experts and an untied output layer included); None where it was not counted (shipped models)
    parameters: int | None = None

    @property
    def is_causal(self) -> bool:
        return self.kind == "decoder"

    @property
    def through_attention_interface(self) -> bool:
        """Whether the attention contract (core/models/hf.py) can record this model's attention: T5's relative
        position buckets and the ALiBi biases of MPT and Falcon are added inside the family's own attention code,
        which never calls transformers' attention interface (the seq2seq contract, core/models/seq2seq.py, reads T5
        through output_attentions instead); Bloom's own attention is read by hooks of its own (ALIBI_READ)."""
        return self.positions.kind != "relative-buckets" and (
            self.positions.kind != "alibi" or self.model_type in ALIBI_READ
        )

    @property
    def kv_groups(self) -> list[list[int]]:
        """The query heads that share each key/value head (GQA; consecutive heads, as transformers' repeat_kv)."""
        per = self.n_heads // self.n_kv_heads
        return [list(range(g * per, (g + 1) * per)) for g in range(self.n_kv_heads)]

    def parameters_estimate(self) -> int:
        """A lower bound on the parameter count from the sizes alone (attention, a 4x feed-forward, embeddings),
        for refusing an enormous config at once; `parameters` is the exact count where it was made."""
        attention = self.d_model * self.head_dim * (2 * self.n_heads + 2 * self.n_kv_heads)
        return self.n_layers * (attention + 2 * self.d_model * 4 * self.d_model) + self.vocab_size * self.d_model


BERT_LAYER_TYPES = (
    "bert",
    "roberta",
)  # families whose layers are BertLayer's layout (tests/tiny_models.py builds both)


def _bert_layer(text) -> bool:
    return (
        text.model_type in BERT_LAYER_TYPES
        and not getattr(text, "is_decoder", False)
        and getattr(text, "position_embedding_type", "absolute") in (None, "absolute")
        and getattr(text, "hidden_act", "gelu") == "gelu"
    )


# Families whose embeddings number positions from padding_idx + 1 (RoBERTa's create_position_ids_from_input_ids):
# a table of P rows then holds P - padding_idx - 1 tokens (RoBERTa: 514 rows, 512 tokens).
POSITIONS_AFTER_PADDING = (
    "roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "roberta-prelayernorm", "data2vec-text", "longformer",
)  # fmt: skip


def _usable_positions(text) -> int | None:
    rows = getattr(text, "max_position_embeddings", None)
    if rows is None or text.model_type not in POSITIONS_AFTER_PADDING:
        return rows
    return rows - (getattr(text, "pad_token_id", None) or 0) - 1


def _text_config(config):
    get = getattr(config, "get_text_config", None)
    return get() if callable(get) else config


def _head_dim(config) -> int:
    """The size of each head's q and k: DeepSeek's latent attention (MLA) joins a part without positions and a
    rotated part (qk_nope_head_dim + qk_rope_head_dim; its config's head_dim names the rotated part alone)."""
    nope, rope = getattr(config, "qk_nope_head_dim", None), getattr(config, "qk_rope_head_dim", None)
    if nope is not None and rope is not None:
        return int(nope) + int(rope)
    return int(getattr(config, "head_dim", None) or int(config.hidden_size) // int(config.num_attention_heads))


def _ffn_dim(config) -> int | None:
    for name in ("intermediate_size", "n_inner", "ffn_dim", "encoder_ffn_dim", "d_ff", "moe_intermediate_size"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _kv_latent_dim(config) -> int | None:
    rank, rotated = getattr(config, "kv_lora_rank", None), getattr(config, "qk_rope_head_dim", None)
    return None if rank is None else int(rank) + int(rotated or 0)


def _rotary_fraction(config, params: dict) -> float:
    """The share of each head's q and k dimensions that RoPE rotates."""
    rotated = getattr(config, "qk_rope_head_dim", None)  # MLA
    if rotated is None and config.model_type in _ROTARY_DIM:
        rotated = getattr(config, "rotary_dim", None)
    if rotated is not None:
        return int(rotated) / _head_dim(config)
    return float(params.get("partial_rotary_factor") or getattr(config, "partial_rotary_factor", None) or 1.0)


def _rope(config) -> Positions:
    params = getattr(config, "rope_parameters", None) or {}
    legacy = getattr(config, "rope_scaling", None) or {}
    theta = params.get("rope_theta", getattr(config, "rope_theta", None))
    if theta is None and config.model_type in _ROTARY_DIM:
        theta = 10000.0
    rope_type = params.get("rope_type") or legacy.get("rope_type") or legacy.get("type") or "default"
    factor = params.get("factor", legacy.get("factor"))
    fraction = _rotary_fraction(config, params)
    return Positions(
        "rope",
        rope_theta=None if theta is None else float(theta),
        rope_scaling=None if rope_type == "default" else rope_type,
        rope_factor=None if factor is None else float(factor),
        rotary_fraction=float(fraction),
        rope_pairs="interleaved" if config.model_type in _INTERLEAVED else "half",
    )


def positions_of(config) -> Positions:
    kind = config.model_type
    if kind in _LEARNED or getattr(config, "position_embedding_type", None) == "absolute":
        return Positions("learned")
    if kind == "distilbert":
        return Positions("sinusoidal" if getattr(config, "sinusoidal_pos_embds", False) else "learned")
    if kind in _SINUSOIDAL:
        return Positions("sinusoidal")
    if kind in _ALIBI or getattr(config, "alibi", False):
        return Positions("alibi")
    if kind in _RELATIVE_BUCKETS:
        return Positions("relative-buckets")
    if (
        getattr(config, "rope_parameters", None)
        or getattr(config, "rope_theta", None) is not None
        or kind in _ROTARY_DIM
    ):
        return _rope(config)
    return Positions("none")


def _sliding_windows(config, n_layers: int) -> tuple[int | None, ...]:
    window = getattr(config, "sliding_window", None)
    types = getattr(config, "layer_types", None)
    if types:
        return tuple(window if t == "sliding_attention" else None for t in types)
    if window is not None and getattr(config, "use_sliding_window", True):
        return (window,) * n_layers
    return (None,) * n_layers


def _kind(config) -> str:
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    if config.model_type in _ENCODERS and not getattr(config, "is_decoder", False):
        return "encoder"
    return "decoder"


def config_file(folder: Path) -> types.SimpleNamespace:
    """A shipped model's config.json as capabilities_of reads a transformers config (its keys as attributes; a key
    the file leaves out is absent), without importing transformers (2 s of a fresh server's first page that shows a
    model's capabilities). Only for a file whose keys are transformers' own names and whose config class fills
    nothing the reader needs: Marian's maps encoder_layers to num_hidden_layers, so the shipped encoder-decoder is
    read by transformers (tests/core/test_config_file.py reads every shipped file both ways)."""
    return types.SimpleNamespace(**json.loads((Path(folder) / "config.json").read_text(encoding="utf-8")))


def capabilities_of(config) -> Capabilities:
    """Read a transformers config (PretrainedConfig) into Capabilities; raises ValueError when it lacks sizes."""
    text = _text_config(config)
    try:
        n_layers = int(text.num_hidden_layers)
        n_heads = int(text.num_attention_heads)
        d_model = int(text.hidden_size)
    except (AttributeError, TypeError) as err:
        raise ValueError(f"the config of '{text.model_type}' names no layer, head or width count ({err})") from err
    n_kv_heads = int(getattr(text, "num_key_value_heads", None) or n_heads)
    if n_layers < 1 or n_heads < 1 or d_model < 1 or n_heads % n_kv_heads:
        raise ValueError(f"inconsistent sizes: {n_layers} layers, {n_heads} heads over {n_kv_heads} key/value heads")
    head_dim = _head_dim(text)
    experts = getattr(text, "num_local_experts", None) or getattr(text, "num_experts", None)
    return Capabilities(
        model_type=text.model_type,
        kind=_kind(config),
        n_layers=n_layers,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=head_dim,
        d_model=d_model,
        positions=positions_of(text),
        max_positions=_usable_positions(text),
        vocab_size=int(getattr(text, "vocab_size", 0) or 0),
        sliding_window=_sliding_windows(text, n_layers),
        attn_softcap=getattr(text, "attn_logit_softcapping", None),
        final_softcap=getattr(text, "final_logit_softcapping", None),
        logit_scale=float(text.logit_scale) if text.model_type in _LOGIT_SCALE else None,
        sinks=text.model_type == "gpt_oss",
        n_experts=None if experts is None else int(experts),
        experts_per_token=getattr(text, "num_experts_per_tok", None),
        bert_layer=_bert_layer(text) and _kind(config) == "encoder",
        value_dim=getattr(text, "v_head_dim", None),
        kv_latent_dim=_kv_latent_dim(text),
        ffn_dim=_ffn_dim(text),
    )


CAPABILITY_FIELDS = ("kind", "layers", "heads", "groups", "head_dim", "positions", "max_positions", "windows",
                     "softcap", "sinks", "experts", "vocabulary")  # fmt: skip


def capability_rows(caps: Capabilities, words: Callable[..., str]) -> list[tuple[str, str]]:
    """(field, value) for the table a page shows: fields are catalog keys (cap_<field>); values numbers and the
    config's own names (rope, linear: the same in every language), put in the reader's words by `words` (key,
    **fmt: the page's catalog section, keys capv_<...>)."""
    pos = caps.positions
    position = pos.kind
    if pos.kind == "rope":
        details = [f"θ = {pos.rope_theta:g}"] if pos.rope_theta else []
        if pos.rope_scaling and pos.rope_factor:
            details.append(f"{pos.rope_scaling} × {pos.rope_factor:g}")
        if pos.rotary_fraction < 1:
            details.append(words("capv_rotary_fraction", share=f"{pos.rotary_fraction:.0%}"))
        if pos.rope_pairs == "interleaved":
            details.append(words("capv_rope_pairs"))
        position += f" ({', '.join(details)})" if details else ""
    windows = sorted({w for w in caps.sliding_window if w is not None})
    sliding = sum(w is not None for w in caps.sliding_window)
    final = "–" if caps.final_softcap is None else f"{caps.final_softcap:g}"
    values = {
        "kind": words(f"capv_kind_{caps.kind}"),
        "layers": str(caps.n_layers),
        "heads": words("capv_heads", q=caps.n_heads, kv=caps.n_kv_heads),
        "groups": " | ".join(",".join(map(str, g)) for g in caps.kv_groups),
        "head_dim": str(caps.head_dim),
        "positions": position,
        "max_positions": "–" if caps.max_positions is None else f"{caps.max_positions:,}",
        "windows": "–"
        if not windows
        else words("capv_windows", n=sliding, layers=caps.n_layers, keys=", ".join(map(str, windows))),
        "softcap": "–"
        if caps.attn_softcap is None
        else words("capv_softcap", cap=f"{caps.attn_softcap:g}", final=final),
        "sinks": words("capv_yes") if caps.sinks else "–",
        "experts": "–" if caps.n_experts is None else words("capv_experts", k=caps.experts_per_token, n=caps.n_experts),
        "vocabulary": f"{caps.vocab_size:,}",
    }
    return [(name, values[name]) for name in CAPABILITY_FIELDS]
