"""The word catalogs (app/locales/*.toml): every language has every key, with the same format fields, and no
translation table is left in code."""

import ast
from pathlib import Path

import pytest

from app import catalog, i18n

ROOT = Path(__file__).resolve().parents[2]
ENGLISH = i18n.flat(i18n.catalog("en"))
OTHERS = [code for code in i18n.languages() if code != "en"]


def test_there_are_three_languages_at_least():
    assert {"en", "ja", "ko"} <= set(i18n.languages())
    assert i18n.languages()["ja"] == "日本語"


@pytest.mark.parametrize("lang", OTHERS)
def test_every_key_exists_in_every_language(lang):
    theirs = i18n.flat(i18n.catalog(lang))
    assert set(theirs) == set(ENGLISH), set(ENGLISH) ^ set(theirs)
    empty = [k for k, v in theirs.items() if not str(v).strip()]
    assert not empty, empty


@pytest.mark.parametrize("lang", OTHERS)
def test_every_translation_fills_the_same_format_fields(lang):
    """A translation that drops or renames a {placeholder} would hide a number or crash the page in that language."""
    theirs = i18n.flat(i18n.catalog(lang))
    bad = {
        k: (i18n.format_fields(v), i18n.format_fields(theirs[k]))
        for k, v in ENGLISH.items()
        if k in theirs and i18n.format_fields(v) != i18n.format_fields(theirs[k])
    }
    assert not bad, bad


def test_every_page_has_a_title_and_what_it_teaches():
    for page in catalog.PAGES:
        assert i18n.has(f"nav.{page.topic}", "title") and i18n.has(f"nav.{page.topic}", "teaches"), page.topic
    for section in catalog.SECTIONS:
        assert i18n.has("sections", section), section


def test_a_format_field_may_be_called_key_or_text():
    """Section and key are positional-only (a string may use {key} or {text} as a field)."""
    s = i18n.section("en", "common")
    s["_probe"] = "head {key} of {text}"
    try:
        assert i18n.text("en", "common", "_probe", key="3.7", text="it") == "head 3.7 of it"
    finally:
        del s["_probe"]


def test_a_missing_translation_falls_back_to_english():
    s = i18n.section("en", "common")
    s["_only_en"] = "English only"
    try:
        assert i18n.text("ja", "common", "_only_en") == "English only"
    finally:
        del s["_only_en"]


def _language_tables(path: Path) -> list[int]:
    """Lines of dict literals keyed by language codes ({"en": ..., "ja": ...}) in a module."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if {"en", "ja"} <= keys:
                lines.append(node.lineno)
    return lines


def test_no_translation_table_is_left_in_code():
    found = {
        str(p.relative_to(ROOT)): _language_tables(p)
        for folder in ("app", "viz", "core")
        for p in sorted((ROOT / folder).rglob("*.py"))
    }
    assert not {k: v for k, v in found.items() if v}


@pytest.mark.parametrize("lang", ["en", *OTHERS])
def test_sections_follow_the_catalog(lang):
    """A translator reads a file top to bottom in the order of the app: the shared sections first, then per page
    (catalog order) its [nav.<topic>], [<topic>] and [<topic>.*] sections together."""
    import re

    text = (ROOT / "app" / "locales" / f"{lang}.toml").read_text(encoding="utf-8")
    headers = re.findall(r"^\[([^\]]+)\]\s*$", text, flags=re.M)
    topics = [p.topic for p in catalog.PAGES]

    def rank(section: str) -> tuple[int, int]:
        topic = section.removeprefix("nav.").split(".")[0]
        if topic not in topics:
            return (-1, 0)  # shared sections come first
        return (topics.index(topic), 0 if section.startswith("nav.") else 1)

    ranks = [rank(h) for h in headers]
    assert ranks == sorted(ranks), [h for h, r, s in zip(headers, ranks, sorted(ranks)) if r != s][:3]


def test_every_column_a_page_hands_with_a_figure_has_its_words():
    """A figure's table (its numbers, on demand) names a page's columns in the reader's words ([figure_columns],
    app/ui.column_name): every literal column name a page hands as `data={...}` has them, but a formula's own."""
    math = {"sin", "d_k"}  # a formula's symbols, the same in every language
    missing = set()
    for path in sorted((ROOT / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "data" and isinstance(node.value, ast.Dict):
                names = {k.value for k in node.value.keys if isinstance(k, ast.Constant)} - math
                missing |= {f"{path.relative_to(ROOT)}: {n}" for n in names if not i18n.has("figure_columns", n)}
    assert not missing, sorted(missing)
