"""Readable labels for tokens.

Byte-level BPE tokenizers (GPT-2, SmolLM2) store each token as bytes spelled with printable stand-ins
("Ġworld" = " world", "Ċ" = newline), and a character outside ASCII can be split over several tokens
("日" = "æĹ" + "¥"). Decoding one token on its own then gives U+FFFD. Here the bytes of a whole run of
tokens are decoded together, and each token is labelled with the characters its bytes belong to:

    " world"    a whole word with its leading space
    "日…"       the first bytes of 日, which continues in the next token
    "…日"       the last bytes of 日, which began in an earlier token
    "<0xE6>"    a byte that is not part of any valid UTF-8 character (e.g. the text was cut mid-character)

Whitespace that would be invisible in an axis label is drawn: newline "↵", tab "⇥", carriage return "␍",
a token of spaces only as "␣" per space; other control characters as "<0x07>", a token of invisible format
characters only (a lone zero-width joiner) as "<U+200D>". Special tokens keep their
own spelling ("<|im_start|>", "[CLS]"). WordPiece and SentencePiece tokens are shown as the tokenizer
spells them ("##ing", "▁the"), which already says where words continue.
"""

from __future__ import annotations

import unicodedata

ELLIPSIS = "…"
VISIBLE = {"\n": "↵", "\t": "⇥", "\r": "␍"}


def _gpt2_byte_decoder() -> dict[str, int]:
    """The inverse of GPT-2's bytes_to_unicode: printable bytes stand for themselves, the other 68 bytes
    (controls, space, ...) are shifted to U+0100 onwards, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    codes, shifted = list(printable), 0
    byte_values = list(printable)
    for b in range(256):
        if b not in printable:
            byte_values.append(b)
            codes.append(256 + shifted)
            shifted += 1
    return {chr(c): b for b, c in zip(byte_values, codes)}


BYTE_DECODER = _gpt2_byte_decoder()


def is_byte_level(tokenizer) -> bool:
    """Does the tokenizer decode with a ByteLevel decoder (possibly inside a decoders.Sequence)?"""
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    return decoder is not None and "ByteLevel" in repr(decoder)


def token_bytes(piece: str) -> bytes:
    """The bytes a byte-level token stands for ("Ġworld" -> b" world"). A token spelled with characters outside
    the byte alphabet (an added token) stands for its own UTF-8."""
    if all(c in BYTE_DECODER for c in piece):
        return bytes(BYTE_DECODER[c] for c in piece)
    return piece.encode("utf-8")


def utf8_spans(data: bytes) -> list[tuple[int, int, str | None]]:
    """(start, end, character) for each UTF-8 character of `data`; character None for a byte that starts no
    valid character (it gets a span of its own)."""
    spans, p = [], 0
    while p < len(data):
        lead = data[p]
        width = (
            1
            if lead < 0x80
            else 2
            if 0xC2 <= lead <= 0xDF
            else 3
            if 0xE0 <= lead <= 0xEF
            else 4
            if 0xF0 <= lead <= 0xF4
            else 0
        )
        try:
            char = data[p : p + width].decode("utf-8") if width else None  # strict: rejects overlong, surrogates
        except UnicodeDecodeError:
            char = None
        if char is None or len(char) != 1:
            spans.append((p, p + 1, None))
            p += 1
        else:
            spans.append((p, p + width, char))
            p += width
    return spans


def visible(label: str) -> str:
    """Whitespace and control characters drawn so that an axis label never comes out blank or broken."""
    if label and not label.strip(" "):
        return "␣" * len(label)
    if label and all(unicodedata.category(c) == "Cf" for c in label):  # e.g. a lone zero-width joiner
        return "".join(f"<U+{ord(c):04X}>" for c in label)
    out = []
    for c in label:
        if c in VISIBLE:
            out.append(VISIBLE[c])
        elif unicodedata.category(c) == "Cc":
            out.append(f"<0x{ord(c):02X}>")
        else:
            out.append(c)
    return "".join(out)


def byte_level_labels(pieces: list[str]) -> list[str]:
    """Labels for a run of ordinary byte-level tokens, decoded together (see the module docstring)."""
    chunks = [token_bytes(p) for p in pieces]
    data = b"".join(chunks)
    spans = utf8_spans(data)
    labels, first, a = [], 0, 0
    for chunk in chunks:
        b = a + len(chunk)
        while first < len(spans) and spans[first][1] <= a:  # characters wholly before this token
            first += 1
        parts, j = [], first
        while j < len(spans) and spans[j][0] < b:
            start, end, char = spans[j]
            if char is None:
                parts.append(f"<0x{data[start]:02X}>")
            else:
                parts.append((ELLIPSIS if start < a else "") + char + (ELLIPSIS if end > b else ""))
            j += 1
        labels.append(visible("".join(parts)))
        a = b
    return labels


def display_tokens(tokenizer, ids: list[int], special: list[bool]) -> list[str]:
    """One readable label per token id (same length as ids). special[i]: keep the token's own spelling."""
    pieces = tokenizer.convert_ids_to_tokens(ids)
    if not is_byte_level(tokenizer):
        return [p if s else visible(p) for p, s in zip(pieces, special)]
    labels: list[str] = list(pieces)
    run: list[int] = []
    for i in range(len(pieces) + 1):
        if i < len(pieces) and not special[i]:
            run.append(i)
            continue
        for j, label in zip(run, byte_level_labels([pieces[j] for j in run])):
            labels[j] = label or pieces[j]
        run = []
    return labels
