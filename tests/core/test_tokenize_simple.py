"""The simple tokenizer used by the masks page: words, per-character CJK, whole emoji, a token cap."""

import pytest

from core.tokenize_simple import simple_tokenize


@pytest.mark.parametrize(
    "text,tokens",
    [
        ("The cat sat.", ["The", "cat", "sat", "."]),
        ("", []),
        ("   \n\t ", []),
        ("<script>alert(1)</script>", ["<", "script", ">", "alert", "(", "1", ")", "<", "/", "script", ">"]),
        ("我爱NLP", ["我", "爱", "NLP"]),
        ("猫はマット。", ["猫", "は", "マ", "ッ", "ト", "。"]),
        ("고양이가 매트 위에 앉았다.", ["고양이가", "매트", "위에", "앉았다", "."]),  # Korean: words split by spaces
        ("naïve café", ["naïve", "café"]),
        ("e\u0301t\u00e9", ["e\u0301t\u00e9"]),  # combining accent stays inside
        ("👍🏽 ok", ["👍🏽", "ok"]),  # skin tone stays on the emoji
        ("👨\u200d👩\u200d👧!", ["👨\u200d👩\u200d👧", "!"]),  # ZWJ family is one token
        ("🇯🇵🇰🇷", ["🇯🇵", "🇰🇷"]),  # flags pair up
        ("1\ufe0f\u20e3", ["1\ufe0f\u20e3"]),  # keycap
        ("a\u200db", ["a", "b"]),  # a stray joiner is dropped
    ],
)
def test_tokens(text, tokens):
    assert simple_tokenize(text).tokens == tokens


def test_no_text_is_lost_except_whitespace_and_format_characters():
    text = "The 🐱 sat on the 🧶 because it was 😴. 👍🏽 猫は座った。 고양이 <b>x</b>"
    joined = "".join(simple_tokenize(text).tokens)
    assert joined == "".join(ch for ch in text if not ch.isspace())


def test_cap_counts_everything_but_keeps_the_first_tokens():
    out = simple_tokenize("word " * 5000, max_tokens=12)
    assert out.tokens == ["word"] * 12 and out.n_total == 5000 and out.truncated
    short = simple_tokenize("a b", max_tokens=12)
    assert not short.truncated and short.n_total == 2
