"""Learned absolute positions: MiniLM's position vectors compared by cosine similarity."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from .common import curves, value_heatmap

if TYPE_CHECKING:
    from core.positions.learned import SimilarityView


def similarity_figure(view: SimilarityView, t) -> go.Figure:
    title = t("sim_title") + (t("pooled", k=view.factor) if view.factor > 1 else "")
    return value_heatmap(
        view.shown,
        x=view.axis,
        y=view.axis,
        title=title,
        x_title=t("position"),
        y_title=t("position"),
        value_name=t("similarity"),
        zmin=-1.0,
        zmax=1.0,
    )


def by_distance_figure(view: SimilarityView, t) -> go.Figure:
    by = view.by_distance
    return curves(
        by["distance"],
        {t("mean"): by["mean"]},
        bands={t("mean"): (by["min"], by["max"])},
        title=t("sim_dist_title"),
        x_title=t("distance"),
        y_title=t("similarity"),
    )
