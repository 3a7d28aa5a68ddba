"""Figures of /head-detectors: one detector's score for every head, layers down, heads across. A
core.head_detectors.DetectorView in, figure out; words through `t`, the [head_detectors.figure] catalog section."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.head_detectors import DetectorView

from .style import WEIGHTS_SCALE, base_layout, colour_bar


def detector_grid(view: DetectorView, t) -> go.Figure:
    """Scores (L, H) in [0, 1]; the title names the detector and what an evenly spreading head scores (the level
    to beat)."""
    z = np.round(np.asarray(view.scores, dtype=np.float64), 3).astype(np.float32)
    n_layers = z.shape[0]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=view.head_labels,
            y=view.layer_labels,
            colorscale=WEIGHTS_SCALE,
            zmin=0.0,
            zmax=1.0,
            colorbar=colour_bar(t("score")),
            hovertemplate=f"{t('layer')} %{{y}}, {t('head')} %{{x}}<br>{t('score')}: %{{z:.3f}}<extra></extra>",
        )
    )
    fig.update_xaxes(title=t("head"), dtick=1)
    fig.update_yaxes(title=t("layer"), autorange="reversed", dtick=1 if n_layers <= 12 else 2)
    height = 160 + 18 * n_layers
    title = t("grid_title", detector=t(f"name_{view.detector}"), uniform=view.uniform)
    return base_layout(fig, title, height=height)
