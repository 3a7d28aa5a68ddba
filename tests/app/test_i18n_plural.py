"""Plural forms: a string whose words change with a number ({n} answer / {n} answers) declares its forms, and
app/i18n.text picks one by the language's rule, so a reader never meets 'answer(s)'."""

import re

import pytest

from app import i18n

ENGLISH = i18n.flat(i18n.catalog("en"))


@pytest.mark.parametrize(
    ("n", "said"),
    [
        (0, "0 answers"),
        (1, "1 answer"),
        (2, "2 answers"),
        ("1", "1 answer"),
        ("1,000", "1,000 answers"),
        (1.0, "1.0 answers"),
    ],
)
def test_english_picks_one_for_exactly_one(n, said):
    assert i18n.text("en", "lessons.figure", "hist_title", n=n) == said


@pytest.mark.parametrize(
    ("tokens", "said"),
    [(0, "0 tokens lost all 2 of their"), (1, "1 token lost all 2 of its"), (2, "2 tokens lost all 2 of their")],
)
def test_a_form_changes_more_than_the_noun(tokens, said):
    assert i18n.text("en", "moe", "m_dropped_help", tokens=tokens, k=2, cap=3).startswith(said + " experts.")


@pytest.mark.parametrize("n", [0, 1, 2])
def test_japanese_and_korean_have_one_form(n):
    assert i18n.text("ja", "lessons.figure", "hist_title", n=n) == f"回答 {n} 件"
    assert i18n.text("ko", "lessons.figure", "hist_title", n=n) == f"답 {n}개"
    assert i18n.text("ko", "kv_cache", "generating", n=n) == f"KV 캐시로 토큰 {n}개를 생성하는 중…"


def test_the_count_is_the_field_the_value_names():
    """continuation_caption counts its prompt tokens, not the generated ones it also names."""
    assert i18n.text("en", "kv_cache", "continuation_caption", prompt=1, n=5).startswith("1 prompt token, then 5")
    assert i18n.text("en", "kv_cache", "continuation_caption", prompt=5, n=1).startswith("5 prompt tokens, then 1")


def test_a_language_lacking_a_plural_key_falls_back_to_english_forms(monkeypatch):
    monkeypatch.setitem(i18n.section("en", "common"), "_probe", {"count": "n", "one": "{n} head", "other": "{n} heads"})
    assert i18n.text("ja", "common", "_probe", n=1) == "1 head"
    assert i18n.text("ko", "common", "_probe", n=3) == "3 heads"
    assert i18n.has("common", "_probe")


def test_a_plural_is_one_key_with_the_fields_of_all_its_forms():
    value = ENGLISH["moe.m_dropped_help"]
    assert i18n.is_plural(value) and i18n.format_fields(value) == {"tokens", "k", "cap"}
    assert not i18n.is_plural(i18n.section("en", "moe"))  # a section is never taken for a plural


def test_every_plural_counts_a_field_it_shows():
    for lang in i18n.languages():
        for key, value in i18n.flat(i18n.catalog(lang)).items():
            if i18n.is_plural(value):
                assert all(value["count"] in i18n.format_fields(f) for f in i18n.forms(value)), (lang, key)


def test_no_english_string_says_s_in_brackets():
    """'token(s)' reads as a form left unfilled; '(s)' after a space is the unit seconds and stays."""
    left = [k for k, v in ENGLISH.items() for f in i18n.forms(v) if re.search(r"\w\(s\)", f)]
    assert not left, left


def test_a_lessons_words_take_the_rule_of_the_language_they_are_written_in():
    """Lessons (core.lessons.fill) choose by the same rules (core.grammar) as the catalogs, with the plural rule the
    catalog of the text's language names: an English stand-in on a Japanese page still says '1 head'."""
    from app.views.lessons.text import filled
    from core import grammar, lessons

    heads = {"count": "heads", "one": "{heads} head", "other": "{heads} heads"}
    one, two = (lessons.Answer("number", 0.5, (), 0.0, {"heads": n}) for n in (1, 2))
    assert filled(lessons.Shown(heads, "en", "en"), one) == "1 head"
    assert filled(lessons.Shown(heads, "en", "ja"), one) == "1 head"
    assert filled(lessons.Shown(heads, "en", "en"), two) == "2 heads"
    assert filled(lessons.Shown("{heads}을(를) 빼면", "ko", "ko"), one) == "1을 빼면"
    assert i18n.plural_form is grammar.plural_form and i18n.particle is grammar.particle  # one copy of the rules
