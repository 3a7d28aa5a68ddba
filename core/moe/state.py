"""/moe's link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state with it
(core/state.py)."""

from dataclasses import dataclass

from core.models import moe_model
from core.state import Choice, Float, Int, State, Text

DEFAULT_TEXT = "The little cat sees a big dog. She runs to the park quickly, and they play together!"


@dataclass(frozen=True)
class Checkpoint:
    """A /moe state's context: the picked checkpoint (loaded once per process, the object the page uses)."""

    variant: str

    @property
    def model_object(self):
        from core.models import registry

        return registry.shared(registry.moe_key(self.variant))

    @property
    def n_layers(self) -> int:
        return self.model_object.n_layers


STATE = State(
    Text("text", DEFAULT_TEXT),
    Choice("ckpt", "balanced", options=tuple(moe_model.VARIANTS)),
    Int("layer", 1, 0, lambda c: c.n_layers - 1),
    Float("cf", 1.25, 0.25, 4.0, step=0.25),
    context=lambda c: Checkpoint(c.ckpt),
)
