"""viz/logit_lens' map is built from plain dicts, unvalidated: what it sends is what the validated plotly calls it
replaced sent (kept here as the reference: go.Heatmap, update_*axes, base_layout's update_layout), and what a
validated rebuild of it sends."""

from __future__ import annotations

import functools
import json

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from app import i18n
from core.logit_lens import LensView
from viz import logit_lens as figures
from viz.labels import LABELS_IN_HOVER, safe_label
from viz.style import WEIGHTS_SCALE, base_layout, colour_bar


def sent(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def ref_lens_figure(view, t):
    S, n, k = view.top_ids.shape
    z = np.round(view.final_prob.numpy().astype(np.float64), 3).astype(np.float32)
    text = [[safe_label(view.top_tokens[s][i][0], 8) for i in range(n)] for s in range(S)]
    hover = [["<br>".join(f"{safe_label(w, 20)}: {p:.3f}" for w, p in zip(view.top_tokens[s][i],
                                                                          view.top_probs[s, i].tolist()))
              for i in range(n)] for s in range(S)]  # fmt: skip
    fig = go.Figure(go.Heatmap(
        z=z, x=[safe_label(s, 40) for s in view.position_labels], y=figures.stage_labels(view, t), text=text,
        texttemplate="%{text}" if n <= 24 else None, meta=LABELS_IN_HOVER if n <= 24 else None, customdata=hover, colorscale=WEIGHTS_SCALE, zmin=0.0, zmax=1.0,
        colorbar=colour_bar(t("prob")),
        hovertemplate=f"%{{x}} · %{{y}}<br>{t('prob')}: %{{z:.3f}}<br>{t('top')}:<br>%{{customdata}}<extra></extra>",
    ))  # fmt: skip
    fig.update_yaxes(autorange="reversed", title_text=t("stage_axis"))
    fig.update_xaxes(tickangle=-60, title_text=t("position_axis"))
    return base_layout(fig, t("figure_title", n=n, s=S), height=220 + 16 * S)


def lens_view(n: int, seed: int) -> LensView:
    """n positions, 4 stages, top 3, tokens repeating across cells (markup and wide ones among them)."""
    g = torch.Generator().manual_seed(seed)
    words = ["the", " <b>", "猫", " Paris", "&", "\n"]
    ids = torch.randint(len(words), (4, n, 3), generator=g)
    probs = torch.rand(4, n, 3, generator=g).sort(dim=-1, descending=True).values / 3
    final = torch.rand(4, n, generator=g)
    return LensView(
        tokens=[words[i % len(words)] for i in range(n)], top_ids=ids,
        top_tokens=[[[words[j] for j in ids[s, i].tolist()] for i in range(n)] for s in range(4)], top_probs=probs,
        final_ids=torch.zeros(n, dtype=torch.long), final_prob=final, final_is_top=final > 0.5,
        first_stage=[None] * n,
    )  # fmt: skip


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
@pytest.mark.parametrize("n", [1, 5, 30])  # above 24 positions the cells carry no text
def test_lens_figure_sends_what_the_validated_plotly_calls_sent(lang, n):
    t = functools.partial(i18n.text, lang, "logit_lens.figure")
    view = lens_view(n, seed=n)
    fig = figures.lens_figure(view, t)
    out = sent(fig)
    assert out == sent(ref_lens_figure(view, t))
    assert out == sent(go.Figure(fig.to_dict()))  # and validation changes nothing in it
    assert ("texttemplate" in out["data"][0]) == (n <= 24)
