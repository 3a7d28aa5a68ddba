"""Lesson words on screen: shown as text. Markdown's special characters are escaped, so a lesson file or a token
from a learner's sentence cannot become a link, an image, HTML or a formula."""

import re

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&])")


def plain(text: str) -> str:
    """`text` for st.markdown, every markdown character escaped; new lines kept as line breaks."""
    return "  \n".join(_SPECIAL.sub(r"\\\1", line) for line in str(text).splitlines()) or " "
