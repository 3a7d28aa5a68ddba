"""viz/ablation.py read back from a committed card's view: the placebo dots and band, the claimed heads' diamond,
the axis title of the card's metric."""

import pytest

from app import i18n
from core import ablation as ab
from viz import ablation as va


def words(key, **fmt):
    return i18n.text("en", "ablation.figure", key, **fmt)


def test_claim_figure_draws_the_views_numbers():
    cards = ab.committed_cards()
    if cards is None:
        pytest.skip("results/ablation.json not written yet")
    view = cards["induction-zero"]
    fig = va.claim_figure(view, words)
    placebo, chosen = fig.data
    assert list(placebo.x) == [round(h, 4) for h in view.placebo_harms] and placebo.name == "placebo (20 draws)"
    assert list(chosen.x) == [round(view.harm, 4)] and chosen.name == words("chosen_name", k=5)
    band = fig.layout.shapes[0]
    assert (band.x0, band.x1) == view.placebo_interval
    assert fig.layout.xaxis.title.text == words("harm_repeated_loss")


def test_the_legend_stands_at_the_figures_foot():
    """Beside the plot (plotly's place for a legend) it took half a 358 px phone's figure: the dots' row was drawn 79 px
    wide in Japanese, 110 in English (chromium, scripts/phone_layout_check.py --pages ablation --states figure)."""
    cards = ab.committed_cards()
    if cards is None:
        pytest.skip("results/ablation.json not written yet")
    legend = va.claim_figure(cards["induction-zero"], words).layout.legend
    assert legend.orientation == "h" and legend.yref == "container" and legend.y == 0
