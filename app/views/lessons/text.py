"""Lesson words on screen: shown as text. Markdown's special characters are escaped, so a lesson file or a token
from a learner's sentence cannot become a link, an image, HTML or a formula."""

import re

from app import i18n

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
