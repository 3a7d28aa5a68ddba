"""RoPE figures: the rotation matrix R_m, every pair's angle at every position, one pair going round its circle,
and the numerical check that q_m . k_n depends on m - n only. Pairs are numbered i = 0 .. d/2 - 1 on every axis."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from ..heatmap import matrix_heatmap
from .circle import circle_figure
from .common import curves, value_heatmap

if TYPE_CHECKING:
    from core.positions.rope import AnglesView, CheckView, PooledAngles, RotationView


def rotation_figure(view: RotationView, t) -> go.Figure:
    return matrix_heatmap(
        view.rotation,
        view.dims,
        view.dims,
        title=t("r_title", m=view.m),
        x_title=t("in_dim"),
        y_title=t("out_dim"),
        value_name="R",
        show_values=view.d <= 12,
    )


def angles_figure(view: AnglesView, t) -> go.Figure:
    return value_heatmap(
        view.angles,
        x=view.col_labels,
        y=view.row_labels,
        title=t("angles_title"),
        x_title=t("pair_axis"),
        y_title=t("position"),
        colorscale="Twilight",
        zmid=None,
        zmin=0.0,
        zmax=2 * math.pi,
        value_name=t("angle"),
    )


def pooled_angles_figure(view: PooledAngles, t) -> go.Figure:
    """The block circular means on axes in positions and pairs (each cell at its block's first position and pair)."""
    return value_heatmap(
        view.angles,
        x=view.col_labels,
        y=view.row_labels,
        title=t("angles_pooled_title", n=view.n, d=view.d, rows=view.angles.shape[0], cols=view.angles.shape[1]),
        x_title=t("pair_axis"),
        y_title=t("position"),
        colorscale="Twilight",
        zmid=None,
        zmin=0.0,
        zmax=2 * math.pi,
        value_name=t("angle"),
    )


def trajectory_figure(view: AnglesView, t) -> go.Figure:
    return circle_figure(
        view.trajectory,
        [(0, "m = 0")],
        title=t("traj_title", i=view.pair, theta=view.theta),
        x_title=t("traj_x"),
        y_title=t("traj_y"),
        colour_title=t("position"),
    )


def check_scores_figure(view: CheckView, t) -> go.Figure:
    return value_heatmap(
        view.scores,
        x=view.labels,
        y=view.labels,
        title=t("scores_title"),
        x_title=t("key_pos"),
        y_title=t("query_pos"),
        value_name=t("score"),
    )


def check_offset_figure(view: CheckView, t) -> go.Figure:
    return curves(
        view.offsets,
        {t("score"): view.score_by_offset},
        title=t("offset_scores_title"),
        x_title="m − n",
        y_title=t("score"),
        markers=view.n <= 32,
    )
