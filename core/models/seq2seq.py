"""An encoder-decoder behind a small declared contract: the only place where the /encoder-decoder page's MarianMT
(trained by scripts/train_encoder_decoder.py, weights in data/encoder_decoder) and the word-level tokenizer it
shares with the GRU of /rnn-attention meet transformers.

    tok = word_tokenizer(vocabulary, max_length)  WordTokenizer: words <-> ids, and the one batch builder
    model = build(vocabulary, shape, max_length)  a fresh, randomly initialised MarianMTModel, as a Seq2Seq
    model = load(folder), model.save(folder)      float32 in memory, float16 on disk (the tokenizer beside it)
    model.config                                  Seq2SeqConfig: the plain numbers the pages print
    enc = model.encode(source_ids)                encoder self-attention (L, H, S, S), the memory kept inside
    out = model.decode(enc, decoder_ids)          teacher forcing: probs (T, V), self (L, H, T, T), cross (L, H, T, S)
    out, cache = model.step(enc, token, cache)    one token on the KV cache: probs (V,), self (L, H, t+1), cross (L, H, S)
    steps = model.greedy(enc, max_steps)          greedy generation on the KV cache: [(input token, step)], until eos
    model.loss(batch)                             mean cross-entropy over the labels (-100 ignored), for training

Any transformers AutoModelForSeq2SeqLM (Marian, BART, T5, ...) goes through the same contract: `pretrained(model,
tokenizer)` wraps one with its own tokenizer (TextTokenizer: source text -> ids with the tokenizer's own special
tokens); core/models/local.py's load_seq2seq loads a learner's folder that way.

L layers (encoder and decoder alike), H heads, S source tokens, T decoder positions, V vocabulary. Attention is
transformers' eager implementation (every weight readable); the weights returned are exactly what it computes.
"""

from __future__ import annotations

import copy
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from .base import Reason
from .hf import cache_keyword

# A fast tokenizer keeps its padding settings in shared state that every call resets: one lock for every call, so
# two visitors of one server never tokenize at once (as core/models/hf.py does for the pretrained models).
_TOKENIZER_LOCK = threading.RLock()
PAD, EOS, UNK = "<pad>", "</s>", "<unk>"


@dataclass(frozen=True)
class Shape:
    d_model: int = 128
    layers: int = 2  # encoder and decoder each
    heads: int = 4
    ffn: int = 256


@dataclass(frozen=True)
class Seq2SeqConfig:
    """What the pages and reports read of the model (transformers' MarianConfig names, plain numbers)."""

    d_model: int
    encoder_layers: int
    decoder_layers: int
    encoder_attention_heads: int
    decoder_attention_heads: int
    vocab_size: int
    pad_token_id: int | None
    eos_token_id: int | None
    decoder_start_token_id: int | None
    max_positions: int | None = None  # a learned or sinusoidal table's length (None: no limit, T5's buckets)


@dataclass(frozen=True)
class Encoded:
    """The encoder's pass over one source sentence (batch of 1)."""

    source_ids: torch.Tensor  # (1, S)
    attention: torch.Tensor  # (L, H, S, S) encoder self-attention
    _output: object  # transformers' encoder output: the decoder's memory (K, V of cross-attention)


@dataclass(frozen=True)
class Decoded:
    """Decoder positions with their next-token probabilities and attentions (batch item 0)."""

    probs: torch.Tensor  # (T, V), or (V,) for one step
    self_attention: torch.Tensor  # (L, H, T, T), or (L, H, t + 1) for one step: the newest query's row
    cross_attention: torch.Tensor  # (L, H, T, S), or (L, H, S) for one step


class WordTokenizer:
    """One word, one token (split on whitespace; anything outside the vocabulary is <unk>). transformers'
    attribute names where they exist, so the code reads as it did with a transformers tokenizer."""

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer  # transformers' PreTrainedTokenizerFast
        self.pad_token_id: int = tokenizer.pad_token_id
        self.eos_token_id: int = tokenizer.eos_token_id

    def __len__(self) -> int:
        return len(self._tokenizer)

    def batch(self, texts: list[str], max_length: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(ids, mask), each (B, n): the texts right-padded with <pad> to the longest, cut to max_length tokens
        when given (none added: no </s>)."""
        cut = {"truncation": True, "max_length": max_length} if max_length else {}
        with _TOKENIZER_LOCK:
            out = self._tokenizer(list(texts), padding=True, return_tensors="pt", **cut)
        return out["input_ids"], out["attention_mask"]

    def get_vocab(self) -> dict[str, int]:
        return self._tokenizer.get_vocab()

    def convert_ids_to_tokens(self, ids):
        """One id -> its word; a list (or 1-D tensor) of ids -> the list of words."""
        return self._tokenizer.convert_ids_to_tokens(ids)

    def convert_tokens_to_ids(self, tokens):
        return self._tokenizer.convert_tokens_to_ids(tokens)

    def save(self, folder: Path) -> None:
        """tokenizer.json and its config, loadable by transformers' PreTrainedTokenizerFast (and load())."""
        self._tokenizer.save_pretrained(folder)


class TextTokenizer:
    """A learner's encoder-decoder's own tokenizer (transformers' AutoTokenizer of its folder): source text -> ids
    with the tokenizer's own special tokens (T5's </s>, BART's <s> ... </s>, Marian's </s>), ids -> token strings."""

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer

    def source(self, text: str, max_length: int) -> tuple[torch.Tensor, list[str], bool]:
        """(ids (1, S), their tokens, whether the text was cut to max_length tokens, special tokens included)."""
        with _TOKENIZER_LOCK:
            whole = self._tokenizer(text, add_special_tokens=True)["input_ids"]
            cut = len(whole) > max_length
            if cut:
                whole = self._tokenizer(text, add_special_tokens=True, truncation=True, max_length=max_length)[
                    "input_ids"
                ]
        ids = torch.tensor([whole], dtype=torch.long)
        return ids, self.convert_ids_to_tokens(whole), cut

    def convert_ids_to_tokens(self, ids):
        """One id -> its token; a list of ids -> the list of tokens (an id past the tokenizer's vocabulary, which a
        model's padded output layer can write, as "<id 123>")."""
        if isinstance(ids, int):
            return self.convert_ids_to_tokens([ids])[0]
        ids = [int(i) for i in ids]
        with _TOKENIZER_LOCK:
            tokens = self._tokenizer.convert_ids_to_tokens(ids)
        return [f"<id {i}>" if t is None else str(t) for i, t in zip(ids, tokens)]


def pretrained(model, tokenizer) -> tuple[Seq2Seq, TextTokenizer]:
    """Any transformers AutoModelForSeq2SeqLM (loaded with eager attention, so every weight is readable) and its
    own tokenizer, through the contract; eval mode."""
    if not getattr(model.config, "is_encoder_decoder", False):
        raise ValueError(f"a {model.config.model_type} model is not an encoder-decoder")
    if getattr(model.config, "_attn_implementation", "eager") != "eager":
        model.set_attn_implementation("eager")
    return Seq2Seq(model.eval()), TextTokenizer(tokenizer)


def word_tokenizer(vocabulary: list[str], max_length: int) -> WordTokenizer:
    """A word-level tokenizer whose ids are the vocabulary's order (<pad>, </s>, <unk> among it)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(vocabulary)}
    core = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return WordTokenizer(
        PreTrainedTokenizerFast(
            tokenizer_object=core, pad_token=PAD, eos_token=EOS, unk_token=UNK, model_max_length=max_length
        )
    )


def marian_config(vocabulary: list[str], shape: Shape, max_length: int):
    """transformers' MarianConfig of the shipped architecture: encoder and decoder stacks, sinusoidal positions,
    shared and tied embeddings, no dropout; <pad> starts the decoder."""
    from transformers import MarianConfig

    vocab = list(vocabulary)
    return MarianConfig(
        vocab_size=len(vocab), d_model=shape.d_model, encoder_layers=shape.layers, decoder_layers=shape.layers,
        encoder_attention_heads=shape.heads, decoder_attention_heads=shape.heads, encoder_ffn_dim=shape.ffn,
        decoder_ffn_dim=shape.ffn, max_position_embeddings=max_length + 8, pad_token_id=vocab.index(PAD),
        eos_token_id=vocab.index(EOS), decoder_start_token_id=vocab.index(PAD),
        forced_eos_token_id=vocab.index(EOS), dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        scale_embedding=True, share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
    )  # fmt: skip


def _first(config, *names):
    """The first of these config attributes that is set (families name the same size differently: Marian's and
    BART's encoder_layers, T5's num_layers)."""
    for name in names:
        value = getattr(config, name, None)
        if value is not None:
            return value
    raise ValueError(f"the config of '{config.model_type}' names none of {', '.join(names)}")


def _token_id(*values) -> int | None:
    """The first token id given (a list of ids, as some configs hold for eos, gives its first)."""
    for value in values:
        if isinstance(value, (list, tuple)):
            value = value[0] if value else None
        if value is not None:
            return int(value)
    return None


def seq2seq_config(config, generation=None) -> Seq2SeqConfig:
    """Seq2SeqConfig of any transformers encoder-decoder config (generation: its GenerationConfig, where
    transformers keeps the decoder's start token when the config does not)."""
    c, g = config, generation
    eos = _token_id(getattr(c, "eos_token_id", None), getattr(g, "eos_token_id", None))
    pad = _token_id(getattr(c, "pad_token_id", None), getattr(g, "pad_token_id", None))
    return Seq2SeqConfig(
        d_model=int(_first(c, "d_model", "hidden_size")),
        encoder_layers=int(_first(c, "encoder_layers", "num_layers", "num_hidden_layers")),
        decoder_layers=int(_first(c, "decoder_layers", "num_decoder_layers", "num_layers", "num_hidden_layers")),
        encoder_attention_heads=int(_first(c, "encoder_attention_heads", "num_heads", "num_attention_heads")),
        decoder_attention_heads=int(_first(c, "decoder_attention_heads", "num_heads", "num_attention_heads")),
        vocab_size=int(c.vocab_size), pad_token_id=pad, eos_token_id=eos,
        decoder_start_token_id=_token_id(getattr(c, "decoder_start_token_id", None),
                                         getattr(g, "decoder_start_token_id", None), pad),
        max_positions=getattr(c, "max_position_embeddings", None),
    )  # fmt: skip


class EncoderDecoderModel(ABC):
    """The encoder-decoder contract, beside core/models/base.py's AttentionModel and grouped by role the same way:
    what the /encoder-decoder page and its lessons ask of a model (the module docstring's table).
    tests/core/test_model_contract.py checks Seq2Seq's signatures against it."""

    config: Seq2SeqConfig

    # --- passes -------------------------------------------------------------------------------------------------

    @abstractmethod
    def encode(self, source_ids: torch.Tensor) -> Encoded:
        """The encoder's pass over source_ids (1, S), ending in </s>: its self-attention and its memory."""

    @abstractmethod
    def decode(self, encoded: Encoded, decoder_ids: torch.Tensor) -> Decoded:
        """Every decoder position at once (teacher forcing) under the look-ahead mask; decoder_ids (1, T)."""

    # --- generation ---------------------------------------------------------------------------------------------

    @abstractmethod
    def step(self, encoded: Encoded, token: int, cache: object | None = None) -> tuple[Decoded, object]:
        """One token on top of the KV cache (None: the first step): the step, and the cache for the next one."""

    @abstractmethod
    def greedy(self, encoded: Encoded, max_steps: int, eos: int | None = None) -> list[tuple[int, Decoded]]:
        """Greedy generation on the KV cache: [(input token, step)] until a step chooses eos or max_steps."""

    # --- weights and training -----------------------------------------------------------------------------------

    @abstractmethod
    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean cross-entropy over the labels (-100 ignored)."""

    @abstractmethod
    def parameters(self) -> Iterator[torch.nn.Parameter]:
        """The weights, for an optimiser."""

    @abstractmethod
    def train(self, mode: bool = True) -> EncoderDecoderModel:
        """Training (dropout on) or evaluation mode; returns the model."""

    @abstractmethod
    def eval(self) -> EncoderDecoderModel:
        """Evaluation mode; returns the model."""

    @abstractmethod
    def save(self, folder: Path) -> None:
        """The weights (float16 on disk) and config into `folder`."""


class Seq2Seq(EncoderDecoderModel):
    """A transformers encoder-decoder (AutoModelForSeq2SeqLM: the shipped MarianMTModel, or a learner's Marian,
    BART, T5, ...) with eager attention, seen through the contract above."""

    def __init__(self, model):
        self._model = model
        self._cache_keyword = cache_keyword()  # core/models/hf.py reads it once, for every model
        self.config = seq2seq_config(model.config, getattr(model, "generation_config", None))

    # --- looking inside ---------------------------------------------------------------------------------------

    @torch.no_grad()
    def encode(self, source_ids: torch.Tensor) -> Encoded:
        """source_ids (1, S), ending in </s>."""
        out = self._model.get_encoder()(input_ids=source_ids, output_attentions=True)
        return Encoded(source_ids, torch.stack([a[0] for a in out.attentions]), out)  # (L, H, S, S)

    @torch.no_grad()
    def decode(self, encoded: Encoded, decoder_ids: torch.Tensor) -> Decoded:
        """Every decoder position at once (teacher forcing) under the look-ahead mask; decoder_ids (1, T)."""
        out = self._model(
            encoder_outputs=encoded._output,
            attention_mask=torch.ones_like(encoded.source_ids),
            decoder_input_ids=decoder_ids,
            output_attentions=True,
        )
        self_att = torch.stack([a[0] for a in out.decoder_attentions])  # (L, H, T, T)
        cross_att = torch.stack([a[0] for a in out.cross_attentions])  # (L, H, T, S)
        return Decoded(torch.softmax(out.logits[0].float(), -1), self_att, cross_att)  # probs (T, V)

    @torch.no_grad()
    def step(self, encoded: Encoded, token: int, cache: object | None = None) -> tuple[Decoded, object]:
        """Feed one token on top of the KV cache (None: the first step). The cache holds the decoder's earlier keys
        and values and cross-attention's K, V of the encoder output (computed once), so this step's attentions are
        exactly the newest query's row. Returns the step and the cache for the next one."""
        out = self._model(
            encoder_outputs=encoded._output,
            attention_mask=torch.ones_like(encoded.source_ids),
            decoder_input_ids=torch.tensor([[token]]),
            use_cache=True,
            output_attentions=True,
            **{self._cache_keyword: cache},
        )
        probs = torch.softmax(out.logits[0, -1].float(), -1)  # (V,)
        self_att = torch.stack([a[0, :, -1] for a in out.decoder_attentions])  # (L, H, t + 1)
        cross_att = torch.stack([a[0, :, -1] for a in out.cross_attentions])  # (L, H, S)
        return Decoded(probs, self_att, cross_att), getattr(out, self._cache_keyword)

    @torch.no_grad()
    def greedy(self, encoded: Encoded, max_steps: int, eos: int | None = None) -> list[tuple[int, Decoded]]:
        """Greedy generation from the decoder's start token, one step at a time on the KV cache: each step feeds the
        token the previous one chose (its most likely), until a step chooses eos (default: the config's; that step
        is kept) or max_steps. Returns [(input token, step)]; the tokens written are each step's probs.argmax()."""
        eos = self.config.eos_token_id if eos is None else eos
        token, cache, steps = self.config.decoder_start_token_id, None, []
        for _ in range(max_steps):
            out, cache = self.step(encoded, token, cache)
            steps.append((token, out))
            token = int(out.probs.argmax())
            if token == eos:
                break
        return steps

    # --- training ---------------------------------------------------------------------------------------------

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """batch: input_ids and attention_mask (B, S), labels (B, T) with -100 on padding; the decoder reads the
        labels shifted right after the start token (transformers' Marian does the shift)."""
        return self._model(**batch).loss

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        return self._model.parameters()

    def train(self, mode: bool = True) -> EncoderDecoderModel:
        self._model.train(mode)
        return self

    def eval(self) -> EncoderDecoderModel:
        return self.train(False)

    def save(self, folder: Path) -> None:
        """model.safetensors in float16 (half the bytes; loaded back as float32), config.json and
        generation_config.json. The model in memory stays float32."""
        copy.deepcopy(self._model).half().save_pretrained(folder, safe_serialization=True)


def build(vocabulary: list[str], shape: Shape, max_length: int) -> Seq2Seq:
    """A fresh MarianMTModel of this shape, initialised from torch's global generator (seed it first)."""
    from transformers import MarianMTModel

    config = marian_config(vocabulary, shape, max_length)
    config._attn_implementation = "eager"  # attention weights readable (the report translates with them)
    return Seq2Seq(MarianMTModel(config))


def config(folder: Path):
    """transformers' config of a saved encoder-decoder folder, no weights read (the registry's capabilities)."""
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(folder, local_files_only=True)


# the encoder-decoder this repo trains (scripts/train_encoder_decoder.py; its page: core/encoder_decoder/)
SHIPPED_FOLDER = Path(__file__).resolve().parents[2] / "data" / "encoder_decoder"


def shipped_status(folder: Path | None = None) -> str | None:
    """None when the shipped weights are there, else why not (with the command that makes them)."""
    folder = folder or SHIPPED_FOLDER
    if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
        command = "python scripts/train_encoder_decoder.py"
        said = f"no trained encoder-decoder at {folder}; make it with: {command}"
        return Reason(said, "unavailable_encoder_decoder_untrained", folder=str(folder), command=command)
    return None


def load(folder: Path) -> tuple[Seq2Seq, WordTokenizer]:
    """(model, tokenizer) from a folder that save() and WordTokenizer.save() wrote: float32 on the CPU, eval mode."""
    from transformers import MarianMTModel, PreTrainedTokenizerFast

    model = MarianMTModel.from_pretrained(
        folder, local_files_only=True, dtype=torch.float32, attn_implementation="eager"
    ).eval()  # eager: the pages read every attention weight
    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder, local_files_only=True)
    return Seq2Seq(model), WordTokenizer(tokenizer)
