"""Every word the app shows, one catalog file per language: app/locales/<code>.toml.

Why TOML: Python reads it without a dependency (tomllib), translators edit it as plain key = "text" lines
(Weblate and Crowdin import it), and it keeps strings keyed by topic: a section per page topic ([attention],
[masks], ...), nested where a topic has parts ([positions.rope]). Format fields are Python's ({n:,}).
Adding a language means adding one file with a [meta] name; English is the reference every key falls back to,
and tests/app/test_i18n.py checks that every language has every key with the same format fields.

A string whose words change with a number declares its forms as a table, chosen by the format field it names:
    hist_title = { count = "n", one = "{n} answer", other = "{n} answers" }
The forms are CLDR's plural categories (zero, one, two, few, many, other), picked by the rule in PLURAL_RULES that
the catalog's [meta] plural names; a language with one form (ja, ko) writes a plain string. `text` is the one place
that chooses, so every caller (ui.t, a page's T, a figure's words) gets the right form.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Callable
from functools import cache, lru_cache
from numbers import Integral
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


PLURAL_FORMS = ("zero", "one", "two", "few", "many", "other")


def _integer(n) -> int | None:
    """The count as a whole number, or None (a fraction, or not a number): '1,000' -> 1000, 1.0 -> None (shown
    as '1.0', which CLDR counts as 'other' in English)."""
    if isinstance(n, Integral) and not isinstance(n, bool):
        return int(n)
    if isinstance(n, str) and n.replace(",", "").strip().lstrip("-").isdigit():
        return int(n.replace(",", ""))
    return None


# CLDR's cardinal rule families (unicode.org/cldr/charts/latest/supplemental/language_plural_rules); a catalog names
# its own in [meta] plural. English: one (exactly 1, no fraction) and other; Japanese, Korean: other only.
PLURAL_RULES: dict[str, Callable[[object], str]] = {
    "one_other": lambda n: "one" if _integer(n) == 1 else "other",
    "other": lambda n: "other",
}


def is_plural(value) -> bool:
    """A catalog value that is a string's plural forms ({count = field, one = ..., other = ...}), not a section."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("count"), str)
        and isinstance(value.get("other"), str)
        and set(value) <= {"count", *PLURAL_FORMS}
    )


def forms(value) -> list[str]:
    """Every string a catalog value may show: a plain string, or each of its plural forms."""
    return [value[f] for f in PLURAL_FORMS if f in value] if is_plural(value) else [value]


def plural(lang: str, value, fmt: dict) -> str:
    """The form of a plural value for the count it names (its field in fmt), by the language's rule; other where
    the language declares no rule or the value lacks that form."""
    form = PLURAL_RULES[catalog(lang)["meta"].get("plural", "other")](fmt[value["count"]])
    return value.get(form, value["other"])


def _entry(value) -> bool:
    return isinstance(value, str) or is_plural(value)


def section(lang: str, path: str) -> dict:
    """The table at a dotted path ('attention', 'positions.rope') of one language's catalog ({} if absent)."""
    table = catalog(lang)
    for part in path.split("."):
        table = table.get(part, {})
    return table


def text(lang: str, path: str, key: str, /, **fmt) -> str:
    """The string `key` of section `path`, in `lang` (English where that language lacks it), formatted."""
    s = section(lang, path).get(key)
    if not _entry(s):
        lang, s = REFERENCE, section(REFERENCE, path)[key]
    if is_plural(s):
        s = plural(lang, s, fmt)
    return s.format(**fmt) if fmt else s


def has(path: str, key: str) -> bool:
    return _entry(section(REFERENCE, path).get(key))


def format_fields(value) -> set[str]:
    """The names of the format fields of a string ({n:,} -> 'n'), or of all the forms of a plural value."""
    return {name for s in forms(value) for _, name, _, _ in string.Formatter().parse(s) if name}


def flat(table: dict, prefix: str = "") -> dict[str, str]:
    """{'section.sub.key': text} for every string of a catalog (a plural value stays one entry: see `forms`)."""
    out = {}
    for k, v in table.items():
        if isinstance(v, dict) and not is_plural(v):
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out
