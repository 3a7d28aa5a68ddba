"""Lesson words on screen: shown as text. Markdown's special characters are escaped, so a lesson file or a token
from a learner's sentence cannot become a link, an image, HTML or a formula."""

import dataclasses
import re

from app import i18n, ui
from core.lessons import ORDER_SEPARATOR, OTHER, Answer, Distribution, fill, text_in
from viz.lessons import histogram

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&])")


def plain(text: str) -> str:
    """`text` for st.markdown, every markdown character escaped; new lines kept as line breaks."""
    return "  \n".join(_SPECIAL.sub(r"\\\1", line) for line in str(text).splitlines()) or " "


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


def explained(T, words: dict[str, str], lang: str, answer: Answer) -> str:
    """A hint's or an explanation's words in `lang` (text_in), its {correct} and the answer's detail filled in
    (core.fill), a choice's {correct} in the reader's words (T, the [lessons] catalog in `lang`)."""
    if answer.kind == "choice":
        answer = dataclasses.replace(answer, correct=choice_label(T, answer.correct))
    return fill(text_in(words, lang), answer)
