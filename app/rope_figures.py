"""The scaled-RoPE formula figures, from core arrays to plotly figures, with no Streamlit here so that
benchmarks/bench_rope_scaling.py times and weighs exactly what app/views/rope_scaling.py sends.

`t(key)` is the page's translator (English in the benchmark)."""

from __future__ import annotations

import numpy as np

from core import rope_scaling as rs
from viz.positions import curves

DECAY_BINS = 500  # per method: the browser gets 500 x 3 numbers, not 131,072
RES_FACTORS = np.geomspace(1, 64, 25)
ORIGINAL = rs.SMOLLM2_ROPE["original_context"]


def method_rows(factor: float, seq_len: int) -> list[dict]:
    return rs.method_table(factor, seq_len)


def decay_envelopes(factor: float, max_distance: int) -> dict[str, dict]:
    """Every method's expected q.k for all distances 0..max_distance, reduced to DECAY_BINS log-spaced bins.
    Dynamic NTK and LongRoPE are computed for a sequence of max_distance + 1 tokens."""
    out = {}
    for method in rs.METHODS:
        inv, att = rs.scaled_inv_freq(method, factor, seq_len=max_distance + 1)
        out[method] = rs.qk_decay_envelope(inv, att, max_distance, DECAY_BINS)
    return out


def resolution() -> dict:
    return rs.resolution_by_factor(RES_FACTORS)


def wavelength_figure(rows: list[dict], t):
    pairs = np.arange(len(rows[0]["ratio"]))
    return curves(
        pairs,
        {r["method"]: r["wavelength"] for r in rows},
        title=t("wl_title"),
        x_title=t("pair"),
        y_title=t("wavelength"),
        log_y=True,
        hlines=[(ORIGINAL, t("train_ctx"))],
        markers=True,
    )


def ratio_figure(rows: list[dict], factor: float, t):
    pairs = np.arange(len(rows[0]["ratio"]))
    return curves(
        pairs,
        {r["method"]: r["ratio"] for r in rows},
        title=t("ratio_title"),
        x_title=t("pair"),
        y_title=t("ratio"),
        markers=True,
        hlines=[(factor, f"s = {factor:g}")],
    )


def decay_figure(decay: dict[str, dict], t):
    x = {m: (e["start"] + e["end"]) / 2 + 0.5 for m, e in decay.items()}  # +0.5: distance 0 on a log axis
    return curves(
        None,
        {m: e["mean"] for m, e in decay.items()},
        x_per_series=x,
        bands={m: (e["min"], e["max"]) for m, e in decay.items()},
        title=t("decay_title"),
        x_title=t("distance"),
        y_title=t("qk"),
        log_x=True,
        vlines=[(ORIGINAL, t("train_ctx"))],
        height=460,
    )


def resolution_figure(res: dict, measure: str, t):
    fig = curves(
        RES_FACTORS,
        {m: v[measure] for m, v in res.items()},
        title=t("res_title"),
        x_title=t("factor_axis"),
        y_title=t("angle"),
        log_x=True,
        log_y=True,
        markers=True,
    )
    # plotly labels every minor tick of a short log axis ("8 9 1 2 3 ..."); scale factors read best as powers of 2
    fig.update_xaxes(tickvals=[2.0**k for k in range(7)], ticktext=[f"{2**k}" for k in range(7)])
    fig.update_yaxes(dtick="D2")
    return fig
