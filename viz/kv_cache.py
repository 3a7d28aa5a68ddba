"""Figures of the /kv-cache page: one generated token's attention (heads x positions, pooled) with what each
eviction policy keeps, every step's attention, the top-5 next tokens with and without eviction, the cache's bytes
as it grows, and the KL divergence per step. View objects of core/kv_cache/views.py in, plotly figures out; words
through `t`, the [kv_cache.figure] catalog section."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from core.kv_cache.views import EVICTED, PARTLY_EVICTED, Eviction, History, Memory, NextTokens, StepAttention

from .heatmap import attention_heatmap, figure, scale, standing_drop_px, subplot_grid
from .labels import safe_label, wrapped_label
from .masks import MARK_COLOURS, MASKED_MARK, cell_kind_legend
from .style import (
    BLUE,
    GREEN,
    LEGEND_AT_FOOT,
    MARGIN,
    MASKED_COLOUR,
    ORANGE,
    RED,
    WEIGHTS_SCALE,
    base_layout_dict,
)

POLICY_COLOURS = {"window": RED, "sinks_window": GREEN}
# The policy rows' kept positions: a kind of cell of their own, not a weight (drawn in the weights' blue they read as
# large weights). A dark green (ColorBrewer's Greens), far from every blue of the weights' scale and from the evicted
# grey for normal vision and the three dichromacies (the palette's bluish green is near the blues for a tritanope)
KEPT_COLOUR = "#006d2c"
# px at the figure's foot, under the colour bar, for the legend of the policy rows' cells: two lines of it, as plotly
# wraps a horizontal legend wider than the plot (the Japanese one at 390 px, the plot narrowed by its rows' labels:
# 48 px tall in chromium)
LEGEND_ROW = 50
PROMPT_LINE_PX = 2  # the dashed line where the prompt ends, as wide as the gaps between the policy rows' columns
PARTLY_EVICTED_MARK = "◐"  # a pooled column some of whose positions a policy evicts: part kept, part gone
EVICTION_MARKS = {EVICTED: MASKED_MARK, PARTLY_EVICTED: PARTLY_EVICTED_MARK}  # a kept column carries none
Words = Callable[..., str]
# The step map's rows' titles, in columns of text (viz.labels.label_columns), in lines their rows hold: the heads'
# (0.8 of the map) two lines of the heads' title and the policies' (0.2) two short ones of theirs. The figure's title
# and the marks' note under it are the page's text (app/ui.py), which the browser wraps.
TITLE_SIZE, NOTE_SIZE = 17, 12  # px
HEADS_TITLE_COLUMNS, POLICY_TITLE_COLUMNS = 24, 10
# Under the maps (px): the keys' labels, standing at -60 degrees (heatmap.standing_drop_px of the longest: pooled
# token labels run to 40 characters), then the keys' title, then the colour bar; the figure grows by them, the maps
# keep theirs. The keys' title's box ended 53-64 px below the labels' drop as estimated then (chromium at 390 px: 3 px
# into the bar set at 50, in ko with a long text 14 px; this estimate is no smaller), so the bar stands 72 px below it.
# The bar as drawn, its title across its top, the bar and its numbers, is 66 px tall (chromium at 390 px, en/ja/ko:
# a legend 50 px under its top lay over its numbers); 6 px more keep the legend under it clear.
MAPS_HEIGHT, KEY_TITLE, COLOUR_BAR_DRAWN = 300, 72, 66
COLOUR_BAR = COLOUR_BAR_DRAWN + 6
KEY_LABELS_UP_TO = 120  # columns; more keys go unlabelled (hover names them)
# The legend in the last LEGEND_ROW px of the figure, under the colour bar, from the figure's left edge (not the
# plot's, which the rows' labels push right: from there the Japanese legend took two lines at 390 px)
LEGEND_UNDER_ALL = dict(LEGEND_AT_FOOT, xref="container", x=0, xanchor="left")
AXES = ("xaxis", "yaxis")  # a subplot grid's axes: the layout entries these figures take from make_subplots


def step_figure(view: StepAttention, t: Words) -> go.Figure:
    """Top: the weights of every head and their mean over the positions (bins when pooled). Bottom: the share of
    each bin that each eviction policy keeps (1 = kept, 0 = evicted). Evicted bins carry /masks' cross and bins a
    policy evicts in part (pooled columns) a half-filled circle, so neither is told by colour alone; the note under
    the title says which mark is which."""
    x = [safe_label(s, 40) for s in view.labels]
    policies = list(view.kept)
    heads = dict(
        type="heatmap",
        z=view.rows,
        x=x,
        y=step_rows(view, t),
        colorscale=scale(WEIGHTS_SCALE),
        zmin=0,
        # under the keys' axis, lying down: a phone's 390 px leave the columns what a standing bar would take
        colorbar=dict(
            title=dict(text=t("weight"), side="top"),
            orientation="h",
            thickness=10,
            len=0.5,
            nticks=4,
            x=1,
            xanchor="right",
            y=-_under_keys(x) / MAPS_HEIGHT,  # under the keys' labels and title, however long they are
            yanchor="top",
        ),
        hovertemplate="%{y}<br>%{x}<br>" + t("weight") + ": %{z:.3f}<extra></extra>",
        xaxis="x",
        yaxis="y",
    )
    kept = dict(
        type="heatmap",
        z=np.vstack([view.kept[p] for p in policies]).astype(np.float32),
        x=x,
        y=[t(f"policy_{p}") for p in policies],
        colorscale=[[0, MASKED_COLOUR], [1, KEPT_COLOUR]],
        zmin=0,
        zmax=1,
        showscale=False,
        text=[[EVICTION_MARKS.get(status, "") for status in view.evicted[p]] for p in policies],
        texttemplate="%{text}",
        textfont=dict(color=MARK_COLOURS[False], size=10),  # a mark per column even at a phone's width
        xgap=PROMPT_LINE_PX,  # the gaps between columns, where the prompt's end is drawn
        hovertemplate="%{y}<br>%{x}<br>" + t("kept_share") + ": %{z:.2f}<extra></extra>",
        xaxis="x2",
        yaxis="y2",
    )
    title = t("step_title", step=view.step, layer=view.layer, n=view.n)
    statuses = {status for p in policies for status in view.evicted[p]}
    note = ""
    if PARTLY_EVICTED in statuses:
        note = t("marks_partly", evicted=MASKED_MARK, partly=PARTLY_EVICTED_MARK)
    elif EVICTED in statuses:
        note = t("marks_evicted", evicted=MASKED_MARK)
    bottom = math.ceil(_under_keys(x) + COLOUR_BAR + LEGEND_ROW)  # whole px: the maps keep MAPS_HEIGHT exactly
    # the legend of the policy rows' two kinds of cell, a square of each colour (a heatmap has no legend entry),
    # under the colour bar (LEGEND_UNDER_ALL)
    legend = [
        cell_kind_legend(name, fill, xaxis="x2", yaxis="y2")
        for fill, name in ((KEPT_COLOUR, t("kept")), (MASKED_COLOUR, f"{t('evicted')} ({MASKED_MARK})"))
    ]
    layout = _step_grid()
    # the top map's keys too: its x axis matches this one, which shows the ticks
    layout["xaxis2"] |= dict(title=dict(text=t("key_axis")), type="category", tickangle=-60,
                             showticklabels=len(x) <= KEY_LABELS_UP_TO)  # fmt: skip
    # the two rows' titles stand one above the other: a size smaller and in lines their panels' heights hold
    rows_titles = {"yaxis": wrapped_label(t("heads_axis"), HEADS_TITLE_COLUMNS),
                   "yaxis2": wrapped_label(t("policy_axis"), POLICY_TITLE_COLUMNS)}  # fmt: skip
    for axis, text in rows_titles.items():
        layout[axis] |= dict(autorange="reversed", type="category", title=dict(text=text, font=dict(size=11)))
    layout |= base_layout_dict(height=MARGIN["t"] + MAPS_HEIGHT + bottom)
    layout |= dict(title=dict(text=title, subtitle=dict(text=note, font=dict(size=NOTE_SIZE)),
                              font=dict(size=TITLE_SIZE)), margin=dict(MARGIN, b=bottom), showlegend=True,
                   legend=LEGEND_UNDER_ALL)  # fmt: skip
    if not view.pooled and view.prompt_length <= view.position:  # where the prompt ends, on both maps
        # on the boundary between the prompt's last column and the first generated one: over the weights' map, and
        # under the policy rows' cells, in the gap between their columns, so it hides no kept (or evicted) cell
        at = view.prompt_length - 0.5
        layout["shapes"] = [
            dict(type="line", x0=at, x1=at, xref=xref, y0=0, y1=1, yref=f"{yref} domain", layer=layer,
                 line=dict(color=ORANGE, width=PROMPT_LINE_PX, dash="dash"))
            for xref, yref, layer in (("x", "y", "above"), ("x2", "y2", "below"))
        ]  # fmt: skip
    # Plain trace and layout dicts on a cached subplot grid, one unvalidated figure (as viz/moe and
    # viz/flash_attention): plotly's validation, update_*axes' path parsing and add_vline took 45-75 ms of CPU for
    # this figure on every /kv-cache rerun (benchmarks/figure_build_cost.py), holding the interpreter lock every
    # visitor shares; tests/viz/test_kv_cache_unvalidated.py compares it with the validated calls it replaced.
    return figure([heads, kept, *legend], layout)


def _step_grid() -> dict:
    """The step figure's two rows, their keys' axes shared (make_subplots' axes, the same for every step)."""
    return subplot_grid(AXES, rows=2, cols=1, shared_xaxes=True, row_heights=[0.8, 0.2], vertical_spacing=0.03)[0]


def step_rows(view: StepAttention, t: Words) -> list[str]:
    """The step map's rows as its figure and CSV name them: 'head 0' .. and 'mean' (StepAttention.rows)."""
    return [t("head", h=h) for h in range(view.weights.shape[0])] + [t("mean")]


def _under_keys(labels: list[str]) -> float:
    """Pixels below the maps that the keys' labels (when shown) and their title take."""
    shown = labels if len(labels) <= KEY_LABELS_UP_TO else []
    return standing_drop_px(shown) + KEY_TITLE


def history_figure(hist: History, t: Words) -> go.Figure:
    """Every step's query (rows) over the positions (columns): the rows of the attention matrix a decoder
    computes one at a time while generating; cells after a row's own position did not exist yet."""
    head = t("mean") if hist.head is None else t("head", h=hist.head)
    title = t("history_title", layer=hist.layer, head=head)
    return attention_heatmap(
        np.nan_to_num(hist.weights),
        hist.row_labels,
        hist.col_labels,
        masked=hist.masked,
        title=title,
        x_title=t("key_axis"),
        y_title=t("query_axis"),
        zmax=None,
        value_name=t("weight"),
        show_values=False,
        height=max(260, 120 + 26 * len(hist.row_labels)),
    )


def top_figure(view: NextTokens, t: Words) -> go.Figure:
    """The five most likely next tokens with the full cache and with each policy's evicted cache."""
    panels = [("full", view.top_tokens, view.top_probs)] + [
        (o.policy, o.top_tokens, o.top_probs) for o in view.policies
    ]
    titles = [t("full")] + [t("policy_kl", policy=t(f"policy_{o.policy}"), kl=o.kl) for o in view.policies]
    layout, placed = _columns_grid(len(panels))
    traces = []
    for i, (name, tokens, probs) in enumerate(panels, start=1):
        axis = "" if i == 1 else str(i)
        traces.append(
            dict(
                type="bar",
                x=[float(p) for p in probs][::-1],
                y=[f"{r + 1}. {safe_label(tok, 20)}" for r, tok in enumerate(tokens)][::-1],
                orientation="h",
                marker=dict(color=POLICY_COLOURS.get(name, BLUE)),
                hovertemplate="%{y}: %{x:.3f}<extra></extra>",
                showlegend=False,
                xaxis=f"x{axis}",
                yaxis=f"y{axis}",
            )
        )
        layout[f"xaxis{axis}"] |= dict(range=[0, 1], title=dict(text=t("probability")))
    # the panels' titles where make_subplots puts them (it leaves out an empty one)
    notes = [note | dict(text=text) for note, text in zip(placed, [safe_label(s, 60) for s in titles]) if text]
    if notes:
        layout["annotations"] = notes
    # plain dicts, one unvalidated figure: see step_figure
    return figure(traces, layout | base_layout_dict(height=300))


def _columns_grid(n: int) -> tuple[dict, list[dict]]:
    """make_subplots(1, n)'s axes and where it puts the n panels' titles (each title's annotation, its text to set)."""
    grid = subplot_grid((*AXES, "annotations"), rows=1, cols=n, subplot_titles=["-"] * n)[0]
    return {k: v for k, v in grid.items() if k.startswith(AXES)}, grid["annotations"]


def memory_figure(view: Memory, t: Words) -> go.Figure:
    """Cache bytes against the context: measured, the formula (GQA), multi-head attention's, each policy's."""
    curves = view.curves
    x = curves["context"]
    one_step = len(x) == 1  # a line through one point draws nothing: after one new token, every curve is its point
    lines = [
        ("mha", t("mem_mha"), ORANGE, "dash", "lines"),
        ("gqa", t("mem_gqa"), BLUE, "solid", "lines"),
        ("measured", t("mem_measured"), BLUE, "solid", "markers"),
    ] + [(p, t(f"policy_{p}"), POLICY_COLOURS[p], "dot", "lines") for p in POLICY_COLOURS if p in curves]
    traces = [
        dict(
            type="scatter",
            x=list(x),
            y=[v / 2**20 for v in curves[key]],
            name=safe_label(name, 60),
            mode="markers" if one_step else mode,
            line=dict(color=colour, dash=dash),
            marker=dict(size=7, symbol="circle-open"),
            hovertemplate="%{x}: %{y:.3f} MiB<extra></extra>",
        )
        for key, name, colour, dash, mode in lines
    ]
    layout = base_layout_dict(t("mem_title"), 360, legend=dict(LEGEND_AT_FOOT))
    layout |= dict(xaxis=dict(title=dict(text=t("context_axis")), gridcolor="#eee"),
                   yaxis=dict(title=dict(text="MiB"), gridcolor="#eee", rangemode="tozero"))  # fmt: skip
    return figure(traces, layout)  # plain dicts, one unvalidated figure: see step_figure


def kl_figure(view: Eviction, t: Words) -> go.Figure:
    """KL(full || evicted) per generated token, one line per policy (0: nothing evicted yet)."""
    x = [safe_label(s, 30) for s in view.step_labels]
    traces = [
        dict(
            type="scatter",
            x=x,
            y=list(values),
            name=t(f"policy_{policy}"),
            mode="lines+markers",
            line=dict(color=POLICY_COLOURS.get(policy, BLUE)),
            hovertemplate="%{x}: %{y:.4f}<extra></extra>",
        )
        for policy, values in view.kl.items()
    ]
    layout = base_layout_dict(t("kl_title"), 320, legend=dict(LEGEND_AT_FOOT))
    layout |= dict(xaxis=dict(type="category", title=dict(text=t("query_axis"))),
                   yaxis=dict(title=dict(text=t("kl_axis")), rangemode="tozero", gridcolor="#eee"))  # fmt: skip
    return figure(traces, layout)  # plain dicts, one unvalidated figure: see step_figure
