"""Positions past the training length: accuracy per position of the four kinds trained on "the most recent
marker", with the training length and chance marked. A view from core.positions.extrapolation in, a figure out."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from .common import curves

if TYPE_CHECKING:
    from core.positions.extrapolation import ExtrapolationView


def accuracy_figure(view: ExtrapolationView, t) -> go.Figure:
    """One line per kind (learned stops where its table does: no value past it)."""
    return curves(
        view.positions,
        {t(f"ex_{kind}"): view.accuracy[kind] for kind in view.accuracy},
        title=t("ex_fig_title", n=view.train_length, seeds=len(view.seeds)),
        x_title=t("ex_x"),
        y_title=t("ex_y"),
        vlines=[(view.train_length - 0.5, t("ex_train_end", n=view.train_length))],
        hlines=[(view.chance, t("ex_chance", v=view.chance))],
        height=420,
    )
