"""/antecedents' link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state
with it (core/state.py). The pronoun picker's options and the candidates the ranking is by follow from the text
(a stored sentence's own pronoun and candidates, else the find_candidates rule): `Sentence` works them out, for
the page and for a lesson's state alike."""

from __future__ import annotations

from functools import cached_property

from core.attention import DEFAULT_SENTENCE, ModelContext, through_contract
from core.state import Choice, Int, State, Text, model_choice

from . import find_candidates, find_pronouns, split_words
from .view import builtin_sentences, default_choice

PRETRAINED = ("minilm", "smollm2")  # the tiny MoE knows ~270 words: no pronoun test for it
MAX_TOP = 30  # heads the ranking shows at most


class Sentence:
    """A text's words, its pronouns, and the pronoun and candidates it starts with (a stored sentence's own)."""

    def __init__(self, text: str):
        self.text = text
        self.words = split_words(text)
        self.pronouns = find_pronouns(self.words)
        self.stored = builtin_sentences().get(text)  # a sentence of data/antecedent_pairs.json: its pair, its answer

    @cached_property
    def default(self) -> tuple[int, list[int]] | None:
        """(pronoun, candidates) the page starts with; None without a pronoun."""
        return default_choice(self.text, self.words, self.pronouns, self.stored) if self.pronouns else None

    @property
    def pronoun_options(self) -> tuple[str, ...]:
        return tuple(str(p) for p in self.pronouns)

    @property
    def default_pronoun(self) -> str | None:
        return None if self.default is None else str(self.default[0])

    def candidates(self, pronoun: int) -> list[int]:
        """The candidates offered for `pronoun`: the stored sentence's own for its pronoun, else find_candidates."""
        if self.default is not None and self.stored and pronoun == self.default[0]:
            return list(self.default[1])
        return find_candidates(self.text, self.words, pronoun)

    def is_stored_choice(self, pronoun: int, candidates: list[int]) -> bool:
        """The stored sentence's own pronoun and candidates (its pair partner can be compared)."""
        return (
            bool(self.stored)
            and self.default is not None
            and (pronoun, candidates)
            == (
                self.default[0],
                list(self.default[1]),
            )
        )


class Context(ModelContext):
    """A /antecedents state's context: the models offered and the picked one's shape (ModelContext), and the
    text's pronouns and candidates (read after the text: properties)."""

    def __init__(self, values):
        super().__init__(values, PRETRAINED, through_contract)

    @cached_property
    def sentence(self) -> Sentence:
        return Sentence(self._values.text)

    @property
    def pronoun_options(self) -> tuple[str, ...]:
        return self.sentence.pronoun_options

    @property
    def default_pronoun(self) -> str | None:
        return self.sentence.default_pronoun

    @property
    def rank_options(self) -> tuple[str, ...]:
        return tuple(str(i) for i in range(len(self.sentence.candidates(int(self._values.pron)))))


STATE = State(
    model_choice(PRETRAINED),
    Text("text", DEFAULT_SENTENCE),
    Choice("pron", lambda c: c.default_pronoun, options=lambda c: c.pronoun_options),  # a word index
    Choice("rank", "0", options=lambda c: c.rank_options),  # the candidate (its place in the list) heads rank by
    Int("top", 10, 1, MAX_TOP),
    context=Context,
)
