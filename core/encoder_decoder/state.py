"""/encoder-decoder's link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's
state with it (core/state.py)."""

from core.models.needs import PAGE_NEEDS
from core.state import Choice, Int, State, Text, model_choice

from . import grammar, own
from . import view as edv

PARTS = ("steps", "stack", "alignment")
SHIPPED = "encoder-decoder"  # core.models.registry.ENCODER_DECODER: the model trained in this repo


class Context:
    """A /encoder-decoder state's context: the models offered (the shipped one, then a learner's encoder-decoder
    folders) and the picked one's decoder shape and step limit (the shipped model is loaded once per process)."""

    def __init__(self, values):
        from core.attention import offered_models

        self._values = values
        self.models = offered_models((SHIPPED,), PAGE_NEEDS["encoder-decoder"])

    @property
    def max_steps(self) -> int:
        return edv.MAX_STEPS if self._values.model == SHIPPED else own.MAX_STEPS

    @property
    def _config(self):
        if self._values.model != SHIPPED:
            raise AttributeError("a learner's folder: its shape is known once the page loads it")
        from core.models import registry

        return registry.shared(registry.ENCODER_DECODER)[0].config

    @property
    def n_layers(self) -> int:
        return self._config.decoder_layers

    @property
    def n_heads(self) -> int:
        return self._config.decoder_attention_heads


STATE = State(
    Choice("part", "steps", options=PARTS),
    model_choice((SHIPPED,)),
    Text("text", lambda c: edv.example_sentences()[0]),
    Choice("target", "ja", options=tuple(grammar.LANGUAGES)),
    Int("layer", 0, 0, lambda c: c.n_layers - 1),
    Int("head", 0, 0, lambda c: c.n_heads - 1),
    Choice("mode", "free", options=tuple(edv.MODES)),
    # Fixed bounds per model, so a shared link's step stays valid whatever the sentence; past the last: the last
    Int("step", lambda c: c.max_steps, 0, lambda c: c.max_steps),
    context=Context,
)
