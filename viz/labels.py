"""Text that goes into figures. Plotly renders a small HTML subset in labels (<b>, <a>, <br>), so user text
is escaped to entities: '<script>' shows as text and never becomes markup."""

import html

from core.pooling import MAX_LABEL_CHARS, clip_label
from core.pooling import indexed_labels as indexed_labels  # token labels are data, made in core; re-exported


def safe_label(text: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    text = str(text).replace("\n", "⏎").replace("\t", "⇥")
    return html.escape(clip_label(text, max_chars), quote=True)
