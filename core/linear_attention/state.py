"""/linear-attention's link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's
state with it (core/state.py)."""

from core.state import Choice, Flag, Float, Int, State

COST_SIZES = tuple(2**k for k in range(4, 18))  # 16 .. 131,072: the associativity part's n
TIMING_MAX = (512, 1024, 2048, 4096, 8192, 16384)
GEN_MAX = (256, 512, 1024, 2048, 4096, 8192)

STATE = State(
    # 1. which product first, and its cost
    Choice("n", 4096, options=COST_SIZES, number=int),
    Choice("d", 64, options=(16, 32, 64, 128, 256), number=int),
    # 2. the implied matrix on random q, k
    Int("im_n", 12, 2, 48),
    Choice("im_d", 16, options=(4, 8, 16, 32, 64), number=int),
    Float("spread", 1.0, 0.25, 4.0, step=0.25),
    Int("seed", 0, 0, 9999),
    Flag("causal", False),
    # 3. the exp kernel's feature map
    Choice("ek_d", 4, options=(2, 4, 8, 16, 64), number=int),
    Float("ek_spread", 1.0, 0.25, 1.5, step=0.25),
    # 4. measured time, 5. generation
    Choice("max_n", 2048, options=TIMING_MAX, number=int),
    Flag("t_causal", False),
    Choice("max_ctx", 512, options=GEN_MAX, number=int),
)
