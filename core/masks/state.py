"""/masks' link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state with it
(core/state.py). The sentences' count bounds the pickers: it is known once the text is read (the context)."""

from dataclasses import dataclass

from core.state import Choice, Int, State, Text

from . import batch
from .layers import N_HEADS

MAX_SENTENCES = 4
MAX_TOKENS = 12  # per sentence: a 12 x 12 matrix still shows its numbers
MATERIAL_PAD_TO = 41  # the study material pads its batch to a fixed 41 tokens
MAX_PAD_TO = 128


@dataclass(frozen=True)
class Sentences:
    """The context of a /masks state: the tokens of its sentences, as the page reads them."""

    token_lists: list[list[str]]

    @property
    def n_sentences(self) -> int:
        return len(self.token_lists)


def sentences_of(text: str) -> Sentences:
    return Sentences(batch.read_sentences(text, MAX_SENTENCES, MAX_TOKENS).token_lists)


def _rows(c) -> tuple[str, ...]:
    return tuple(str(k) for k in range(c.n_sentences))


STATE = State(
    Text("text", "\n".join(batch.EXAMPLES)),
    Int("pad_to", MATERIAL_PAD_TO, 1, MAX_PAD_TO),  # the batch padded to a fixed length, beside the longest
    Choice("row", "0", options=_rows),
    Int("head", 0, 0, N_HEADS - 1),
    Choice("mask", "both", options=tuple(batch.MASK_KINDS)),
    Choice("src", "0", options=_rows),
    Choice("tgt", "1", options=_rows),
    context=lambda c: sentences_of(c.text),
)
