"""The repo's own small Mixture-of-Experts language model, behind the model contract.

A `MixtralForCausalLM` (transformers' own class) with 4 layers, 4 query heads sharing 2 key/value heads, RoPE,
width 128 and 8 SwiGLU experts per layer, top-2. It is trained by scripts/train_moe.py on the labelled simple
English of core/moe/data.py, in two variants shipped under data/moe/<variant>/:

- "balanced": trained with Switch Transformer's load-balancing loss;
- "collapsed": the same run without it, so the router is free to over-use a few experts.

Through `HFAttentionModel` its causal attention shows on the same pages as the pretrained models, and each
run also returns the router logits of every layer (Trace.router_logits).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F

from ..moe import data as moe_data
from ..moe.balance import expert_load, switch_balance_loss
from ..moe.layer import route_tokens
from ..moe.specialisation import category_counts
from .base import ModelUnavailable, Reason
from .capabilities import config_file
from .hf import HFAttentionModel

MOE_DIR = Path(__file__).resolve().parents[2] / "data" / "moe"
VARIANTS = ("balanced", "collapsed")
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[BOS]")  # ids 0, 1, 2
PAD_ID, UNK_ID, BOS_ID = 0, 1, 2
MAX_POSITIONS = 128

# The architecture (the training script can override sizes; these are what ships).
ARCHITECTURE = dict(
    hidden_size=128,
    intermediate_size=128,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=2,
    num_local_experts=8,
    num_experts_per_tok=2,
)


def vocabulary() -> list[str]:
    """Token strings by id: the special tokens, then every word the generator can produce."""
    return list(SPECIAL_TOKENS) + moe_data.vocabulary()


def build_tokenizer():
    """A word-level tokenizer over the generator's vocabulary (lower-cased; punctuation split off; any
    other word becomes [UNK]; [BOS] prepended), wrapped so `AutoTokenizer` loads it offline."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(vocabulary())}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    # Whitespace splits words from runs of symbols; Punctuation then isolates each mark ("?!" -> "?", "!").
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Punctuation("isolated")])
    tok.post_processor = processors.TemplateProcessing(single="[BOS] $A", special_tokens=[("[BOS]", BOS_ID)])
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces; no subword pieces here
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="[BOS]",
        unk_token="[UNK]",
        pad_token="[PAD]",
        model_max_length=MAX_POSITIONS,
        padding_side="right",
    )


def build_config(**overrides):
    from transformers import MixtralConfig

    arch = {**ARCHITECTURE, **overrides}
    return MixtralConfig(
        vocab_size=len(vocabulary()),
        head_dim=arch["hidden_size"] // arch["num_attention_heads"],
        max_position_embeddings=MAX_POSITIONS,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        tie_word_embeddings=True,
        pad_token_id=PAD_ID,
        bos_token_id=BOS_ID,
        eos_token_id=None,
        sliding_window=None,
        router_jitter_noise=0.0,
        attention_dropout=0.0,
        output_router_logits=False,
        **arch,
    )


def new_model(seed: int, **overrides):
    """A freshly initialised (random) model, the same for the same seed."""
    from transformers import MixtralForCausalLM

    torch.manual_seed(seed)
    config = build_config(**overrides)
    config._experts_implementation = "eager"  # the plain loop over experts: fast enough on CPU, no kernels
    return MixtralForCausalLM(config)


def token_categories(ids: torch.Tensor) -> torch.Tensor:
    """Category index (into category_names()) of each token id: a word's category from the generator's
    lexicon, "unknown" for [UNK], "special" for [BOS]/[PAD]."""
    names = category_names()
    table = torch.tensor([names.index(_category_of_token(w)) for w in vocabulary()])
    return table[ids]


def category_names() -> list[str]:
    return list(moe_data.CATEGORIES) + [moe_data.UNKNOWN, moe_data.SPECIAL]


def _category_of_token(token: str) -> str:
    if token == "[UNK]":
        return moe_data.UNKNOWN
    if token in SPECIAL_TOKENS:
        return moe_data.SPECIAL
    return moe_data.LEXICON[token]


def parameter_counts(model) -> tuple[int, int]:
    """(total, active per token) parameters of a Mixtral model: a token skips the E - k experts it did not
    choose in every layer. Embeddings tied to the output layer are counted once."""
    cfg = model.config
    total = sum(p.numel() for p in model.parameters())  # parameters() yields a tied tensor once
    experts = model.model.layers[0].mlp.experts
    per_expert = experts.gate_up_proj[0].numel() + experts.down_proj[0].numel()
    skipped = cfg.num_hidden_layers * (cfg.num_local_experts - cfg.num_experts_per_tok) * per_expert
    return total, total - skipped


class MoEModel(HFAttentionModel):
    """HFAttentionModel that also asks the model for its router logits on every run."""

    def __init__(self, model, tokenizer, variant: str, report: dict):
        balanced = "moe_balanced" if report.get("aux_coef", 0) > 0 else "moe_unbalanced"
        super().__init__(
            model,
            tokenizer,
            name=f"tiny-moe-{variant}",
            position_kind="rope",
            is_causal=True,
            weights=(balanced, {"seed": report.get("seed"), "steps": report.get("steps")}),
        )
        self.variant = variant
        self.report = report
        self.n_experts = model.config.num_local_experts
        self.top_k = model.config.num_experts_per_tok

    def _run_kwargs(self) -> dict:
        return {**super()._run_kwargs(), "output_router_logits": True}

    def moe_block(self, layer: int):
        return self.model.model.layers[layer].mlp

    def parameter_counts(self) -> tuple[int, int]:
        """(total, active per token) parameters of this checkpoint (module-level parameter_counts)."""
        return parameter_counts(self.model)

    @torch.no_grad()
    def evaluate(self, input_ids: torch.Tensor) -> dict:
        """Held-out loss and per-layer expert load, Switch loss and category counts on a batch of ids (B, n): the
        training script's own evaluation (module-level `evaluate`, which core/moe/training.py uses too)."""
        return evaluate(self.model, input_ids)

    def expert_weights(self, layer: int) -> dict[str, torch.Tensor]:
        """The tensors core.moe.moe_forward takes, read from the Mixtral block of `layer`."""
        block = self.moe_block(layer)
        return {
            "router_weight": block.gate.weight.detach(),
            "gate_up_proj": block.experts.gate_up_proj.detach(),
            "down_proj": block.experts.down_proj.detach(),
        }


def variant_dir(variant: str) -> Path:
    if variant not in VARIANTS:
        raise ValueError(f"unknown MoE variant {variant!r}; expected one of {VARIANTS}")
    return MOE_DIR / variant


def load_report(variant: str) -> dict:
    return json.loads((variant_dir(variant) / "report.json").read_text(encoding="utf-8"))


def config(variant: str = "balanced"):
    """The shipped checkpoint's config (its config.json, read as JSON: capabilities.config_file; no weights read)."""
    reason = status(variant)
    if reason:
        raise ModelUnavailable(reason)
    return config_file(variant_dir(variant))


def load_moe(variant: str = "balanced") -> MoEModel:
    """The shipped checkpoint, loaded offline from data/moe/<variant>/ (float16 on disk, float32 in memory)."""
    from transformers import AutoTokenizer, MixtralForCausalLM

    reason = status(variant)
    if reason:
        raise ModelUnavailable(reason)
    path = variant_dir(variant)
    model = MixtralForCausalLM.from_pretrained(
        path, dtype=torch.float32, experts_implementation="eager", local_files_only=True
    )
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    return MoEModel(model, tokenizer, variant, load_report(variant))


def status(variant: str = "balanced") -> str | None:
    """None when the shipped checkpoint of `variant` is there (it is committed), else how to make it."""
    if (variant_dir(variant) / "model.safetensors").exists():
        return None
    command, folder = "python scripts/train_moe.py", f"data/moe/{variant}"
    return Reason(f"no trained MoE checkpoint in {folder}: run `{command}`", "unavailable_moe_untrained",
                  folder=folder, command=command)  # fmt: skip


def lm_loss(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting token t+1 from tokens <= t (nats per token)."""
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(), input_ids[:, 1:].reshape(-1))


@torch.no_grad()
def evaluate(model, input_ids: torch.Tensor) -> dict:
    """Held-out cross-entropy, and per layer: expert load (share of assignments), Switch loss and the
    category counts per expert (which kinds of word each expert is chosen for)."""

    model.eval()
    out = model(input_ids=input_ids, output_router_logits=True, use_cache=False)
    top_k = model.config.num_experts_per_tok
    n_experts = model.config.num_local_experts
    cats = token_categories(input_ids).reshape(-1)
    layers = []
    for logits in out.router_logits:
        r = route_tokens(logits, top_k)
        layers.append(
            {
                "expert_load": [round(v, 6) for v in expert_load(r.top_k_index, n_experts).tolist()],
                "switch_loss": round(float(switch_balance_loss(r.probs, r.top_k_index)), 6),
                "category_counts": category_counts(r.top_k_index, cats, n_experts, len(category_names()))
                .int()
                .tolist(),
            }
        )
    return {
        "held_out_loss": float(lm_loss(out.logits, input_ids)),
        "layers": layers,
        "held_out_tokens": int(input_ids.numel()),
    }
