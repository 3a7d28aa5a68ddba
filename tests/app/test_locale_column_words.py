"""A table's column headers are in the reader's language: a Japanese or Korean header the same as the English one
is a unit or a name (ms, TFLOP/s, d_k, Transformer), never an English word. /long-maps' measured table read 'check'
on both pages."""

import tomllib
from pathlib import Path

import pytest

LOCALES = Path(__file__).resolve().parents[2] / "app" / "locales"
# the same in every language: units, symbols, names
UNITS_AND_NAMES = {"d_k", "n", "ms", "TFLOP/s", "SDPA ms", "flash ms", "Transformer"}


def words(lang: str) -> dict[str, str]:
    def walk(table: dict, path: str = ""):
        for key, value in table.items():
            if isinstance(value, dict):
                yield from walk(value, f"{path}{key}.")
            else:
                yield f"{path}{key}", value

    return dict(walk(tomllib.loads((LOCALES / f"{lang}.toml").read_text(encoding="utf-8"))))


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_column_headers_are_translated(lang):
    english, translated = words("en"), words(lang)
    headers = [key for key in translated if "col_" in key.rsplit(".", 1)[-1]]
    assert len(headers) > 50  # the check reads the headers
    left = {key: translated[key] for key in headers if translated[key] == english.get(key)}
    assert set(left.values()) <= UNITS_AND_NAMES, left
