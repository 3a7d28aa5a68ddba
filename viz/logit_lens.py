"""Figures of /logit-lens: stages (embeddings, then after each layer) down, positions across; colour = the
probability the lens gives the model's final prediction, text = the lens's own top token. Data in
(core.logit_lens.LensView), figure out; words through `t`, the [logit_lens.figure] catalog section."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.logit_lens import LensView

from .heatmap import figure, scale
from .labels import LABELS_IN_HOVER, safe_label
from .style import WEIGHTS_SCALE, base_layout_dict, colour_bar


def stage_labels(view: LensView, t) -> list[str]:
    """The rows of `final_prob` as the figure and its CSV name them: the embeddings, then after each layer."""
    return [t("stage_embed")] + [t("stage_layer", l=s) for s in range(view.n_stages - 1)]


def lens_figure(view: LensView, t) -> go.Figure:
    S, n, _ = view.top_ids.shape
    z = np.round(view.final_prob.numpy().astype(np.float64), 3).astype(np.float32)  # (S, n)
    text = [[safe_label(view.top_tokens[s][i][0], 8) for i in range(n)] for s in range(S)]
    # each distinct top token escaped once and the probabilities read out of torch once: a lens's few tokens repeat
    # over its stages x positions x k cells, and escaping each cell's was most of what this figure took unvalidated
    named = {w: safe_label(w, 20) for w in {w for stage in view.top_tokens for cell in stage for w in cell}}
    probs = view.top_probs.tolist()
    hover = [
        ["<br>".join(f"{named[w]}: {p:.3f}" for w, p in zip(view.top_tokens[s][i], probs[s][i])) for i in range(n)]
        for s in range(S)
    ]
    x = [safe_label(s, 40) for s in view.position_labels]
    heat = dict(
        type="heatmap",
        z=z,
        x=x,
        y=stage_labels(view, t),
        text=text,
        customdata=hover,
        colorscale=scale(WEIGHTS_SCALE),
        zmin=0.0,
        zmax=1.0,
        colorbar=colour_bar(t("prob")),
        hovertemplate=f"%{{x}} · %{{y}}<br>{t('prob')}: %{{z:.3f}}<br>{t('top')}:<br>%{{customdata}}<extra></extra>",
    )
    if n <= 24:
        # the hover names each cell's top tokens: a page leaves the text out where it would be too small to read
        heat |= dict(texttemplate="%{text}", meta=LABELS_IN_HOVER)
    layout = base_layout_dict(t("figure_title", n=n, s=S), 220 + 16 * S)
    layout |= dict(yaxis=dict(autorange="reversed", title=dict(text=t("stage_axis"))),
                   xaxis=dict(tickangle=-60, title=dict(text=t("position_axis"))))  # fmt: skip
    # Plain trace and layout dicts, one unvalidated figure (as viz/moe): plotly's validation of the hover's and
    # text's cells was ~2/3 of this figure's 20-33 ms of CPU on every rerun; tests/viz/test_logit_lens_unvalidated.py
    # compares it with the validated go.Heatmap, update_*axes and base_layout calls it replaced.
    return figure([heat], layout)
