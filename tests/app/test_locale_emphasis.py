"""Every **bold** in the words renders as bold (CommonMark, which Streamlit's markdown follows: markdown-it-py here).
A closing ** after punctuation binds only before a space or punctuation: the Korean '**φ(Q)·(φ(K)ᵀ·V)**는' showed its
asterisks on /linear-attention, the particle glued to the bracket."""

import re
import tomllib
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

LOCALES = Path(__file__).resolve().parents[2] / "app" / "locales"
MARKDOWN = MarkdownIt("commonmark")


def strings(table: dict, path: str = ""):
    for key, value in table.items():
        if isinstance(value, dict):
            yield from strings(value, f"{path}{key}.")
        elif isinstance(value, str):
            yield f"{path}{key}", value


def unrendered_bold(text: str) -> bool:
    """Whether '**' is left as text once rendered (placeholders stand as a word, code spans left out)."""
    filled = re.sub(r"\{[^{}]*\}", "7", text)
    html = re.sub(r"<code>.*?</code>", "", MARKDOWN.render(filled), flags=re.S)
    return "**" in html


def test_the_check_sees_a_bold_that_does_not_render():
    assert unrendered_bold("**φ(Q)·(φ(K)ᵀ·V)**는 먼저")
    assert not unrendered_bold("**φ(Q)·(φ(K)ᵀ·V)는** 먼저") and not unrendered_bold("**{n:,}**개")


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_every_bold_renders(lang):
    words = tomllib.loads((LOCALES / f"{lang}.toml").read_text(encoding="utf-8"))
    assert [key for key, text in strings(words) if "**" in text and unrendered_bold(text)] == []
