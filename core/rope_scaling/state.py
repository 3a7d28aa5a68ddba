"""/rope-scaling's link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state
with it (core/state.py)."""

from core.state import Choice, State, model_choice

from . import experiment

FACTORS = ("2", "4", "8", "16", "32")  # the formula part's scale factor s (the link writes "4", the page reads 4.0)
DISTANCES = (16384, 32768, 65536, 131072)
MEASURES = ("fastest_pair", "slowest_pair", "vector")
LIVE_SIZES = (256, 512, 1024, 2048)
LIVE_METHODS = ("linear", "dynamic", "yarn")
LIVE_FACTORS = ("2", "4", "8")


def _lengths(c) -> tuple[str, ...]:
    return tuple(str(n) for n in experiment.choices())


STATE = State(
    # the formulas
    Choice("factor", "4", options=FACTORS),
    Choice("maxd", 131072, options=DISTANCES, number=int),
    Choice("measure", "fastest_pair", options=MEASURES),
    # the committed experiment: its lengths and factors are the results files' (results/)
    Choice("exp_n", lambda c: (_lengths(c) or ("",))[-1], options=_lengths),
    Choice("exp_factor", "all", options=lambda c: ("all", *experiment.choices().get(int(c.exp_n or 0), ()))),
    # the live run
    Choice("live_n", 512, options=LIVE_SIZES, number=int),
    Choice("live_method", "linear", options=LIVE_METHODS),
    Choice("live_factor", "4", options=LIVE_FACTORS),
    model_choice(("smollm2",)),
)
