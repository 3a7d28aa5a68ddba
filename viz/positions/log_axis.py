"""Major ticks for log axes. Left to itself plotly labels every minor tick of a short log axis
("2 3 4 5 6 7 8 9 1e-3 2 3 ..."), which nobody can read: the position figures set their ticks here instead,
powers of ten when the data spans two decades or more, else 1, 2 and 5 times powers of ten."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
MAX_LOG_LABELS = 8


def tick_text(value: float) -> str:
    """0.01 .. 10,000 as plain numbers; beyond, m·10ᵏ (10⁵, 2·10⁻⁵)."""
    if 1e-3 <= value < 1e5:
        return f"{value:,.6g}"
    k = math.floor(math.log10(value) + 1e-9)
    mantissa = round(value / 10**k)
    power = "10" + str(k).translate(_SUPERSCRIPT)
    return power if mantissa == 1 else f"{mantissa}·{power}"


def log_ticks(values) -> tuple[list[float], list[str]]:
    """Major ticks for a log axis over the positive finite `values`: powers of ten (every second or third one past
    MAX_LOG_LABELS decades) when they span two decades or more, else 1, 2 and 5 times powers of ten. Ticks reach
    one step past the data on each side, so the axis' autorange always shows at least two."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return [], []
    lo, hi = math.floor(math.log10(v.min()) + 1e-9), math.ceil(math.log10(v.max()) - 1e-9)
    if math.log10(v.max() / v.min()) >= 2:
        step = math.ceil((hi - lo + 1) / MAX_LOG_LABELS)
        ticks = [10.0**k for k in range(lo - lo % step, hi + step, step)]
    else:
        candidates = [m * 10.0**k for k in range(lo - 1, hi + 1) for m in (1, 2, 5)]
        below = [c for c in candidates if c <= v.min()]
        above = [c for c in candidates if c >= v.max()]
        ticks = [c for c in candidates if (below[-1] if below else 0) <= c <= (above[0] if above else math.inf)]
    return ticks, [tick_text(t) for t in ticks]


def set_log_axis(fig: go.Figure, axis: str, values) -> go.Figure:
    """Make `axis` ("x" or "y") logarithmic with log_ticks of `values` (everything drawn on that axis)."""
    ticks, text = log_ticks(values)
    update = fig.update_xaxes if axis == "x" else fig.update_yaxes
    update(type="log", tickmode="array", tickvals=ticks, ticktext=text)
    return fig
