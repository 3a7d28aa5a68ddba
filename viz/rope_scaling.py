"""Figures of /rope-scaling: wavelengths and interpolation ratio per pair, expected q.k against distance, the angle
between neighbouring positions as the factor grows, and the loss per position of the long-context experiment.
Built from core.rope_scaling's view dataclasses; no Streamlit here, so benchmarks/bench_rope_scaling.py times and
weighs exactly what the page sends. Pairs are numbered i = 0 .. d/2 - 1 (fastest first)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from core.rope_scaling.long_context import PLAIN_LABEL

from .linear_attention import major_log_ticks
from .positions.common import curves

if TYPE_CHECKING:
    from core.rope_scaling.experiment import LossView
    from core.rope_scaling.formulas import DecayView, FrequencyView, ResolutionView

Words = Callable[..., str]  # the [rope_scaling.figure] catalog section


def wavelength_figure(view: FrequencyView, t: Words) -> go.Figure:
    return curves(
        view.pairs,
        {r["method"]: r["wavelength"] for r in view.rows},
        title=t("wl_title"),
        x_title=t("pair"),
        y_title=t("wavelength"),
        log_y=True,
        hlines=[(view.original_context, t("train_ctx"))],
        markers=True,
    )


def ratio_figure(view: FrequencyView, t: Words) -> go.Figure:
    return curves(
        view.pairs,
        {r["method"]: r["ratio"] for r in view.rows},
        title=t("ratio_title"),
        x_title=t("pair"),
        y_title=t("ratio"),
        markers=True,
        hlines=[(view.factor, f"s = {view.factor:g}")],
    )


def decay_figure(view: DecayView, t: Words) -> go.Figure:
    return curves(
        None,
        {m: e["mean"] for m, e in view.envelopes.items()},
        x_per_series={m: c.astype(np.float32) for m, c in view.centres.items()},  # half-integers: exact in float32
        bands={m: (e["min"], e["max"]) for m, e in view.envelopes.items()},
        title=t("decay_title"),
        x_title=t("distance"),
        y_title=t("qk"),
        log_x=True,
        vlines=[(view.original_context, t("train_ctx"))],
        height=460,
    )


def resolution_figure(view: ResolutionView, t: Words, measure: str) -> go.Figure:
    fig = curves(
        view.factors,
        {m: v[measure] for m, v in view.angles.items()},
        title=t("res_title"),
        x_title=t("factor_axis"),
        y_title=t("angle"),
        log_x=True,
        log_y=True,
        markers=True,
    )
    # scale factors read best as powers of 2; the angles at powers of ten only
    powers = [2.0**k for k in range(7)]
    fig.update_xaxes(tickmode="array", tickvals=powers, ticktext=[f"{p:g}" for p in powers])
    angles = [a for v in view.angles.values() for a in v[measure]]
    fig.update_yaxes(tickmode="linear", tickvals=None, ticktext=None, **major_log_ticks(angles))
    return fig


def run_name(label: str, t: Words) -> str:
    """A run as the reader reads it: plain RoPE's in their words ('no scaling' in the results files), a scaled
    one by its method's name and factor ('yarn x4')."""
    return t("no_scaling") if label == PLAIN_LABEL else label


def loss_figure(view: LossView, t: Words, bucket: int, live: bool = False) -> go.Figure:
    """Mean loss per position bucket of each run; `live`: the runs just measured on the page."""
    title = t("live_title" if live else "loss_title", b=bucket)
    return curves(
        None,
        {run_name(r["label"], t): np.asarray(r["mean_loss"]) for r in view.runs},
        x_per_series={run_name(label, t): x for label, x in view.midpoints.items()},
        title=title,
        x_title=t("position"),
        y_title=t("loss"),
        markers=True,
        vlines=[(view.original_context, "L₀")] if view.reaches_original else None,
        height=460,
    )
