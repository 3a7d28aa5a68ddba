"""Building blocks of the position figures (/positions and /rope-scaling): numeric-axis heatmaps, curves with
optional min-max bands, the unit-circle view of one pair, bars. Arrays in, plotly figures out.

Log axes get explicit major ticks (`log_axis.set_log_axis`)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..labels import safe_label
from ..style import LEGEND_AT_FOOT, MARGIN, PALETTE, colour_bar
from .log_axis import log_ticks, set_log_axis


def layout_dict(title: str, x_title: str, y_title: str, height: int = 380) -> dict:
    """What `layout` sets, as a plain layout dict (for figures built unvalidated)."""
    axis = dict(gridcolor="#eee", zeroline=False)
    return {
        "title": {"text": safe_label(title, 160)},
        "height": height,
        "plot_bgcolor": "white",
        "margin": dict(MARGIN),
        "legend": dict(LEGEND_AT_FOOT),
        "xaxis": {"title": {"text": safe_label(x_title, 80)}, **axis},
        "yaxis": {"title": {"text": safe_label(y_title, 80)}, **axis},
    }


def log_axis(values) -> dict:
    """What `log_axis.set_log_axis` sets on an axis, as a dict."""
    ticks, text = log_ticks(values)
    return {"type": "log", "tickmode": "array", "tickvals": ticks, "ticktext": text}


def layout(fig: go.Figure, title: str, x_title: str, y_title: str, height: int = 380) -> go.Figure:
    fig.update_layout(
        title=dict(text=safe_label(title, 160)),
        height=height,
        plot_bgcolor="white",
        margin=MARGIN,
        legend=LEGEND_AT_FOOT,
    )
    fig.update_xaxes(title_text=safe_label(x_title, 80), gridcolor="#eee", zeroline=False)
    fig.update_yaxes(title_text=safe_label(y_title, 80), gridcolor="#eee", zeroline=False)
    return fig


def value_heatmap(
    z,
    x=None,
    y=None,
    title: str = "",
    *,
    x_title: str,
    y_title: str,
    value_name: str,
    colorscale: str = "RdBu",
    zmid: float | None = 0.0,
    zmin=None,
    zmax=None,
    height: int = 420,
    reverse_y: bool = True,
    decimals: int = 3,
    show_values: bool = False,
) -> go.Figure:
    """A numeric matrix on numeric axes (positions, dimensions). Row 0 at the top unless reverse_y=False.
    NaN cells (masked) stay blank. x_title, y_title, value_name: the page's words (or symbols: "PE", "i"), required:
    hover and colour bar name a cell by them, and a default ("value") was English to every reader."""
    z = np.round(np.asarray(z, dtype=np.float64), decimals).astype(np.float32)
    n_r, n_c = z.shape
    x = np.arange(n_c) if x is None else np.asarray(x)
    y = np.arange(n_r) if y is None else np.asarray(y)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            colorscale=colorscale,
            zmid=zmid if zmin is None and zmax is None else None,
            zmin=zmin,
            zmax=zmax,
            hoverongaps=False,
            hovertemplate=f"{safe_label(y_title, 40)}: %{{y}}<br>{safe_label(x_title, 40)}: %{{x}}<br>"
            f"{safe_label(value_name, 40)}: %{{z}}<extra></extra>",
            texttemplate="%{z}" if show_values else None,
            colorbar=colour_bar(safe_label(value_name, 40)),
        )
    )
    layout(fig, title, x_title, y_title, height)
    if reverse_y:
        fig.update_yaxes(autorange="reversed")
    return fig


def curves(
    x,
    series: dict[str, np.ndarray],
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    log_x: bool = False,
    log_y: bool = False,
    bands: dict[str, tuple] | None = None,
    vlines: list[tuple[float, str]] | None = None,
    hlines: list[tuple[float, str]] | None = None,
    markers: bool = False,
    height: int = 400,
    x_per_series: dict[str, np.ndarray] | None = None,
) -> go.Figure:
    """One line per named series over x (or x_per_series[name]); bands[name] = (low, high) shades a min-max range
    around that series (used for downsampled curves: the band shows every value the bin holds)."""
    # Plain trace, shape and annotation dicts in one unvalidated figure (plotly's per-property validation
    # and add_vline's re-walk of every shape were two thirds of /rope-scaling's rerun under load);
    # tests/viz/test_positions_unvalidated.py rebuilds it the validated way and compares.
    traces, shapes, notes = [], [], []
    for k, (name, ys) in enumerate(series.items()):
        colour = PALETTE[k % len(PALETTE)]
        xs = np.asarray(x if x_per_series is None or name not in x_per_series else x_per_series[name])
        if bands and name in bands:
            lo, hi = (np.asarray(b, dtype=np.float32) for b in bands[name])
            traces.append(
                dict(
                    type="scatter",
                    x=np.concatenate([xs, xs[::-1]]),
                    y=np.concatenate([hi, lo[::-1]]),
                    fill="toself",
                    fillcolor=colour,
                    opacity=0.15,
                    line=dict(width=0),
                    hoverinfo="skip",
                    showlegend=False,
                    name=safe_label(name, 40),
                )
            )
        traces.append(
            dict(
                type="scatter",
                x=xs,
                y=np.asarray(ys, dtype=np.float32),
                name=safe_label(name, 40),
                mode="lines+markers" if markers else "lines",
                line=dict(color=colour, width=1.8),
            )
        )
    # Annotations are placed by hand: on a log axis plotly reads an annotation's coordinate as log10 of the value
    # (a line's is the value), so add_vline/add_hline's own annotation lands elsewhere.
    for value, label in vlines or []:
        shapes.append(dict(type="line", x0=value, x1=value, xref="x", y0=0, y1=1, yref="y domain",
                           line=dict(color="#555", dash="dash")))  # fmt: skip
        notes.append(
            dict(
                x=math.log10(value) if log_x and value > 0 else value,
                y=1,
                yref="paper",
                text=safe_label(label, 60),
                showarrow=False,
                xanchor="right",
                yanchor="top",
            )  # fmt: skip
        )
    for value, label in hlines or []:
        shapes.append(dict(type="line", x0=0, x1=1, xref="x domain", y0=value, y1=value, yref="y",
                           line=dict(color="#888", dash="dot")))  # fmt: skip
        notes.append(
            dict(
                x=1,
                xref="paper",
                y=math.log10(value) if log_y and value > 0 else value,
                text=safe_label(label, 60),
                showarrow=False,
                xanchor="right",
                yanchor="top",
            )  # fmt: skip
        )
    lay = layout_dict(title, x_title, y_title, height)
    if shapes:
        lay["shapes"], lay["annotations"] = shapes, notes
    if log_x:
        xs = [np.asarray(x if x_per_series is None or n not in x_per_series else x_per_series[n]) for n in series]
        lay["xaxis"] |= log_axis(np.concatenate([a.ravel() for a in xs] + [np.array([v for v, _ in vlines or []])]))
    if log_y:
        ys = [np.asarray(v, dtype=np.float64).ravel() for v in series.values()]
        ys += [np.asarray(b, dtype=np.float64).ravel() for pair in (bands or {}).values() for b in pair]
        lay["yaxis"] |= log_axis(np.concatenate(ys + [np.array([v for v, _ in hlines or []])]))
    return go.Figure(data=traces, layout=lay, _validate=False)


def bars(
    labels: list[str],
    values,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    text: list[str] | None = None,
    log_y: bool = False,
    height: int = 360,
) -> go.Figure:
    fig = go.Figure(
        go.Bar(
            x=[safe_label(s, 30) for s in labels],
            y=np.asarray(values, dtype=np.float64),
            text=[safe_label(s, 20) for s in text] if text else None,
            textposition="outside",
            marker_color=PALETTE[0],
        )
    )
    layout(fig, title, x_title, y_title, height)
    fig.update_xaxes(type="category")
    if log_y:
        set_log_axis(fig, "y", values)
    return fig
