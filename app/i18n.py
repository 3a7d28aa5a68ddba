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
here that chooses, so every caller (ui.t, a page's T, a figure's words) gets the right form; the rules are core's
(core/grammar.py), which the lessons' words (core.lessons.fill) go through too.

Korean particles after a format field are written the way Korean style guides write an undecided one, "{name}을(를)",
"{n:,}이(가)", "{value}(으)로" (a closing quote may stand between: "'{preset}'을(를)"), and `text` picks the form by
the final sound of the value it fills in (core.grammar.particle): 사과를, 책을, 연필로, 3이, 2가. A value it cannot judge (Latin
letters, a symbol) keeps the written pair.
"""

from __future__ import annotations

import string
import tomllib
from functools import cache, lru_cache
from pathlib import Path

# The rules themselves are core's (core.grammar), which the lessons' words go through too; named here as well for
# the readers of the catalogs.
from core.grammar import PARTICLES as PARTICLES
from core.grammar import PLURAL_FORMS as PLURAL_FORMS
from core.grammar import PLURAL_RULES as PLURAL_RULES
from core.grammar import final_sound as final_sound
from core.grammar import forms as forms
from core.grammar import is_plural as is_plural
from core.grammar import particle as particle
from core.grammar import plural_form, with_particles

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


def plural_rule(lang: str) -> str:
    """The plural rule family (core.grammar.PLURAL_RULES) a language's catalog names in [meta] plural ("other",
    one form, where it names none or the language has no catalog)."""
    try:
        return catalog(lang)["meta"].get("plural", "other")
    except FileNotFoundError:
        return "other"


def plural(lang: str, value, fmt: dict) -> str:
    """The form of a plural value for the count it names (its field in fmt), by the language's rule; other where
    the language declares no rule or the value lacks that form."""
    return plural_form(plural_rule(lang), value, fmt[value["count"]])


def _entry(value) -> bool:
    return isinstance(value, str) or is_plural(value)


def _with_particles(s: str, fmt: dict) -> str:
    """The string with each particle pair after a field replaced by the form its value takes (an attribute or
    index, {a.b} or {a[0]}, is left as written)."""
    return with_particles(s, lambda field, placeholder: placeholder.format(**fmt) if field in fmt else None)


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
    return _with_particles(s, fmt).format(**fmt) if fmt else s


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
