"""Every figure a page shows has a text alternative (app/ui.py text_alternative, core/figure_text.py): bar charts
name their largest and smallest bars, line charts where each line starts, ends, peaks and bottoms out, with the
numbers checked against independent ones (torch's softmax and SDPA on the lookup's own keys and values)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from app import i18n
from core.sdpa_steps import LOOKUP_KEYS, LOOKUP_TAUS, LOOKUP_VALUES
from tests.apptest_helpers import open_view

MODEL_FREE = True

QUERY, TAU = 1, 0.5  # the lookup's query equals the second key ("dog"), at temperature 0.5


def lookup_by_torch(tau: float) -> tuple[torch.Tensor, float]:
    """The lookup's attention weights and soft result at tau: torch's softmax and SDPA on unit keys."""
    keys = F.normalize(torch.tensor(LOOKUP_KEYS, dtype=torch.float64), dim=-1)
    values = torch.tensor(LOOKUP_VALUES, dtype=torch.float64)
    query = keys[QUERY]
    weights = torch.softmax(keys @ query / tau, dim=-1)
    soft = F.scaled_dot_product_attention(query[None, None], keys[None], values[None, :, None], scale=1 / tau)
    return weights, float(soft.squeeze())


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_bar_chart_names_its_largest_and_smallest_bar(lang):
    """/sdpa-steps' lookup: the soft weights' largest bar (the matching key) and smallest, in the reader's words."""
    at = open_view("sdpa_steps", {"lq": str(QUERY), "tau": str(TAU)}, {"lang": lang})
    names = [n.strip() for n in i18n.text(lang, "sdpa_steps", "lookup_names").split(",")]
    weights, _ = lookup_by_torch(TAU)
    top, low = int(weights.argmax()), int(weights.argmin())
    assert top == QUERY  # the key the query equals carries most weight
    said = i18n.text(lang, "common", "figure_bars", n=len(names), largest=f"` {names[top]} `",
                     largest_value=f"{float(weights[top]):.3g}", smallest=f"` {names[low]} `",
                     smallest_value=f"{float(weights[low]):.3g}")  # fmt: skip
    soft_name = i18n.text(lang, "sdpa_steps.figure", "lookup_soft").replace("(", "\\(").replace(")", "\\)")
    assert i18n.text(lang, "common", "figure_series", name=soft_name, text=said) in captions(at)


def test_line_chart_names_start_end_and_peak():
    """/sdpa-steps' soft result against τ: from τ's first value to its last, the highest and lowest points,
    against torch's SDPA at each τ of the curve."""
    at = open_view("sdpa_steps", {"lq": str(QUERY), "tau": str(TAU)})
    soft = np.array([lookup_by_torch(t)[1] for t in LOOKUP_TAUS])
    hi, lo = int(soft.argmax()), int(soft.argmin())

    def tau(i: int) -> str:
        return f"{LOOKUP_TAUS[i]:.4g}"  # an x value is said with at most 4 significant digits

    said = (
        f"{len(soft)} points, from {soft[0]:.3g} at {tau(0)} to {soft[-1]:.3g} at {tau(-1)}, "
        f"highest {soft[hi]:.3g} at {tau(hi)}, lowest {soft[lo]:.3g} at {tau(lo)}"
    )
    assert said in captions(at)


def leaves(node) -> list:
    children = getattr(node, "children", None)
    return [leaf for k in sorted(children) for leaf in leaves(children[k])] if children else [node]


@pytest.mark.parametrize("topic", ["positions", "linear_attention", "transformer_xl", "sdpa_gqa", "flash_attention"])
def test_every_figure_is_followed_by_its_text_alternative(topic):
    """Pages with line, bar and heatmap figures (no model): under each figure, a caption that tells its numbers."""
    at = open_view(topic)
    told = ("Largest values", " bars, the largest ", " points, from ", " at ")
    shown = leaves(at.main)
    charts = [i for i, e in enumerate(shown) if e.type == "plotly_chart"]
    assert charts
    for i in charts:
        after = shown[i + 1] if i + 1 < len(shown) else None
        assert after is not None and after.type == "caption" and any(w in after.value for w in told), topic
