"""Lesson words on screen, the one way every page draws them (/lessons, a room's learner, facilitator and
projector): as text. Markdown's special characters are escaped, so a lesson file (the shipped ones use no markup:
their `</s>`, `d_k` and `[q0, k0]` are meant as written; and a file may come from anyone) or a token from a
learner's sentence cannot become a link, an image, HTML or a formula. Words the lesson has no text for in the
reader's language are shown in the language it has, and the page says so in the reader's language (prose)."""

import dataclasses
import re
from functools import partial

import streamlit as st

from app import i18n, ui
from core.lessons import ORDER_SEPARATOR, OTHER, Answer, Distribution, Shown, fill, shown_in
from viz.lessons import histogram

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&])")
# Streamlit's markdown (GFM) makes a link of an address written out (https://..., www...., name@host) after it
# has read the escapes, so no escape stops it; an invisible word joiner inside '://', 'www.' and before '@' does.
_ADDRESS = re.compile(r"(?i)(?<=:)(?=//)|(?<=\bwww)(?=\\\.)|(?=@)")
JOINER = "\u2060"


def plain(text: str) -> str:
    """`text` for st.markdown, every markdown character escaped and no address a link; new lines kept as line
    breaks."""
    lines = (_ADDRESS.sub(JOINER, _SPECIAL.sub(r"\\\1", line)) for line in str(text).splitlines())
    return "  \n".join(lines) or " "


def choice_label(T, option: str) -> str:
    """A choice answer's words in the reader's language: the engine's answers are identifiers ('yes', 'scaled',
    'quadratic'); the [lessons] catalog says them as choice_<identifier>. Others (a token, a head '1.3', a model
    name) are shown as written."""
    key = f"choice_{option}"
    return T(key) if i18n.has("lessons", key) else option


def in_words(T, kind: str, answer: str) -> str:
    """An answer as written by the engine or a learner ('scaled', 'cross > encoder_self') in the reader's words: a
    choice's identifier and each item of an order (choice_label); a number or a token as it is."""
    if kind == "choice":
        return choice_label(T, answer)
    if kind == "order":
        return ORDER_SEPARATOR.join(choice_label(T, item) for item in answer.split(ORDER_SEPARATOR))
    return answer


def answers_figure(view: Distribution):
    """The bars of a question's answers (/lessons, a room's learner, facilitator and projector), each named in the
    reader's words (in_words): the bars of a choice read 'higher', 'scaled' on a Japanese page."""
    T = ui.texts("lessons")
    labels = tuple(label if label == OTHER else in_words(T, view.kind, label) for label in view.labels)
    return histogram(dataclasses.replace(view, labels=labels), ui.texts("lessons.figure"))


def language_name(reader: str, code: str) -> str:
    """The name of language `code` in a reader's words ('英語' for a Japanese reader); a language the catalog has
    no name for by its own name (ui.LANGS) or its code."""
    key = f"lang_{code}"
    return i18n.text(reader, "common", key) if i18n.has("common", key) else ui.LANGS.get(code, code)


def filled(shown: Shown, answer: Answer | None, with_correct: bool = True) -> str:
    """A lesson's words with {correct} and the answer's detail filled in (core.fill), a choice's {correct} in the
    words of the language the text is written in (an English stand-in says 'scaled', not 'スケーリングあり');
    without `with_correct` (a room before the reveal) the answer and every field that shows it are withheld
    (core.fill). What a room's learner reads of a hint before the reveal. Plural forms and Korean particles are
    chosen as the catalogs' are (core.grammar), by the plural rule the catalog of the text's language names."""
    choice = answer is not None and answer.kind == "choice"
    said = choice_label(partial(i18n.text, shown.lang, "lessons"), answer.correct) if choice else None
    return fill(shown.text, answer, with_correct=with_correct, said=said, plural_rule=i18n.plural_rule(shown.lang))


def draw(shown: Shown, answer: Answer | None = None, with_correct: bool = True) -> None:
    """Lesson words as text (plain), filled (`filled`); under a stand-in a line in the reader's language that says
    which language it is and why."""
    st.markdown(plain(filled(shown, answer, with_correct)))
    if shown.stands_in:
        st.caption(i18n.text(shown.wanted, "lessons", "stand_in", language=language_name(shown.wanted, shown.lang)))


def label(words: dict[str, str], lang: str, limit: int | None = None) -> str:
    """Lesson words in a picker, a menu or a title (a lesson's or a path's title, a step's first `limit`
    characters), where prose's notice line would be one line too many per label: a stand-in carries its language's
    name after it, in the reader's words ('No Japanese here（英語）'), the one short form of that notice on every
    page of lessons and rooms. Plain text: a title drawn as markdown goes through plain()."""
    shown = shown_in(words, lang)
    text = shown.text[:limit]
    if not shown.stands_in:
        return text
    return i18n.text(lang, "lessons", "stand_in_label", text=text, language=language_name(lang, shown.lang))


def prose(words: dict[str, str], lang: str, answer: Answer | None = None, with_correct: bool = True) -> None:
    """A step's text, a question, a hint or an explanation for a reader of `lang` (answer: the right answer a hint
    or an explanation is filled with; with_correct=False: its detail only, the answer withheld): what every page of
    lessons and rooms draws lesson words with."""
    draw(shown_in(words, lang), answer, with_correct)
