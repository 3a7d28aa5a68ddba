"""viz/ablation.py read back from a committed card's view: the placebo dots and band, the claimed heads' diamond,
the axis title of the card's metric."""

import dataclasses
import functools

import pytest

from app import i18n
from core import ablation as ab
from viz import ablation as va

NAT = {"en": "nats", "ja": "ナット", "ko": "내트"}  # tests/app/test_i18n_glossary.py declares one word per language


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


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_an_accuracy_harm_is_drawn_in_percent_as_the_page_says_it_and_a_loss_in_nats(lang):
    # the page gives an accuracy's harm as '+3.2%' (effect_ and placebo_line_antecedent_accuracy); the axis and the
    # hover gave the bare fraction, 0.032, under a title without a unit
    cards = ab.committed_cards()
    if cards is None:
        pytest.skip("results/ablation.json not written yet")
    text = functools.partial(i18n.text, lang, "ablation.figure")
    loss = cards["induction-zero"]
    accuracy = dataclasses.replace(loss, metric="antecedent_accuracy", harm=0.032, placebo_harms=(0.01, -0.005, 0.02),
                                   placebo_interval=(-0.005, 0.02))  # fmt: skip
    fig = va.claim_figure(accuracy, text)
    assert fig.layout.xaxis.tickformat == ".1%" and fig.layout.xaxis.title.text == text("harm_antecedent_accuracy")
    assert all(":.1%}" in trace.hovertemplate for trace in fig.data)
    placebo_line = i18n.text(lang, "ablation", "placebo_line_antecedent_accuracy", n=3, mean=0.01, lo=-0.005, hi=0.02)
    assert "+1.0%" in placebo_line  # the page's words, in the same unit
    fig = va.claim_figure(loss, text)
    assert fig.layout.xaxis.tickformat is None and fig.layout.xaxis.title.text == text(f"harm_{loss.metric}")
    assert NAT[lang] in fig.layout.xaxis.title.text  # the unit, in the glossary's one word for it
    assert all(":.3f}" in trace.hovertemplate for trace in fig.data)
