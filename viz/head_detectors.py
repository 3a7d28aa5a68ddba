"""Figures of /head-detectors: one detector's score for every head, layers down, heads across. Data in
(core.head_detectors), figure out; words through `t`."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .style import WEIGHTS_SCALE, base_layout


def detector_grid(scores, uniform: float, detector_name: str, t) -> go.Figure:
    """scores (L, H) in [0, 1]; uniform: what an evenly spreading head scores (in the title, the level to beat)."""
    z = np.round(np.asarray(scores, dtype=np.float64), 3).astype(np.float32)
    n_layers, n_heads = z.shape
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(n_heads)),
            y=list(range(n_layers)),
            colorscale=WEIGHTS_SCALE,
            zmin=0.0,
            zmax=1.0,
            colorbar=dict(title=t("score")),
            hovertemplate=f"{t('layer')} %{{y}}, {t('head')} %{{x}}<br>{t('score')}: %{{z:.3f}}<extra></extra>",
        )
    )
    fig.update_xaxes(title=t("head"), dtick=1)
    fig.update_yaxes(title=t("layer"), autorange="reversed", dtick=1 if n_layers <= 12 else 2)
    height = 160 + 18 * n_layers
    return base_layout(fig, t("grid_title", detector=detector_name, uniform=uniform), height=height)
