"""/positions' link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state with
it (core/state.py). One page, one part at a time (`part`); each part's keys are its own, except the model picker,
whose shipped default is the part's (MiniLM's learned table, SmolLM2's RoPE)."""

from core.state import Choice, Flag, Float, Int, State, Text, model_choice

from . import sinusoidal

PARTS = ("sinusoidal", "learned", "relative", "alibi", "rope", "extrapolation")
ROPE_BANDS_TEXT = "The cat sat on the mat because it was tired. Then the cat slept."
_MODEL = model_choice(("smollm2",))


def base_from_log10(log10_base: float) -> float:
    """The base a "base" or "rope_base" slider stands for: it moves over log10 of the base (1 -> 10, 4 -> 10,000)."""
    return 10.0**log10_base


STATE = State(
    Choice("part", "sinusoidal", options=PARTS),
    # sinusoidal
    Int("d", 64, 8, 256, step=8),
    Int("n", 128, 16, 256, step=16),
    Float("base", 4.0, 1.0, 6.0, step=0.1),  # log10 of the base
    Int("pair", lambda c: min(2, sinusoidal.even(c.d) // 2 - 1), 0, lambda c: sinusoidal.even(c.d) // 2 - 1),
    Choice("sp_d", 3072, options=(512, 1024, 2048, 3072, 4096), number=int),
    Choice("sp_n", 8192, options=(128, 512, 2048, 8192, 32768), number=int),
    Choice("thr", "0.01", options=("0.001", "0.01", "0.05", "0.1")),
    # learned (MiniLM's table, or a learner's model with one) and the RoPE bands (SmolLM2, or a learner's)
    Choice("model", lambda c: "minilm" if c.part == "learned" else "smollm2", options=_MODEL.options),
    Choice("npos", 128, options=(64, 128, 256, 512), number=int),
    Int("pastpos", 512, 0, 4 * 512),
    # relative (Shaw et al.)
    Int("rel_n", 10, 3, 24),
    Int("rel_d", 8, 2, 32, step=2),
    Int("clip", 2, 0, 12),
    Int("seed", 0, 0, 9999),
    # ALiBi
    Int("heads", 8, 1, 32),
    Int("al_n", 16, 4, 64),
    Int("al_head", 0, 0, lambda c: c.heads - 1),
    # RoPE: the rotation, every pair's angle, one pair's circle; SmolLM2's real q and k split by frequency
    Int("rope_d", 16, 4, 64, step=2),
    Float("rope_base", 4.0, 1.0, 6.0, step=0.1),  # log10 of the base
    Int("m", 3, 0, 500),
    Choice("layout", "adjacent", options=("adjacent", "rotate_half")),
    Int("rope_n", 64, 8, 512, step=8),
    Int("rope_pair", 0, 0, lambda c: c.rope_d // 2 - 1),
    Flag("smol", False),
    Text("text", ROPE_BANDS_TEXT),
    Int("layer", lambda c: min(3, c.n_layers - 1), 0, lambda c: c.n_layers - 1),
    Int("head", 0, 0, lambda c: c.n_heads - 1),
    Choice("bands", 4, options=(2, 4, 8), number=int),
    Int("band", 0, 0, lambda c: c.bands - 1),
)
