"""Text that goes into figures. Plotly renders a small HTML subset in labels (<b>, <a>, <br>), so user text
is escaped to entities: '<script>' shows as text and never becomes markup."""

import html

MAX_LABEL_CHARS = 24


def safe_label(text: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    text = str(text).replace("\n", "⏎").replace("\t", "⇥")
    return html.escape(_clip(text, max_chars), quote=True)


def indexed_labels(tokens: list[str]) -> list[str]:
    """'3 cat'-style labels: unique even when a token repeats (plotly merges equal category names).
    Not yet escaped: the figure builders escape every label they draw."""
    return [f"{i} {_clip(str(t).replace(chr(10), '⏎'))}" for i, t in enumerate(tokens)]


def _clip(text: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
