"""viz/kv_cache's step map, next-token bars, memory and KL curves are built from plain dicts on cached subplot grids,
unvalidated: what each sends is what the validated plotly calls it replaced sent (kept here as references:
make_subplots, go.Heatmap / go.Bar / go.Scatter, update_*axes, add_vline, base_layout's update_layout), and what a
validated rebuild of it sends."""

from __future__ import annotations

import dataclasses
import functools
import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from app import i18n
from core.kv_cache import views
from tests.fake_traces import fake_generation
from viz import kv_cache as kv
from viz.style import base_layout


def sent(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def ref_step_figure(view, t):
    x = [kv.safe_label(s, 40) for s in view.labels]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.8, 0.2], vertical_spacing=0.03)
    fig.add_trace(go.Heatmap(
        z=view.rows, x=x, y=kv.step_rows(view, t), colorscale=kv.WEIGHTS_SCALE, zmin=0,
        colorbar=dict(title=dict(text=t("weight"), side="top"), orientation="h", thickness=10, len=0.5, nticks=4, x=1,
                      xanchor="right", y=-kv._under_keys(x) / kv.MAPS_HEIGHT, yanchor="top"),
        hovertemplate="%{y}<br>%{x}<br>" + t("weight") + ": %{z:.3f}<extra></extra>",
    ), row=1, col=1)  # fmt: skip
    policies = list(view.kept)
    fig.add_trace(go.Heatmap(
        z=np.vstack([view.kept[p] for p in policies]).astype(np.float32), x=x, y=[t(f"policy_{p}") for p in policies],
        colorscale=[[0, kv.MASKED_COLOUR], [1, kv.KEPT_COLOUR]], zmin=0, zmax=1, showscale=False,
        text=[[kv.EVICTION_MARKS.get(s, "") for s in view.evicted[p]] for p in policies], texttemplate="%{text}",
        textfont=dict(color=kv.MARK_COLOURS[False], size=10), xgap=2,
        hovertemplate="%{y}<br>%{x}<br>" + t("kept_share") + ": %{z:.2f}<extra></extra>",
    ), row=2, col=1)  # fmt: skip
    statuses = {s for p in policies for s in view.evicted[p]}
    note = ""
    if kv.PARTLY_EVICTED in statuses:
        note = t("marks_partly", evicted=kv.MASKED_MARK, partly=kv.PARTLY_EVICTED_MARK)
    elif kv.EVICTED in statuses:
        note = t("marks_evicted", evicted=kv.MASKED_MARK)
    for fill, name in ((kv.KEPT_COLOUR, t("kept")), (kv.MASKED_COLOUR, f"{t('evicted')} ({kv.MASKED_MARK})")):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, hoverinfo="skip",
                                 marker=dict(symbol="square", size=14, color=fill, line=dict(color="#888", width=1))),
                      row=2, col=1)  # fmt: skip
    bottom = math.ceil(kv._under_keys(x) + kv.COLOUR_BAR + kv.LEGEND_ROW)
    base_layout(fig, height=kv.MARGIN["t"] + kv.MAPS_HEIGHT + bottom)
    fig.update_layout(showlegend=True, legend=dict(orientation="h", xref="container", x=0, xanchor="left",
                                                   yref="container", y=0, yanchor="bottom"))  # fmt: skip
    fig.update_layout(title=dict(text=t("step_title", step=view.step, layer=view.layer, n=view.n),
                                 subtitle=dict(text=note, font_size=kv.NOTE_SIZE), font_size=kv.TITLE_SIZE),
                      margin_b=bottom)  # fmt: skip
    fig.update_xaxes(type="category", tickangle=-60, row=2, col=1, title_text=t("key_axis"),
                     showticklabels=len(x) <= kv.KEY_LABELS_UP_TO)  # fmt: skip
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_yaxes(title_text=kv.wrapped_label(t("heads_axis"), kv.HEADS_TITLE_COLUMNS), title_font_size=11, row=1,
                     col=1)  # fmt: skip
    fig.update_yaxes(title_text=kv.wrapped_label(t("policy_axis"), kv.POLICY_TITLE_COLUMNS), title_font_size=11,
                     row=2, col=1)  # fmt: skip
    if not view.pooled and view.prompt_length <= view.position:
        fig.add_vline(x=view.prompt_length - 0.5, line=dict(color=kv.ORANGE, width=2, dash="dash"), row=1, col=1,
                      layer="above")  # fmt: skip
        fig.add_vline(x=view.prompt_length - 0.5, line=dict(color=kv.ORANGE, width=2, dash="dash"), row=2, col=1,
                      layer="below")  # fmt: skip
    return fig


def ref_top_figure(view, t):
    panels = [("full", view.top_tokens, view.top_probs)] + [
        (o.policy, o.top_tokens, o.top_probs) for o in view.policies
    ]
    titles = [t("full")] + [t("policy_kl", policy=t(f"policy_{o.policy}"), kl=o.kl) for o in view.policies]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[kv.safe_label(s, 60) for s in titles])
    for i, (name, tokens, probs) in enumerate(panels, start=1):
        fig.add_trace(go.Bar(
            x=[float(p) for p in probs][::-1], y=[f"{r + 1}. {kv.safe_label(tok, 20)}" for r, tok in enumerate(tokens)][::-1],
            orientation="h", marker_color=kv.POLICY_COLOURS.get(name, kv.BLUE),
            hovertemplate="%{y}: %{x:.3f}<extra></extra>", showlegend=False,
        ), row=1, col=i)  # fmt: skip
        fig.update_xaxes(range=[0, 1], title_text=t("probability"), row=1, col=i)
    return base_layout(fig, height=300)


def ref_memory_figure(view, t):
    curves = view.curves
    fig = go.Figure()
    lines = [("mha", t("mem_mha"), kv.ORANGE, "dash", "lines"), ("gqa", t("mem_gqa"), kv.BLUE, "solid", "lines"),
             ("measured", t("mem_measured"), kv.BLUE, "solid", "markers")] + [
        (p, t(f"policy_{p}"), kv.POLICY_COLOURS[p], "dot", "lines") for p in kv.POLICY_COLOURS if p in curves]  # fmt: skip
    for key, name, colour, dash, mode in lines:
        fig.add_trace(go.Scatter(x=curves["context"], y=[v / 2**20 for v in curves[key]], name=kv.safe_label(name, 60),
                                 mode=mode, line=dict(color=colour, dash=dash), marker=dict(size=7, symbol="circle-open"),
                                 hovertemplate="%{x}: %{y:.3f} MiB<extra></extra>"))  # fmt: skip
    base_layout(fig, title=t("mem_title"), height=360, legend=kv.LEGEND_AT_FOOT)
    fig.update_xaxes(title_text=t("context_axis"), gridcolor="#eee")
    fig.update_yaxes(title_text="MiB", gridcolor="#eee", rangemode="tozero")
    return fig


def ref_kl_figure(view, t):
    fig = go.Figure()
    x = [kv.safe_label(s, 30) for s in view.step_labels]
    for policy, values in view.kl.items():
        fig.add_trace(go.Scatter(x=x, y=values, name=t(f"policy_{policy}"), mode="lines+markers",
                                 line=dict(color=kv.POLICY_COLOURS.get(policy, kv.BLUE)),
                                 hovertemplate="%{x}: %{y:.4f}<extra></extra>"))  # fmt: skip
    base_layout(fig, title=t("kl_title"), height=320, legend=kv.LEGEND_AT_FOOT)
    fig.update_xaxes(type="category", title_text=t("query_axis"))
    fig.update_yaxes(title_text=t("kl_axis"), rangemode="tozero", gridcolor="#eee")
    return fig


def step_views():
    """Unpooled steps (the prompt's end marked on both maps once the query is past it), pooled ones with columns
    evicted whole and in part, markup and long wide labels, and more columns than get labels."""
    gen = fake_generation()
    out = [views.step_attention(gen, step, 0, cols) for step in range(3) for cols in (96, 3)]
    view = views.step_attention(gen, 2, 0)
    out.append(dataclasses.replace(view, labels=["<b>0 A</b>"] + ["猫" * 30] * (len(view.labels) - 1)))
    many = kv.KEY_LABELS_UP_TO + 10
    out.append(dataclasses.replace(
        view, position=many - 1, labels=[f"{i} t" for i in range(many)], weights=np.full((2, many), 1 / many),
        mean=np.full(many, 1 / many), kept={p: np.ones(many) for p in view.kept},
        evicted={p: (views.KEPT,) * many for p in view.kept},
    ))  # fmt: skip
    return out


def without_eviction():
    """A generation whose model evicts by itself: no policy measured, NaN curves, a single next-token panel."""
    gen = fake_generation()
    return dataclasses.replace(gen, steps=[dataclasses.replace(s, policies={}) for s in gen.steps])


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_every_kv_cache_figure_sends_what_the_validated_plotly_calls_sent(lang):
    t = functools.partial(i18n.text, lang, "kv_cache.figure")
    gen, bare = fake_generation(), without_eviction()
    pairs = [(kv.step_figure(v, t), ref_step_figure(v, t)) for v in step_views()]
    for g in (gen, bare):
        pairs += [
            (kv.top_figure(views.next_tokens(g, s), t), ref_top_figure(views.next_tokens(g, s), t)) for s in range(3)
        ]
        pairs += [(kv.memory_figure(views.memory(g), t), ref_memory_figure(views.memory(g), t)),
                  (kv.kl_figure(views.eviction(g), t), ref_kl_figure(views.eviction(g), t))]  # fmt: skip
    for fig, reference in pairs:
        out = sent(fig)
        assert out == sent(reference)
        assert out == sent(go.Figure(fig.to_dict()))  # and validation changes nothing in it
    marks = [sent(fig)["layout"].get("shapes") for fig, _ in pairs[:6]]
    assert any(marks) and not all(marks)  # the prompt's end marked on some maps and not on others, both compared
    assert len(sent(kv.top_figure(views.next_tokens(bare, 0), t))["data"]) == 1


def test_a_figure_changed_after_it_is_built_leaves_the_next_one_as_it_was():
    """The grids are cached: a page that fits a built figure (its titles, axes, shapes) changes nothing in the
    next."""
    t = functools.partial(i18n.text, "en", "kv_cache.figure")
    step, top = views.step_attention(fake_generation(), 2, 0), views.next_tokens(fake_generation(), 2)
    first = kv.step_figure(step, t), kv.top_figure(top, t)
    for fig in first:
        fig.update_xaxes(domain=[0.2, 0.3], title_text="changed")
        fig.update_yaxes(domain=[0.2, 0.3])
        fig.update_annotations(text="changed", x=0.9)
        fig.layout.xaxis.domain = [0.1, 0.2]  # in place too
    assert sent(kv.step_figure(step, t)) == sent(ref_step_figure(step, t))
    assert sent(kv.top_figure(top, t)) == sent(ref_top_figure(top, t))
