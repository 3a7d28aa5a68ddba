"""Figures of /logit-lens: stages (embeddings, then after each layer) down, positions across; colour = the
probability the lens gives the model's final prediction, text = the lens's own top token. Data in
(core.logit_lens.LensView), figure out; words through `t`, the [logit_lens.figure] catalog section."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.logit_lens import LensView

from .labels import safe_label
from .style import WEIGHTS_SCALE, base_layout, colour_bar


def stage_labels(view: LensView, t) -> list[str]:
    """The rows of `final_prob` as the figure and its CSV name them: the embeddings, then after each layer."""
    return [t("stage_embed")] + [t("stage_layer", l=s) for s in range(view.n_stages - 1)]


def lens_figure(view: LensView, t) -> go.Figure:
    S, n, k = view.top_ids.shape
    z = np.round(view.final_prob.numpy().astype(np.float64), 3).astype(np.float32)  # (S, n)
    text = [[safe_label(view.top_tokens[s][i][0], 8) for i in range(n)] for s in range(S)]
    hover = [
        [
            "<br>".join(f"{safe_label(w, 20)}: {p:.3f}" for w, p in zip(view.top_tokens[s][i], view.top_probs[s, i].tolist()))
            for i in range(n)
        ]
        for s in range(S)
    ]  # fmt: skip
    x = [safe_label(s, 40) for s in view.position_labels]
    y = stage_labels(view, t)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            text=text,
            texttemplate="%{text}" if n <= 24 else None,
            customdata=hover,
            colorscale=WEIGHTS_SCALE,
            zmin=0.0,
            zmax=1.0,
            colorbar=colour_bar(t("prob")),
            hovertemplate=f"%{{x}} · %{{y}}<br>{t('prob')}: %{{z:.3f}}<br>{t('top')}:<br>%{{customdata}}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", title_text=t("stage_axis"))
    fig.update_xaxes(tickangle=-60, title_text=t("position_axis"))
    return base_layout(fig, t("figure_title", n=n, s=S), height=220 + 16 * S)
