"""/rnn-attention's link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state
with it (core/state.py). One page, one part at a time (`part`): the translate part's sentence and target language,
the cost part's length n and width d."""

from core.encoder_decoder import grammar
from core.encoder_decoder.view import example_sentences
from core.state import Choice, Int, State, Text

PARTS = ("translate", "scores", "gradient", "cost")

STATE = State(
    Choice("part", "translate", options=PARTS),
    # translate: a held-out sentence of the shipped task, into Japanese or Korean
    Text("text", example_sentences()[0]),
    Choice("target", "ja", options=grammar.LANGUAGES),
    # cost: n tokens of width d through one recurrent layer or one self-attention layer
    Int("n", 64, 2, 2048),
    Int("d", 128, 16, 1024),
)
