"""Every word the app shows, one catalog file per language: app/locales/<code>.toml.

Why TOML: Python reads it without a dependency (tomllib), translators edit it as plain key = "text" lines
(Weblate and Crowdin import it), and it keeps strings keyed by topic: a section per page topic ([attention],
[masks], ...), nested where a topic has parts ([positions.rope]). Format fields are Python's ({n:,}).
Adding a language means adding one file with a [meta] name; English is the reference every key falls back to,
and tests/app/test_i18n.py checks that every language has every key with the same format fields.
"""

from __future__ import annotations

import string
import tomllib
from functools import cache, lru_cache
from pathlib import Path

LOCALES = Path(__file__).parent / "locales"
REFERENCE = "en"


@cache
def catalog(lang: str) -> dict:
    with open(LOCALES / f"{lang}.toml", "rb") as f:
        return tomllib.load(f)


@lru_cache(maxsize=1)
def languages() -> dict[str, str]:
    """{code: name in its own language}, English first, then the other files in name order."""
    codes = sorted((p.stem for p in LOCALES.glob("*.toml")), key=lambda c: (c != REFERENCE, c))
    return {c: catalog(c)["meta"]["name"] for c in codes}


def section(lang: str, path: str) -> dict:
    """The table at a dotted path ('attention', 'positions.rope') of one language's catalog ({} if absent)."""
    table = catalog(lang)
    for part in path.split("."):
        table = table.get(part, {})
    return table


def text(lang: str, path: str, key: str, /, **fmt) -> str:
    """The string `key` of section `path`, in `lang` (English where that language lacks it), formatted."""
    s = section(lang, path).get(key)
    if not isinstance(s, str):
        s = section(REFERENCE, path)[key]
    return s.format(**fmt) if fmt else s


def has(path: str, key: str) -> bool:
    return isinstance(section(REFERENCE, path).get(key), str)


def format_fields(s: str) -> set[str]:
    """The names of the format fields of a string ({n:,} -> 'n')."""
    return {name for _, name, _, _ in string.Formatter().parse(s) if name}


def flat(table: dict, prefix: str = "") -> dict[str, str]:
    """{'section.sub.key': text} for every string of a catalog."""
    out = {}
    for k, v in table.items():
        if isinstance(v, dict):
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out
