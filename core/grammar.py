"""How a string with values filled in reads: the form of its words that follows a number (English 'one head', '2
heads') and the Korean particle that follows a value's final sound (사과를, 책을, 3이, 2가). One set of rules for
every filled string: the app's catalogs (app/i18n.text) and the lessons (core.lessons.fill) both go through here.

Plural forms: a string whose words change with a number declares its forms as a table, chosen by the field it names:
    { count = "n", one = "{n} answer", other = "{n} answers" }
The forms are CLDR's plural categories (zero, one, two, few, many, other), picked by a rule family of PLURAL_RULES;
a language with one form (ja, ko) writes a plain string.

Korean particles after a field are written the way Korean style guides write an undecided one, "{name}을(를)",
"{n:,}이(가)", "{value}(으)로" (a closing quote may stand between: "'{preset}'을(를)"), and `with_particles` picks the
form by the final sound of the value filled in (`particle`). A value whose sound cannot be judged (Latin letters, a
symbol) keeps the written pair.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from numbers import Integral

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
    """A value that is a string's plural forms ({count = field, one = ..., other = ...}), not a section."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("count"), str)
        and isinstance(value.get("other"), str)
        and set(value) <= {"count", *PLURAL_FORMS}
    )


def forms(value) -> list[str]:
    """Every string a value may show: a plain string, or each of its plural forms."""
    return [value[f] for f in PLURAL_FORMS if f in value] if is_plural(value) else [value]


def plural_form(rule: str, value, count) -> str:
    """The form of a plural value (is_plural) for `count` (its count field's value, a number or as shown: '1,000')
    by a rule family of PLURAL_RULES; other where the value lacks that form. A plain string is itself."""
    if not is_plural(value):
        return value
    return value.get(PLURAL_RULES[rule](count), value["other"])


# The particle pairs as written after a field: (form after a final consonant, form after a vowel).
PARTICLES = {
    "을(를)": ("을", "를"),
    "를(을)": ("을", "를"),
    "이(가)": ("이", "가"),
    "가(이)": ("이", "가"),
    "은(는)": ("은", "는"),
    "는(은)": ("은", "는"),
    "과(와)": ("과", "와"),
    "와(과)": ("과", "와"),
    "(으)로": ("으로", "로"),
}
PARTICLE_AFTER_FIELD = re.compile(
    r"(?P<placeholder>\{(?P<field>[^{}!:]+)(?:![rsa])?(?::[^{}]*)?\})['’\"”」』)\]]*(?P<particle>"
    + "|".join(re.escape(p) for p in PARTICLES)
    + ")"
)
# How a digit is read (Sino-Korean: 영 일 이 삼 사 오 육 칠 팔 구) and the place words after a whole number's last
# non-zero digit (십 백 천; 만 억 조 every four places), as the final sound of their last syllable: "" none, "ㄹ",
# or "C" another consonant.
_DIGIT_FINAL = {"0": "C", "1": "ㄹ", "2": "", "3": "C", "4": "", "5": "", "6": "C", "7": "ㄹ", "8": "ㄹ", "9": ""}
_PLACE_FINAL = {1: "C", 2: "C", 3: "C"}  # 십, 백, 천
_GROUP_FINAL = {1: "C", 2: "C", 3: "", 4: "C"}  # 만, 억, 조, 경
_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3
_RIEUL = 8  # ㄹ's index among the 28 finals (0: none)


def final_sound(said: str) -> str | None:
    """The final sound of a value as read in Korean: "" (a vowel), "ㄹ", "C" (another consonant), or None where it
    cannot be judged (Latin letters, a name's number, symbols). A closing quote or bracket is not read."""
    said = said.rstrip(" '’\"”」』)]")
    if not said:
        return None
    last = said[-1]
    if _HANGUL_FIRST <= ord(last) <= _HANGUL_LAST:
        final = (ord(last) - _HANGUL_FIRST) % 28
        return "" if final == 0 else "ㄹ" if final == _RIEUL else "C"
    if last == "%":
        return ""  # 퍼센트
    number = re.search(r"(\d[\d,]*)(\.\d+)?$", said)
    if not number or re.search(r"[A-Za-z]", said):  # a name's digits may be read in English: GPT-3, 쓰리 or 삼
        return None
    if number.group(2):  # the decimals are read digit by digit: 0.25 -> 영 점 이오
        return _DIGIT_FINAL[said[-1]]
    whole = number.group(1).replace(",", "")
    zeros = len(whole) - len(whole.rstrip("0"))
    if zeros == len(whole) or zeros == 0:  # 0 -> 영; 12 -> 십이
        return _DIGIT_FINAL[whole[-1]]
    place, group = zeros % 4, zeros // 4
    return _PLACE_FINAL[place] if place else _GROUP_FINAL.get(group)


def particle(written: str, said: str) -> str:
    """The form of a particle pair (PARTICLES) after a value read as `said`: 을 after 책, 를 after 사과, 로 after
    연필 (으로/로 takes 로 after ㄹ too), 으로 after 집; the pair as written where the sound cannot be judged."""
    final = final_sound(said)
    if final is None:
        return written
    after_consonant, after_vowel = PARTICLES[written]
    if written == "(으)로":
        return after_consonant if final == "C" else after_vowel
    return after_vowel if final == "" else after_consonant


def with_particles(s: str, said: Callable[[str, str], str | None]) -> str:
    """`s` with each particle pair after a field replaced by the form its value takes. said(field, placeholder):
    the value as the placeholder ('{n:,}') shows it, or None where it is not filled in (the pair stays)."""

    def choose(m: re.Match) -> str:
        value = said(m.group("field"), m.group("placeholder"))
        if value is None:
            return m.group(0)
        written = m.group("particle")
        return m.group(0)[: -len(written)] + particle(written, value)

    return PARTICLE_AFTER_FIELD.sub(choose, s)
