"""Tiny random-weight models of many transformers families, saved as a folder a learner could add: the same
path as a user's checkpoint, with no download (tests of core/models/local.py and of the /models page)."""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager

import torch
import transformers
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast

WORDS = "the cat sat on a mat because it was tired and then dog ran far away from home".split()
TEXTS = ["the cat sat on a mat because it was tired and then the dog ran far away from home", "a dog ran"]
SIZES = dict(vocab_size=len(WORDS) + 4, hidden_size=32, intermediate_size=48, num_hidden_layers=3)
SIZES_4 = dict(SIZES, num_attention_heads=4)


def tokenizer(encoder: bool) -> PreTrainedTokenizerFast:
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    if encoder:
        tk.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
        )
        return PreTrainedTokenizerFast(
            tokenizer_object=tk, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]"
        )
    return PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", eos_token="[SEP]", bos_token="[CLS]")


# family -> (config class, model class, config kwargs, what capabilities must say)
FAMILIES = {
    "bert": ("BertConfig", "BertModel", dict(SIZES_4, max_position_embeddings=64), dict(kind="encoder", pos="learned")),
    "roberta": (
        "RobertaConfig",
        "RobertaModel",
        dict(SIZES_4, max_position_embeddings=64, pad_token_id=0),
        dict(kind="encoder", pos="learned"),
    ),
    "gpt2": (
        "GPT2Config",
        "GPT2LMHeadModel",
        dict(vocab_size=len(WORDS) + 4, n_embd=32, n_layer=3, n_head=4, n_positions=64),
        dict(kind="decoder", pos="learned"),
    ),
    "gpt_neox": (
        "GPTNeoXConfig",
        "GPTNeoXForCausalLM",
        dict(SIZES_4, max_position_embeddings=64, rotary_pct=0.5),
        dict(kind="decoder", pos="rope"),
    ),
    "llama": (
        "LlamaConfig",
        "LlamaForCausalLM",
        dict(SIZES, num_attention_heads=6, num_key_value_heads=2, hidden_size=48, max_position_embeddings=64),
        dict(kind="decoder", pos="rope", kv=2),
    ),
    "mistral": (
        "MistralConfig",
        "MistralForCausalLM",
        dict(SIZES_4, num_key_value_heads=2, sliding_window=4, max_position_embeddings=64),
        dict(kind="decoder", pos="rope", kv=2, windows=(4, 4, 4)),
    ),
    "qwen2": (
        "Qwen2Config",
        "Qwen2ForCausalLM",
        dict(SIZES_4, num_key_value_heads=1, max_position_embeddings=64),
        dict(kind="decoder", pos="rope", kv=1),
    ),
    "gemma2": (
        "Gemma2Config",
        "Gemma2ForCausalLM",
        dict(
            SIZES_4,
            num_key_value_heads=2,
            head_dim=8,
            sliding_window=4,
            attn_logit_softcapping=2.0,
            final_logit_softcapping=30.0,
            max_position_embeddings=64,
        ),
        dict(kind="decoder", pos="rope", kv=2, windows=(4, None, 4), softcap=2.0),
    ),
    "phi3": (
        "Phi3Config",
        "Phi3ForCausalLM",
        dict(SIZES_4, num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0),
        dict(kind="decoder", pos="rope", kv=2),
    ),
    "mixtral": (
        "MixtralConfig",
        "MixtralForCausalLM",
        dict(SIZES_4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=64),
        dict(kind="decoder", pos="rope", kv=2, experts=4),
    ),
    "gpt_oss": (
        "GptOssConfig",
        "GptOssForCausalLM",
        dict(
            SIZES_4,
            num_key_value_heads=2,
            head_dim=8,
            num_local_experts=4,
            num_experts_per_tok=2,
            sliding_window=4,
            layer_types=["sliding_attention", "full_attention", "sliding_attention"],
            max_position_embeddings=64,
        ),
        dict(kind="decoder", pos="rope", kv=2, sinks=True, windows=(4, None, 4), experts=4),
    ),
    "gptj": (
        "GPTJConfig",
        "GPTJForCausalLM",
        dict(vocab_size=len(WORDS) + 4, n_embd=32, n_layer=3, n_head=4, n_positions=64, rotary_dim=4),
        dict(kind="decoder", pos="rope", rotary=0.5),
    ),
    "cohere": (
        "CohereConfig",
        "CohereForCausalLM",
        dict(SIZES_4, num_key_value_heads=2, max_position_embeddings=64, logit_scale=0.0625),
        dict(kind="decoder", pos="rope", kv=2),
    ),
    "olmo2": (
        "Olmo2Config",
        "Olmo2ForCausalLM",
        dict(SIZES_4, num_key_value_heads=2, max_position_embeddings=64),
        dict(kind="decoder", pos="rope", kv=2),
    ),
    "deepseek_v3": (
        "DeepseekV3Config",
        "DeepseekV3ForCausalLM",
        dict(
            SIZES_4,
            num_key_value_heads=4,
            max_position_embeddings=64,
            q_lora_rank=None,
            kv_lora_rank=16,
            qk_nope_head_dim=16,
            qk_rope_head_dim=8,
            v_head_dim=8,
            n_routed_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=16,
            n_shared_experts=1,
            first_k_dense_replace=1,
            n_group=1,
            topk_group=1,
        ),
        dict(kind="decoder", pos="rope", head_dim=24, rotary=1 / 3, experts=4),
    ),
    "stablelm": (
        "StableLmConfig",
        "StableLmForCausalLM",
        dict(SIZES_4, num_key_value_heads=2, max_position_embeddings=64, partial_rotary_factor=0.25),
        dict(kind="decoder", pos="rope", kv=2, rotary=0.25),
    ),
    "starcoder2": (
        "Starcoder2Config",
        "Starcoder2ForCausalLM",
        dict(SIZES_4, num_key_value_heads=2, max_position_embeddings=64, sliding_window=None),
        dict(kind="decoder", pos="rope", kv=2),
    ),
    # ALiBi added inside its own attention code (no attention interface): read by hooks of its own
    "bloom": (
        "BloomConfig",
        "BloomForCausalLM",
        dict(vocab_size=len(WORDS) + 4, hidden_size=32, n_layer=3, n_head=4),
        dict(kind="decoder", pos="alibi"),
    ),
    "marian": (
        "MarianConfig",
        "MarianMTModel",
        dict(
            vocab_size=len(WORDS) + 4,
            d_model=32,
            encoder_layers=2,
            decoder_layers=2,
            encoder_attention_heads=4,
            decoder_attention_heads=4,
            encoder_ffn_dim=48,
            decoder_ffn_dim=48,
            max_position_embeddings=64,
            pad_token_id=0,
            decoder_start_token_id=0,
        ),
        dict(kind="encoder-decoder", pos="sinusoidal"),
    ),
}


# families kept out of FAMILIES (whose every member runs every family test), for the tests of one case each
EXTRA_FAMILIES = {
    # RoPE per layer type (sliding and full layers have their own base): no single base to scale
    "gemma3": (
        "Gemma3TextConfig",
        "Gemma3ForCausalLM",
        dict(SIZES_4, num_key_value_heads=2, head_dim=8, sliding_window=4, max_position_embeddings=64),
        dict(kind="decoder", pos="rope", kv=2),
    ),
    # relative position buckets added to the scores inside T5's own attention: the attention contract cannot read
    # it, the seq2seq contract of /encoder-decoder can
    "t5": (
        "T5Config",
        "T5ForConditionalGeneration",
        dict(
            vocab_size=len(WORDS) + 4,
            d_model=32,
            d_kv=8,
            d_ff=48,
            num_layers=2,
            num_decoder_layers=2,
            num_heads=4,
            pad_token_id=0,
            eos_token_id=3,
            decoder_start_token_id=0,
        ),  # fmt: skip
        dict(kind="encoder-decoder", pos="relative-buckets"),
    ),
}


def config_of(family: str, **changes):
    """The tiny `family`'s transformers config (nothing built); `changes` override it."""
    config_name, _, kwargs, _ = FAMILIES.get(family) or EXTRA_FAMILIES[family]
    return getattr(transformers, config_name)(**{**kwargs, **changes})


def longer_positions(family: str, positions: int) -> dict:
    """The config change that gives a tiny family a position table of `positions` rows (Bloom has none: ALiBi)."""
    if family == "bloom":
        return {}
    return {"n_positions": positions} if family in ("gpt2", "gptj") else {"max_position_embeddings": positions}


def build(family: str, folder, **changes) -> None:
    """A tiny random `family` saved in `folder` with its tokenizer; `changes` override the family's config."""
    _, model_name, _, expected = FAMILIES.get(family) or EXTRA_FAMILIES[family]
    torch.manual_seed(0)
    config = config_of(family, **changes)
    model = getattr(transformers, model_name)(config).eval()
    if family == "gpt_oss":  # sinks start at zero: make them matter
        for layer in model.model.layers:
            layer.self_attn.sinks.data.normal_(0, 1)
    if family == "t5":  # T5's initialiser makes a model that writes one token only: spread its weights
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0, 0.1)
    model.save_pretrained(folder)
    encoder = expected["kind"] != "decoder"
    tokenizer(encoder).save_pretrained(folder)


# Encoder-decoders whole, for the seq2seq contract (core/models/seq2seq.py): Marian as FAMILIES has it but with an
# end-of-sequence token of its own (FAMILIES' feeds the encoder path's tests), BART with its own special tokens in
# the same tiny shape, and T5 (EXTRA_FAMILIES: T5 reads only through this contract).
SEQ2SEQ_FAMILIES = {
    "marian": ("MarianConfig", "MarianMTModel", dict(FAMILIES["marian"][2], eos_token_id=3, forced_eos_token_id=None)),
    "bart": (
        "BartConfig",
        "BartForConditionalGeneration",
        dict(FAMILIES["marian"][2], bos_token_id=2, eos_token_id=3, decoder_start_token_id=3, forced_eos_token_id=None),
    ),  # fmt: skip
    "t5": EXTRA_FAMILIES["t5"][:3],
}


def build_seq2seq(family: str, folder) -> None:
    """A tiny random encoder-decoder of SEQ2SEQ_FAMILIES saved in `folder` with its tokenizer (T5 as build makes it)."""
    if family in EXTRA_FAMILIES:  # T5, with its spread weights
        build(family, folder)
        return
    config_name, model_name, kwargs = SEQ2SEQ_FAMILIES[family]
    torch.manual_seed(0)
    model = getattr(transformers, model_name)(getattr(transformers, config_name)(**kwargs)).eval()
    model.save_pretrained(folder)
    tokenizer(True).save_pretrained(folder)


def forget_registrations(before: set) -> None:
    """Undo every registration of a model key not in `before` (the registry's tables are process-wide), the
    whole-model loader of an encoder-decoder folder and any loaded copy included."""
    from core.models import registry

    for key in set(registry.RECORDS) - before:
        registry.unregister(key)


def stand_in(monkeypatch, key: str, load) -> None:
    """A test's loader for `key` (its record's other fields kept; a key nothing registered gets a bare record),
    undone with the monkeypatch."""
    from core.models import registry

    record = registry.RECORDS.get(key)
    new = registry.ModelRecord(key, key, load) if record is None else dataclasses.replace(record, load=load)
    monkeypatch.setitem(registry.RECORDS, key, new)


@contextmanager
def registered_folders(root, families):
    """{family: registry key} of tiny folders root/tiny-<family>, registered as a learner's own; undone afterwards."""
    from core.models import registry

    before = set(registry.RECORDS)
    try:
        keys = {}
        for family in families:
            build(family, root / f"tiny-{family}")
            keys[family] = registry.register_folder(root / f"tiny-{family}")
        yield keys
    finally:
        forget_registrations(before)
