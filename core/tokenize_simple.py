"""A small rule-based tokenizer for the pages that only need *some* tokens (masks, shapes), not a model's.

Rules, in order:
- whitespace separates tokens and is dropped;
- a run of letters, digits and combining marks is one word ("cat", "2024", Hangul "고양이가", "naïve");
- every CJK ideograph and every kana is its own token (Chinese and Japanese do not put spaces between
  words, and a per-character split is the usual simple baseline);
- an emoji stays whole with its modifiers: skin tones, variation selectors, zero-width-joiner sequences
  ("👨‍👩‍👧" is one token), keycaps, tags, and flag pairs of regional indicators;
- any other character (punctuation, symbols, '<', '>') is a token on its own.

The real models' subword tokenizers come from transformers; this one exists so those pages work without a
model and explain themselves in whole words.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

ZWJ = "\u200d"
KEYCAP = "\u20e3"


@dataclass(frozen=True)
class Tokenized:
    tokens: list[str]  # at most max_tokens
    n_total: int  # how many the whole text has

    @property
    def truncated(self) -> bool:
        return self.n_total > len(self.tokens)


def _is_cjk_char(cp: int) -> bool:
    """Ideographs (CJK Unified + extensions + compatibility), hiragana and katakana."""
    return (
        0x3040 <= cp <= 0x30FF
        or 0x31F0 <= cp <= 0x31FF
        or 0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x3134F
        or 0xFF66 <= cp <= 0xFF9F
    )


def _is_emoji_modifier(ch: str) -> bool:
    cp = ord(ch)
    return (
        0x1F3FB <= cp <= 0x1F3FF  # skin tones
        or cp in (0xFE0E, 0xFE0F)  # text / emoji presentation selectors
        or ch == KEYCAP
        or 0xE0020 <= cp <= 0xE007F
    )  # tag characters (subdivision flags)


def _is_regional_indicator(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _is_word_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LNM" and not _is_cjk_char(ord(ch))


def iter_tokens(text: str):
    """Yield the tokens of `text` one by one (so a caller can stop early)."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):  # incl. a stray joiner
            i += 1
            continue
        if _is_word_char(ch) and unicodedata.category(ch)[0] != "M":
            j = i + 1
            while j < n and _is_word_char(text[j]):
                j += 1
            yield text[i:j]
            i = j
            continue
        if _is_regional_indicator(ch):
            j = i + 2 if i + 1 < n and _is_regional_indicator(text[i + 1]) else i + 1
            yield text[i:j]
            i = j
            continue
        # one character (CJK, emoji, punctuation, a stray mark or joiner), plus whatever modifies or joins it
        j = i + 1
        while j < n:
            if _is_emoji_modifier(text[j]) or unicodedata.category(text[j]) == "Mn":
                j += 1
            elif text[j] == ZWJ and j + 1 < n and not text[j + 1].isspace():
                j += 2
            else:
                break
        yield text[i:j]
        i = j


def simple_tokenize(text: str, max_tokens: int | None = None) -> Tokenized:
    """Tokens of `text`, cut to the first `max_tokens` (n_total still counts them all)."""
    tokens, total = [], 0
    for tok in iter_tokens(text):
        if max_tokens is None or total < max_tokens:
            tokens.append(tok)
        total += 1
    return Tokenized(tokens=tokens, n_total=total)
