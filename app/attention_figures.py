"""The figures of the attention views, from a Trace: core computes the arrays, viz draws them. No Streamlit
here, so benchmarks/bench_views.py times and weighs exactly what the page sends.

Budget (<= 1 MB per view): a float32 cell costs about 7.3 bytes of plotly JSON (base64), so one figure
carries at most FULL_RES_MAX^2 cells (256^2 ~ 0.5 MB); beyond that, block means (core.views.block_pool), or a
full-resolution window the reader moves.
"""
from __future__ import annotations

import numpy as np
import torch

from core import views
from core.downsample import bin_labels
from viz.grid import head_grid, token_grid
from viz.heatmap import MASKED_COLOUR, attention_heatmap, matrix_heatmap
from viz.labels import indexed_labels

FULL_RES_MAX = 256          # tokens per side drawn cell by cell
TILE, TILE_MANY, MANY_HEADS = 24, 16, 100   # model-view tile size; smaller tiles when there are many heads

FIG_TEXT = {
    "layer": {"en": "layer", "ja": "層", "ko": "층"},
    "head": {"en": "head", "ja": "ヘッド", "ko": "헤드"},
    "weight": {"en": "weight", "ja": "重み", "ko": "가중치"},
    "query_axis": {"en": "query token (rows: attending)", "ja": "クエリトークン（行: 注意する側）",
                   "ko": "쿼리 토큰(행: 주의하는 쪽)"},
    "key_axis": {"en": "key token (columns: attended to)", "ja": "キートークン（列: 注意される側）",
                 "ko": "키 토큰(열: 주의받는 쪽)"},
    "heads_axis": {"en": "layer, head (rows)", "ja": "層・ヘッド（行）", "ko": "층, 헤드(행)"},
    "grid_title": {
        "en": "All {L}×{H} heads. Each tile: one head's {m}×{m} weights (rows = query, columns = key)",
        "ja": "全 {L}×{H} ヘッド。各タイルは 1 ヘッドの {m}×{m} の重み（行 = クエリ、列 = キー）",
        "ko": "전체 {L}×{H} 헤드. 각 타일은 한 헤드의 {m}×{m} 가중치(행 = 쿼리, 열 = 키)",
    },
    "head_title": {"en": "Layer {l}, head {h}", "ja": "層 {l}、ヘッド {h}", "ko": "층 {l}, 헤드 {h}"},
    "pooled": {
        "en": " ({m} tokens shown as {s}×{s} block means)",
        "ja": "（{m} トークンを {s}×{s} のブロック平均で表示）",
        "ko": " ({m}개 토큰을 {s}×{s} 블록 평균으로 표시)",
    },
    "window": {
        "en": " (full resolution, tokens {a}–{b} of {m}; rows need not sum to 1 inside the window)",
        "ja": "（フル解像度、{m} 中のトークン {a}–{b}。窓の中では行の和は 1 とは限らない）",
        "ko": " (원래 해상도, {m}개 중 토큰 {a}–{b}; 창 안에서는 행의 합이 1이 아닐 수 있음)",
    },
    "token_title": {
        "en": "Query token {q}: its weights on every key, in every head of every layer",
        "ja": "クエリトークン {q}: すべての層・ヘッドでの各キーへの重み",
        "ko": "쿼리 토큰 {q}: 모든 층, 모든 헤드에서 각 키에 준 가중치",
    },
    "mean_title": {"en": "Layer {l}: mean over its {H} heads", "ja": "層 {l}: {H} ヘッドの平均",
                   "ko": "층 {l}: 헤드 {H}개의 평균"},
    "rollout_title": {
        "en": "Attention rollout through layers 0–{l} (Abnar & Zuidema 2020)",
        "ja": "層 0–{l} のアテンション・ロールアウト（Abnar & Zuidema 2020）",
        "ko": "층 0–{l}의 어텐션 롤아웃 (Abnar & Zuidema 2020)",
    },
    "rollout_value": {"en": "rollout", "ja": "ロールアウト", "ko": "롤아웃"},
    "entropy_title": {
        "en": "Entropy of each head's rows (nats), averaged over queries: low = focused on few keys",
        "ja": "各ヘッドの行のエントロピー（nat）のクエリ平均: 低い = 少数のキーに集中",
        "ko": "각 헤드 행의 엔트로피(nat)를 쿼리에 대해 평균: 낮을수록 소수의 키에 집중",
    },
    "entropy": {"en": "entropy (nats)", "ja": "エントロピー（nat）", "ko": "엔트로피(nat)"},
    "hidden": {
        "en": " — special tokens hidden, rows renormalised",
        "ja": " — 特殊トークンを除き、行を再正規化",
        "ko": " — 특수 토큰 숨김, 행 재정규화",
    },
}


def english(key: str, /, **fmt) -> str:
    return FIG_TEXT[key]["en"].format(**fmt)


def token_labels(trace, index: int = 0, hide_special: bool = False) -> tuple[torch.Tensor, list[str]]:
    """The shown tokens' positions and their unique '<position> <token>' labels."""
    shown = views.shown_tokens(trace, index, hide_special)
    n = views.real_length(trace, index)
    all_labels = indexed_labels(trace.batch.tokens[index][:n])
    return shown, [all_labels[int(i)] for i in shown]


def _suffix(hide_special: bool, tr) -> str:
    return tr("hidden") if hide_special else ""


def square_figure(weights: torch.Tensor, masked: torch.Tensor, labels: list[str], title: str, tr=english,
                  window: int | None = None, value_name: str | None = None):
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
    fig = attention_heatmap(np.where(mk, np.nan, w), labels_q, labels_k, title=title, x_title=tr("key_axis"),
                            y_title=tr("query_axis"), value_name=value_name)
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
    if trace.n_kv_heads < H:   # GQA: say which key/value head each query head reads
        names = [f"{h}·kv{trace.kv_head(h)}" for h in range(H)]
    return head_grid(thumbs.numpy(), title, tr("layer"), tr("head"), tr("weight"), highlight=highlight,
                     head_names=names)


def head_figure(trace, layer: int, head: int, index: int = 0, hide_special: bool = False,
                window: int | None = None, tr=english):
    """The head view, and the exact weights with their labels (for the CSV download)."""
    w, masked = views.head_weights(trace, layer, head, index, hide_special)
    _, labels = token_labels(trace, index, hide_special)
    title = tr("head_title", l=layer, h=head) + _suffix(hide_special, tr)
    return square_figure(w, masked, labels, title, tr, window), (w.numpy(), labels)


def token_figure(trace, query: int, index: int = 0, hide_special: bool = False, tr=english):
    """The token view for query position `query`; and the (L*H, keys) weights with labels for the CSV."""
    w = views.token_weights(trace, query, index, hide_special)            # (L, H, m)
    L, H, m = w.shape
    shown, labels = token_labels(trace, index, hide_special)
    masked = ~trace.mask(index)[query][shown]                              # (m,)
    z = w.reshape(L * H, m)
    key_labels = labels
    if m > FULL_RES_MAX:
        z, _, c_edges = views.block_pool(z, masked[None].expand(L * H, m), L * H, FULL_RES_MAX)
        masked = torch.isnan(z[0])
        key_labels = bin_labels(labels, c_edges)
    full = indexed_labels(trace.batch.tokens[index])
    head_labels = [f"L{l} H{h}" for l in range(L) for h in range(H)]
    title = tr("token_title", q=full[query]) + _suffix(hide_special, tr)
    fig = token_grid(torch.nan_to_num(z).numpy(), head_labels, key_labels, H, masked=masked.numpy(), title=title,
                     x_title=tr("key_axis"), y_title=tr("heads_axis"), value_name=tr("weight"))
    return fig, (w.reshape(L * H, m).numpy(), head_labels, labels)


def aggregate_figure(trace, kind: str, layer: int, index: int = 0, hide_special: bool = False,
                     window: int | None = None, tr=english):
    """kind: 'mean' (mean over the heads of `layer`), 'rollout' (layers 0..layer) or 'entropy' (every head)."""
    if kind == "entropy":
        e = views.head_entropy(trace, index, hide_special).numpy()
        fig = matrix_heatmap(e, [str(l) for l in range(e.shape[0])], [str(h) for h in range(e.shape[1])],
                             title=tr("entropy_title") + _suffix(hide_special, tr), x_title=tr("head"),
                             y_title=tr("layer"), colorscale="Viridis", zmid=None, value_name=tr("entropy"))
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
