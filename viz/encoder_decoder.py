"""Figures of /encoder-decoder: the stack with shapes, the three kinds of attention at one decoding step, the
next-token candidates, and the cross-attention heads' measured alignment. Data in (core.encoder_decoder.view and
results/encoder_decoder_alignment.json), figures out; words through `t`."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .heatmap import attention_heatmap, with_cell_marks
from .labels import safe_label
from .style import MASKED_COLOUR, PALETTE, SEQUENTIAL_SCALE, SHARE_FORMAT, base_layout

# One colour per kind of attention, the same in the diagram and in the panels' titles.
KIND_COLOURS = {"self": PALETTE[0], "masked": PALETTE[1], "cross": PALETTE[2], "ffn": "#e8e8e8", "tensor": "#ffffff"}
BOX_W, BOX_H, GAP = 3.8, 0.8, 0.35
COLUMNS = {"encoder": 0.0, "decoder": 5.2, "output": 5.2}


def _dims(block) -> str:
    """'H × S × S = 4 × 9 × 9'."""
    return " × ".join(block.symbols) + " = " + " × ".join(str(d) for d in block.shape)


def stack_said(blocks, layers: int, t) -> str:
    """What stack_figure draws, as a screen reader reads it: each side's boxes from the bottom with their shapes
    (the figure is shapes and labels, no numbers a caption could tell)."""
    sides = {side: [f"{t('block_' + b.key)} ({_dims(b)})" for b in blocks if b.side == side]
             for side in ("encoder", "decoder", "output")}  # fmt: skip
    return t("stack_said", encoder=", ".join(sides["encoder"]), decoder=", ".join(sides["decoder"] + sides["output"]),
             n=layers)  # fmt: skip


def stack_figure(blocks, layers: int, t) -> go.Figure:
    """The encoder (left) and decoder (right) drawn bottom to top as in the paper's figure, each box a sublayer
    or tensor with its shape; the encoder's output feeds every decoder layer's cross-attention (K and V), the
    decoder's own stream gives cross-attention its Q. blocks: core.encoder_decoder.view.stack_blocks."""
    fig = go.Figure()
    rows: dict[str, int] = {}
    centres = {}
    for block in blocks:
        side = "decoder" if block.side == "output" else block.side
        row = rows.get(side, 0)
        rows[side] = row + 1
        x0, y0 = COLUMNS[block.side], row * (BOX_H + GAP)
        centres[block.key] = (x0 + BOX_W / 2, y0 + BOX_H / 2)
        colour = KIND_COLOURS[block.kind]
        fig.add_shape(type="rect", x0=x0, x1=x0 + BOX_W, y0=y0, y1=y0 + BOX_H, fillcolor=colour, opacity=0.85,
                      line=dict(color="#444", width=2 if block.kind in ("self", "masked", "cross") else 1))  # fmt: skip
        fig.add_annotation(x=x0 + BOX_W / 2, y=y0 + BOX_H / 2, showarrow=False, font=dict(size=12),
                           text=f"{safe_label(t('block_' + block.key), 60)}<br>{_dims(block)}")  # fmt: skip
        if row:  # the stream flows upwards
            fig.add_annotation(x=x0 + BOX_W / 2, y=y0, ax=x0 + BOX_W / 2, ay=y0 - GAP, xref="x", yref="y", axref="x",
                               ayref="y", showarrow=True, arrowhead=2, text="")  # fmt: skip
    if "memory" in centres and "dec_cross" in centres:  # K and V come from the encoder's output
        (mx, my), (cx, cy) = centres["memory"], centres["dec_cross"]
        fig.add_annotation(x=cx - BOX_W / 2, y=cy, ax=mx + BOX_W / 2, ay=my, xref="x", yref="y", axref="x", ayref="y",
                           showarrow=True, arrowhead=2, arrowwidth=2, arrowcolor=KIND_COLOURS["cross"],
                           text="")  # fmt: skip
        fig.add_annotation(x=(mx + cx) / 2 + 0.2, y=(my + cy) / 2 + 0.25, showarrow=False, text=t("kv_from_encoder"),
                           font=dict(color=KIND_COLOURS["cross"]))  # fmt: skip
    for side, first, last in (("encoder", "enc_self", "enc_ffn"), ("decoder", "dec_self", "dec_ffn")):
        if first in centres and last in centres:  # the repeated layer
            x = COLUMNS[side] - 0.15
            y0, y1 = centres[first][1] - BOX_H / 2 - 0.1, centres[last][1] + BOX_H / 2 + 0.1
            fig.add_shape(type="rect", x0=x, x1=x + BOX_W + 0.3, y0=y0, y1=y1, line=dict(color="#888", dash="dot"))
            fig.add_annotation(x=x, y=y1, xanchor="left", yanchor="bottom", showarrow=False,
                               text=safe_label(t("times_layers", n=layers), 40))  # fmt: skip
    top = max(rows.values()) * (BOX_H + GAP)
    for side in ("encoder", "decoder"):
        fig.add_annotation(x=COLUMNS[side] + BOX_W / 2, y=top + 0.1, showarrow=False, font=dict(size=14),
                           text=f"<b>{safe_label(t('side_' + side), 40)}</b>")  # fmt: skip
    fig.update_xaxes(visible=False, range=[-0.4, COLUMNS["decoder"] + BOX_W + 0.4])
    fig.update_yaxes(visible=False, range=[-0.3, top + 0.5])
    return base_layout(fig, t("stack_title"), height=560, showlegend=False)


def encoder_figure(view, t) -> go.Figure:
    """The encoder's self-attention (S x S) for the view's layer and head."""
    return attention_heatmap(view.encoder, view.source_labels, view.source_labels, title=t("encoder_title", l=view.layer, h=view.head),
                             x_title=t("axis_key_source"), y_title=t("axis_query_source"), value_name=t("weight"),
                             zmax=1.0)  # fmt: skip


def self_figure(view, t) -> go.Figure:
    """The decoder's masked self-attention up to the view's step: row t is position t's query over the decoder
    inputs 0..t; the look-ahead mask hides the rest (grey)."""
    fig = attention_heatmap(view.self_attention, view.query_labels, view.input_labels,
                            masked=view.look_ahead, title=t("self_title", l=view.layer, h=view.head, t=view.step),
                            x_title=t("axis_key_decoder"), y_title=t("axis_query_decoder"), value_name=t("weight"),
                            zmax=1.0)  # fmt: skip
    return _highlight_row(fig, view.step, view.step + 1)


def cross_figure(view, t) -> go.Figure:
    """Cross-attention up to the view's step: rows are decoder queries, columns the source tokens (keys and values
    from the encoder's output); open squares mark the word alignments the grammar knows."""
    rows, cols = view.query_labels, view.source_labels
    fig = attention_heatmap(view.cross, rows, cols, title=t("cross_title", l=view.layer, h=view.head, t=view.step),
                            x_title=t("axis_key_cross"), y_title=t("axis_query_decoder"), value_name=t("weight"),
                            zmax=1.0)  # fmt: skip
    with_cell_marks(fig, view.alignment, rows, cols, t("aligned_mark"))
    return _highlight_row(fig, view.step, len(cols))


def _highlight_row(fig: go.Figure, row: int, n_cols: int) -> go.Figure:
    """Outline the current step's row (category axes: cells sit at integer positions)."""
    fig.add_shape(
        type="rect", x0=-0.5, x1=n_cols - 0.5, y0=row - 0.5, y1=row + 0.5, line=dict(color=PALETTE[3], width=2)
    )
    return fig


def top_figure(view, t) -> go.Figure:
    """The most likely next tokens at the view's step; the one written (or fed in) in a darker colour."""
    tokens = [safe_label(tok, 30) for tok, _ in view.top]
    probs = [round(float(p), 4) for _, p in view.top]
    colours = [PALETTE[2] if tok == view.chosen else MASKED_COLOUR for tok, _ in view.top]
    fig = go.Figure(go.Bar(x=probs, y=tokens, orientation="h", marker_color=colours, text=[f"{p:.3f}" for p in probs],
                           textposition="outside", hovertemplate="%{y}: %{x:.4f}<extra></extra>"))  # fmt: skip
    fig.update_xaxes(title_text=t("axis_probability"), range=[0, 1.15])
    fig.update_yaxes(autorange="reversed", type="category")
    return base_layout(fig, t("top_title", t=view.step), height=280)


def alignment_labels(grid, t) -> tuple[list[str], list[str]]:
    """The rows ('layer 0' ..) and columns ('head 0' ..) of the alignment map, as its figure and CSV name them."""
    n_layers, n_heads = np.shape(grid["accuracy"])
    return [t("layer_label", l=i) for i in range(n_layers)], [t("head_label", h=h) for h in range(n_heads)]


def alignment_map(grid, t) -> go.Figure:
    """Per-head alignment accuracy (layers x heads) with each cell's 95% interval in its text.
    grid: {"accuracy": (L, H), "low": (L, H), "high": (L, H)}. Shares drawn in %, as the page's sentences say them."""
    acc = np.asarray(grid["accuracy"], dtype=np.float32)
    low, high = np.asarray(grid["low"]), np.asarray(grid["high"])
    # the interval on lines of its own: plotly sets a map's labels in the type their longest line fits (a cell's width
    # over 0.65 em a character, viz.labels.cell_text_px), and a phone's four heads leave a cell 47 px (chromium):
    # '[58.1%, 68.0%]' on one line comes to 5 px type there, its parts on lines of their own to 10 px (a laptop's 12)
    text = [[f"{acc[i, j]:{SHARE_FORMAT}}<br>[{low[i, j]:{SHARE_FORMAT}},<br>{high[i, j]:{SHARE_FORMAT}}]"
             for j in range(acc.shape[1])] for i in range(acc.shape[0])]  # fmt: skip
    layers, heads = alignment_labels(grid, t)
    fig = go.Figure(go.Heatmap(
        z=acc, x=heads, y=layers,
        zmin=0.0, zmax=1.0, colorscale=SEQUENTIAL_SCALE, text=text, texttemplate="%{text}",
        hovertemplate=f"%{{y}}, %{{x}}: %{{z:{SHARE_FORMAT}}}<extra></extra>", colorbar=dict(thickness=12, tickformat=".0%"),
    ))  # fmt: skip
    fig.update_yaxes(autorange="reversed", type="category", title_text=t("axis_layer"))
    fig.update_xaxes(type="category", title_text=t("axis_head"))
    return base_layout(fig, t("map_title"), height=160 + 70 * acc.shape[0])


def alignment_bars(heads, diagonal, chance: float, t) -> go.Figure:
    """Every head's accuracy with its interval, best first, against the diagonal baseline (its interval shaded)
    and chance, in % as the page's sentences say them. heads: [{"layer", "head", "accuracy", "low", "high"}];
    diagonal: the same keys without layer/head."""
    heads = sorted(heads, key=lambda h: -h["accuracy"])
    labels = [t("head_name", l=h["layer"], h=h["head"]) for h in heads]
    acc = [h["accuracy"] for h in heads]
    fig = go.Figure(go.Bar(
        x=labels, y=acc, marker_color=PALETTE[2],
        error_y=dict(type="data", symmetric=False, array=[h["high"] - h["accuracy"] for h in heads],
                     arrayminus=[h["accuracy"] - h["low"] for h in heads]),
        hovertemplate=f"%{{x}}: %{{y:{SHARE_FORMAT}}}<extra></extra>", name=t("accuracy"),
    ))  # fmt: skip
    fig.add_hrect(y0=diagonal["low"], y1=diagonal["high"], fillcolor=PALETTE[1], opacity=0.2, line_width=0)
    fig.add_hline(y=diagonal["accuracy"], line_color=PALETTE[1], line_dash="dash",
                  annotation_text=t("diagonal_line", a=diagonal["accuracy"]), annotation_position="top right")  # fmt: skip
    fig.add_hline(y=chance, line_color="#777", line_dash="dot", annotation_text=t("chance_line", a=chance),
                  annotation_position="bottom right")  # fmt: skip
    fig.update_yaxes(range=[0, 1.05], tickformat=".0%", title_text=t("accuracy"))
    # what the columns are over what their names say, on lines of their own: on one line the Japanese (306 px) ran past
    # a phone's edge, centred on a plot its y axis's ticks and title push 81 px right of the figure's edge (chromium)
    fig.update_xaxes(type="category", title_text=f"{t('axis_head_name')}<br>{t('head_name_key')}", automargin=True)
    return base_layout(fig, t("bars_title"), height=360, showlegend=False)
