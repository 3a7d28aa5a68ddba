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


DETECTORS = ("previous_token", "duplicate_token", "induction", "first_token", "local_window")


@pytest.mark.parametrize("detector", DETECTORS)
def test_a_detectors_name_reads_in_japanese_as_one_word_with_its_score_in_bold(detector):
    """/head-detectors in Japanese said '直前トークン スコア' (a space no Japanese sentence has), and a bold name
    ending in a bracket ('誘導（induction）') glued to 'スコア' would keep its asterisks."""
    from app import i18n

    name = i18n.text("ja", "head_detectors", f"name_{detector}")
    top = MARKDOWN.render(i18n.text("ja", "head_detectors", "top_heads", detector=name, k=3))
    assert f"<strong>{name}スコア</strong>" in top
    said = [i18n.text("ja", "head_detectors", key, detector=name, best=0.9, uniform=0.1)
            for key in ("finding_strong", "finding_weak")] + [
        i18n.text("ja", "head_detectors.figure", "grid_title", detector=name, uniform=0.1)]  # fmt: skip
    assert all(f"{name} " not in s and f" {name}" not in s for s in said), said


@pytest.mark.parametrize("key", ["decoder_head", "own_reads"])
def test_the_korean_decoder_step_reads_a_token_without_a_particle_choice(key):
    """/encoder-decoder in Korean headed a step '犬을(를) 읽고 は을(를) 씀': a particle chosen for a token that is no
    Korean word. The token now stands after a noun ('읽는 토큰 犬'), with no particle after it."""
    from app import i18n

    said = i18n.text("ko", "encoder_decoder", key, t=2, input="犬", output="は", p=0.5)
    assert "(를)" not in said and "읽는 토큰 犬, 쓰는 토큰 は" in said, said
