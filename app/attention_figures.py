"""The figures of the attention views, from a Trace: core computes the arrays, viz draws them. No Streamlit
here, so benchmarks/bench_views.py times and weighs exactly what the page sends.

Budget (<= 1 MB per view): a float32 cell costs about 7.3 bytes of plotly JSON (base64), so one figure
carries at most FULL_RES_MAX^2 cells (256^2 ~ 0.5 MB); beyond that, block means (core.views.block_pool), or a
full-resolution window the reader moves.
"""

from __future__ import annotations

import numpy as np
import torch

from app import i18n
from core import views
from core.downsample import bin_labels
from viz.grid import head_grid, token_grid
from viz.heatmap import MASKED_COLOUR, attention_heatmap, matrix_heatmap
from viz.labels import indexed_labels

FULL_RES_MAX = 256  # tokens per side drawn cell by cell
TILE, TILE_MANY, MANY_HEADS = 24, 16, 100  # model-view tile size; smaller tiles when there are many heads


def english(key: str, /, **fmt) -> str:
    return i18n.text("en", "attention.figure", key, **fmt)


def token_labels(trace, index: int = 0, hide_special: bool = False) -> tuple[torch.Tensor, list[str]]:
    """The shown tokens' positions and their unique '<position> <token>' labels."""
    shown = views.shown_tokens(trace, index, hide_special)
    n = views.real_length(trace, index)
    all_labels = indexed_labels(trace.batch.tokens[index][:n])
    return shown, [all_labels[int(i)] for i in shown]


def _suffix(hide_special: bool, tr) -> str:
    return tr("hidden") if hide_special else ""


def square_figure(
    weights: torch.Tensor,
    masked: torch.Tensor,
    labels: list[str],
    title: str,
    tr=english,
    window: int | None = None,
    value_name: str | None = None,
):
    """A query x key matrix: cell by cell up to FULL_RES_MAX tokens; above, block means, or the
    full-resolution window starting at token `window`."""
    m = weights.shape[0]
    value_name = value_name or tr("weight")
    if m > FULL_RES_MAX and window is None:
        pooled, r_edges, c_edges = views.block_pool(weights, masked, FULL_RES_MAX)
        weights, masked = pooled, torch.isnan(pooled)
        labels_q, labels_k = bin_labels(labels, r_edges), bin_labels(labels, c_edges)
        title += tr("pooled", m=m, s=pooled.shape[0])
    elif m > FULL_RES_MAX:
        a = max(0, min(window, m - FULL_RES_MAX))
        sl = slice(a, a + FULL_RES_MAX)
        weights, masked, labels_q = weights[sl, sl], masked[sl, sl], labels[sl]
        labels_k = labels_q
        title += tr("window", a=a, b=a + FULL_RES_MAX - 1, m=m)
    else:
        labels_q = labels_k = labels
    w = weights.detach().float().numpy()
    mk = masked.numpy()
    # Masked cells are gaps in the data showing a grey plot background: an overlay trace of masked cells
    # (viz.heatmap's masked=...) would double the bytes of a big matrix.
    fig = attention_heatmap(
        np.where(mk, np.nan, w),
        labels_q,
        labels_k,
        title=title,
        x_title=tr("key_axis"),
        y_title=tr("query_axis"),
        value_name=value_name,
    )
    fig.update_layout(plot_bgcolor=MASKED_COLOUR if mk.any() else "white")
    fig.update_xaxes(showgrid=False)
    fig.update_yaxes(showgrid=False)
    return fig


# --- the four views ------------------------------------------------------------------------------------------------


def grid_figure(trace, index: int = 0, hide_special: bool = False, highlight=None, tr=english):
    L, H = trace.n_layers, trace.n_heads
    size = TILE if L * H <= MANY_HEADS else TILE_MANY
    thumbs = views.thumbnails(trace, size, index, hide_special)
    m = len(views.shown_tokens(trace, index, hide_special))
    title = tr("grid_title", L=L, H=H, m=m)
    if thumbs.shape[-1] < m:
        title += tr("pooled", m=m, s=thumbs.shape[-1])
    title += _suffix(hide_special, tr)
    names = None
    if trace.n_kv_heads < H:  # GQA: say which key/value head each query head reads
        names = [f"{h}·kv{trace.kv_head(h)}" for h in range(H)]
    return head_grid(
        thumbs.numpy(), title, tr("layer"), tr("head"), tr("weight"), highlight=highlight, head_names=names
    )


def head_figure(
    trace, layer: int, head: int, index: int = 0, hide_special: bool = False, window: int | None = None, tr=english
):
    """The head view, and the exact weights with their labels (for the CSV download)."""
    w, masked = views.head_weights(trace, layer, head, index, hide_special)
    _, labels = token_labels(trace, index, hide_special)
    title = tr("head_title", l=layer, h=head) + _suffix(hide_special, tr)
    return square_figure(w, masked, labels, title, tr, window), (w.numpy(), labels)


def token_figure(trace, query: int, index: int = 0, hide_special: bool = False, tr=english):
    """The token view for query position `query`; and the (L*H, keys) weights with labels for the CSV."""
    w = views.token_weights(trace, query, index, hide_special)  # (L, H, m)
    L, H, m = w.shape
    shown, labels = token_labels(trace, index, hide_special)
    masked = ~trace.mask(index)[query][shown]  # (m,)
    z = w.reshape(L * H, m)
    key_labels = labels
    if m > FULL_RES_MAX:
        z, _, c_edges = views.block_pool(z, masked[None].expand(L * H, m), L * H, FULL_RES_MAX)
        masked = torch.isnan(z[0])
        key_labels = bin_labels(labels, c_edges)
    full = indexed_labels(trace.batch.tokens[index])
    head_labels = [f"L{l} H{h}" for l in range(L) for h in range(H)]
    title = tr("token_title", q=full[query]) + _suffix(hide_special, tr)
    fig = token_grid(
        torch.nan_to_num(z).numpy(),
        head_labels,
        key_labels,
        H,
        masked=masked.numpy(),
        title=title,
        x_title=tr("key_axis"),
        y_title=tr("heads_axis"),
        value_name=tr("weight"),
    )
    return fig, (w.reshape(L * H, m).numpy(), head_labels, labels)


def aggregate_figure(
    trace, kind: str, layer: int, index: int = 0, hide_special: bool = False, window: int | None = None, tr=english
):
    """kind: 'mean' (mean over the heads of `layer`), 'rollout' (layers 0..layer) or 'entropy' (every head)."""
    if kind == "entropy":
        e = views.head_entropy(trace, index, hide_special).numpy()
        fig = matrix_heatmap(
            e,
            [str(l) for l in range(e.shape[0])],
            [str(h) for h in range(e.shape[1])],
            title=tr("entropy_title") + _suffix(hide_special, tr),
            x_title=tr("head"),
            y_title=tr("layer"),
            colorscale="Viridis",
            zmid=None,
            value_name=tr("entropy"),
        )
        return fig, (e, [f"layer {l}" for l in range(e.shape[0])], [f"head {h}" for h in range(e.shape[1])])
    shown, labels = token_labels(trace, index, hide_special)
    masked = ~trace.mask(index)[shown][:, shown]
    if kind == "mean":
        w = views.mean_over_heads(trace, layer, index, hide_special)
        title, value = tr("mean_title", l=layer, H=trace.n_heads), tr("weight")
    elif kind == "rollout":
        w = views.rollout(trace, index, layer, hide_special)
        title, value = tr("rollout_title", l=layer), tr("rollout_value")
    else:
        raise ValueError(kind)
    fig = square_figure(w, masked, labels, title + _suffix(hide_special, tr), tr, window, value_name=value)
    return fig, (w.numpy(), labels, labels)


def figure_bytes(fig) -> int:
    """What the browser receives for a figure: the length of its plotly JSON."""
    return len(fig.to_json())
