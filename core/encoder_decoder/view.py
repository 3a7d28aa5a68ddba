"""What the /encoder-decoder page draws, ready to draw: one sentence run both ways (free generation and, when the
sentence fits the grammar, teacher forcing), the slice of it one view shows, and the stack's shapes.

The page calls `run_sentence` once per sentence and language (cached by app/models.py), then `step_view` for the
chosen mode, step, layer and head: numpy arrays and labels, no tensors, so the figures do no arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..listing import named_and_counted
from ..pooling import indexed_labels
from . import grammar
from . import model as ed
from .translate import Translation, source_text, translate

MODES = ("free", "forced")
MAX_STEPS = ed.MAX_LENGTH  # decoder positions 0..MAX_STEPS at most: MAX_LENGTH tokens, then </s> when forced
MAX_SOURCE_WORDS = ed.MAX_LENGTH - 1  # the language tag takes one of the encoder's MAX_LENGTH tokens
MAX_NAMED_UNKNOWN = 12  # unknown words the page lists by name; the rest it counts


@dataclass(frozen=True)
class SentenceRun:
    """One sentence translated into one language."""

    sentence: str  # the English text the encoder read (words after the tag, cut to MAX_SOURCE_WORDS)
    language: str
    unknown_words: list[str]  # words outside the vocabulary (read as <unk>)
    truncated: bool  # the sentence had more than MAX_SOURCE_WORDS words
    free: Translation
    forced: Translation | None  # None when the sentence does not fit the grammar (no reference to feed in)
    reference: list[str] | None  # grammar's translation, when the sentence fits
    alignment: list[tuple[int, int]]  # (source position, target position) the grammar knows; [] without reference

    @property
    def named_unknown(self) -> tuple[list[str], int]:
        """The distinct unknown words in reading order, the first MAX_NAMED_UNKNOWN of them when there are more than
        one more, and how many more there are (core.listing's rule)."""
        return named_and_counted(self.unknown_words, MAX_NAMED_UNKNOWN)

    @property
    def agrees(self) -> bool | None:
        """Does free generation write the reference exactly? None without a reference."""
        return None if self.reference is None else self.free.output == self.reference


def run_sentence(model, tokenizer, sentence: str, language: str) -> SentenceRun:
    """Translate `sentence` freely and, when grammar.parse() reads it, with the reference fed in as well."""
    if language not in grammar.LANGUAGES:
        raise ValueError(f"language must be one of {grammar.LANGUAGES}")
    words = sentence.lower().replace(".", " . ").split()
    truncated = len(words) > MAX_SOURCE_WORDS
    words = words[:MAX_SOURCE_WORDS]
    text = " ".join(words)
    meaning, _ = grammar.parse(text)
    forced, reference, alignment = None, None, []
    if meaning is not None:  # both runs read the grammar's sentence (its final full stop added when missing)
        pair = grammar.make_pair(meaning, language)
        text, reference, alignment = " ".join(pair.source[1:]), pair.target, pair.alignment
        forced = translate(model, tokenizer, pair.source_text, reference=pair.target)
    free = translate(model, tokenizer, source_text(text, language))
    return SentenceRun(text, language, free.unknown_words, truncated, free, forced, reference, alignment)


@dataclass(frozen=True)
class StepView:
    """Layer `layer`, head `head` of one translation, up to decoder position `step` (0-based)."""

    mode: str
    layer: int
    head: int
    step: int
    steps: int  # T: decoder positions in this translation
    source_tokens: list[str]  # S labels (the language tag first, </s> last; an unknown word as "word → <unk>")
    input_tokens: list[str]  # decoder inputs 0..T-1 (the start token, then what was written or fed in)
    output_tokens: list[str]  # what each position wrote (free) or was asked for (forced); T
    encoder: np.ndarray  # (S, S) the encoder's self-attention, query x key
    self_attention: np.ndarray  # (step + 1, step + 1) decoder queries 0..step x decoder inputs; NaN above the diagonal
    look_ahead: np.ndarray  # bool (step + 1, step + 1): True where the look-ahead mask hides the key
    cross: np.ndarray  # (step + 1, S) decoder queries 0..step x source tokens (K, V from the encoder's output)
    top: list[tuple[str, float]]  # the next-token candidates at `step`, most likely first
    chosen: str
    chosen_probability: float
    alignment: list[tuple[int, int]]  # (decoder position, source position) pairs the grammar knows, up to step

    # the maps' axes and their CSVs read these: '3 the', unique where a token repeats
    @property
    def source_labels(self) -> list[str]:
        return indexed_labels(self.source_tokens)

    @property
    def input_labels(self) -> list[str]:
        """The decoder inputs 0..step (the masked self-attention's keys)."""
        return indexed_labels(self.input_tokens[: self.step + 1])

    @property
    def query_labels(self) -> list[str]:
        """Decoder position t reads input token t and writes output token t: '2 cat → chat'."""
        return [f"{i} → {o}" for i, o in zip(self.input_labels, self.output_tokens[: self.step + 1])]


def step_view(run: SentenceRun, mode: str, step: int, layer: int, head: int) -> StepView:
    """The slice of `run` one view shows; mode, step, layer and head are clipped to what exists."""
    translation = run.forced if mode == "forced" and run.forced is not None else run.free
    mode = "forced" if translation is run.forced else "free"
    step = min(max(step, 0), len(translation.steps) - 1)
    # Decoder position t writes target word t, so the grammar's (source s, target t) puts a marker on row t.
    alignment = [(t, s) for s, t in run.alignment if t <= step] if mode == "forced" or run.agrees else []
    return translation_view(translation, mode, step, layer, head, _source_labels(run, translation), alignment)


def translation_view(translation: Translation, mode: str, step: int, layer: int, head: int,
                     source_labels: list[str], alignment: list[tuple[int, int]]) -> StepView:  # fmt: skip
    """The slice of one translation (the shipped model's or a learner's, core/encoder_decoder/own.py) that a view
    shows; step, layer and head are clipped to what exists (a layer and head both stacks have)."""
    steps = translation.steps
    n_layers = min(translation.encoder_attention.shape[0], steps[0].cross_attention.shape[0])
    n_heads = min(translation.encoder_attention.shape[1], steps[0].cross_attention.shape[1])
    layer, head = min(max(layer, 0), n_layers - 1), min(max(head, 0), n_heads - 1)
    step = min(max(step, 0), len(steps) - 1)
    size = step + 1
    self_att = np.full((size, size), np.nan, dtype=np.float32)
    for t in range(size):  # row t: what position t's query saw of inputs 0..t (later ones are masked)
        self_att[t, : t + 1] = steps[t].self_attention[layer, head].numpy()
    cross = np.stack([steps[t].cross_attention[layer, head].numpy() for t in range(size)])  # (step + 1, S)
    return StepView(
        mode=mode, layer=layer, head=head, step=step, steps=len(steps), source_tokens=list(source_labels),
        input_tokens=[s.input_token for s in steps], output_tokens=[s.chosen for s in steps],
        encoder=translation.encoder_attention[layer, head].numpy().astype(np.float32), self_attention=self_att,
        look_ahead=np.triu(np.ones((size, size), dtype=bool), k=1), cross=cross.astype(np.float32),
        top=list(steps[step].top), chosen=steps[step].chosen, chosen_probability=steps[step].chosen_probability,
        alignment=sorted(alignment),
    )  # fmt: skip


def _source_labels(run: SentenceRun, translation: Translation) -> list[str]:
    """The encoder's tokens, with the user's own word beside each <unk> (so the maps say which word it was)."""
    tokens = list(translation.source_tokens)
    words = source_text(run.sentence, run.language).split() + [tokens[-1]]
    if len(words) != len(tokens):
        return tokens
    return [w if tok != "<unk>" else f"{w} → <unk>" for w, tok in zip(words, tokens)]


def comparison_rows(run: SentenceRun) -> list[dict]:
    """Free generation beside teacher forcing, position by position: the token written, the reference token, and
    the probability the model gives the reference when the reference is fed in. Empty without a reference."""
    if run.forced is None:
        return []
    rows = []
    for t, forced in enumerate(run.forced.steps):
        free = run.free.steps[t].chosen if t < len(run.free.steps) else ""
        rows.append({"position": t, "free": free, "reference": forced.chosen, "p_reference": forced.chosen_probability,
                     "forced_top": forced.top[0][0], "same": free == forced.chosen})  # fmt: skip
    return rows


@dataclass(frozen=True)
class Block:
    """One box of the stack diagram: a sublayer or a tensor, with its shape."""

    key: str  # the locale key of its name
    side: str  # "encoder", "decoder" or "output"
    kind: str  # "tensor", "self", "masked", "cross", "ffn" (the three attentions get their own colours)
    shape: tuple[int, ...]
    symbols: tuple[str, ...]  # the shape in letters: S source tokens, T decoder positions, d d_model, H heads, V vocab


def stack_blocks(config, source_len: int, target_len: int) -> list[Block]:
    """The encoder and decoder stacks top to bottom with the shapes for S source tokens and T decoder positions
    (H heads of d_k = d_model / H; the attentions' shapes are per layer: H maps)."""
    d, h = config.d_model, config.encoder_attention_heads
    s, t, v = source_len, target_len, config.vocab_size
    rows = [
        ("source", "encoder", "tensor", (s,), ("S",)),
        ("embed_source", "encoder", "tensor", (s, d), ("S", "d")),
        ("enc_self", "encoder", "self", (h, s, s), ("H", "S", "S")),
        ("enc_ffn", "encoder", "ffn", (s, d), ("S", "d")),
        ("memory", "encoder", "tensor", (s, d), ("S", "d")),
        ("target", "decoder", "tensor", (t,), ("T",)),
        ("embed_target", "decoder", "tensor", (t, d), ("T", "d")),
        ("dec_self", "decoder", "masked", (h, t, t), ("H", "T", "T")),
        ("dec_cross", "decoder", "cross", (h, t, s), ("H", "T", "S")),
        ("dec_ffn", "decoder", "ffn", (t, d), ("T", "d")),
        ("logits", "output", "tensor", (t, v), ("T", "V")),
    ]
    return [Block(*row) for row in rows]


@dataclass(frozen=True)
class StackView:
    """The stack part for one sentence: its sizes (S, T, d, H, d_k, V), the diagram's blocks, the attentions' table."""

    source_len: int
    target_len: int
    d_model: int
    heads: int
    d_k: int  # d_model / heads: each head's query, key and value width
    vocab: int
    blocks: list[Block]
    kinds: list[dict]


def stack_view(config, source_len: int, target_len: int) -> StackView:
    h = config.encoder_attention_heads
    return StackView(source_len, target_len, config.d_model, h, config.d_model // h, config.vocab_size,
                     stack_blocks(config, source_len, target_len),
                     attention_kinds(config, source_len, target_len))  # fmt: skip


def english_text(words: list[str]) -> str:
    """'the big cat sees the ball .' -> 'The big cat sees the ball.' (how the page shows a grammar sentence)."""
    text = " ".join(words).replace(" .", ".")
    return text[:1].upper() + text[1:]


def example_sentences(n: int = 8, seed: int = 3) -> list[str]:
    """Held-out English sentences (never trained on), for the page's example picker."""
    return [english_text(p.source[1:]) for p in grammar.generate(n, seed, held_out=True)]


def vocabulary_groups() -> dict[str, list[str]]:
    """The English words the model knows, by kind (the page's vocabulary list)."""
    return {
        "animate": [f"{row[0]}/{row[1]}" for row in grammar.ANIMATE],
        "things": [f"{row[0]}/{row[1]}" for row in grammar.THINGS],
        "places": [row[0] for row in grammar.PLACES],
        "verbs": [f"{row[0]}/{row[1]}/{row[2]}" for row in grammar.TRANSITIVE + grammar.INTRANSITIVE],
        "adjectives": [row[0] for row in grammar.ADJECTIVES],
        "function": ["the", "in", "."],
    }


def attention_kinds(config, source_len: int, target_len: int) -> list[dict]:
    """The three kinds of attention, where their queries, keys and values come from, their mask and shape."""
    h = config.encoder_attention_heads
    return [
        {"kind": "self", "q": "enc_prev", "kv": "enc_prev", "mask": "padding", "shape": (h, source_len, source_len)},
        {
            "kind": "masked",
            "q": "dec_prev",
            "kv": "dec_prev",
            "mask": "look_ahead",
            "shape": (h, target_len, target_len),
        },
        {
            "kind": "cross",
            "q": "dec_self_out",
            "kv": "enc_out",
            "mask": "padding",
            "shape": (h, target_len, source_len),
        },
    ]
