"""The figures of a study room (/room): the room's answers as a histogram, and the join link's QR code.

`histogram(view, t)` draws a core.room.Histogram: one bar per option (or per distinct response), the right one(s)
coloured once the answer is revealed (reveal=False: every bar alike, what the facilitator sees while answers come
in). Labels are learners' responses or options: plotly draws them as text (not HTML) because every label is
escaped here."""

from __future__ import annotations

import html
import io
from collections.abc import Callable

import plotly.graph_objects as go

from core.room import Histogram

Words = Callable[..., str]
RIGHT, OTHER, WAITING = "#2e7d32", "#9e9e9e", "#1f77b4"
MAX_LABEL_CHARS = 40


def _label(text: str) -> str:
    short = text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "…"
    return html.escape(short)  # plotly renders a subset of HTML in tick labels: a response stays text


def histogram(view: Histogram, t: Words, reveal: bool) -> go.Figure:
    labels = [_label(x) for x in view.labels]
    colours = [(RIGHT if right else OTHER) if reveal else WAITING for right in view.correct]
    names = [t("right_answer") if (reveal and right) else t("answer") for right in view.correct]
    fig = go.Figure(
        go.Bar(
            x=list(view.counts),
            y=labels,
            orientation="h",
            marker={"color": colours},
            text=[str(c) for c in view.counts],
            textposition="auto",
            customdata=names,
            hovertemplate="%{y}: %{x} (%{customdata})<extra></extra>",
        )
    )
    fig.update_layout(
        title=t("title", n=view.total),
        xaxis={"title": t("count"), "rangemode": "tozero", "dtick": 1 if max(view.counts, default=0) < 10 else None},
        yaxis={"autorange": "reversed", "type": "category"},
        height=120 + 28 * max(1, len(labels)),
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
        showlegend=False,
    )
    return fig


def join_qr(url: str, scale: int = 8) -> bytes:
    """A PNG QR code of the join link (segno: pure Python, no network)."""
    import segno

    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="png", scale=scale, border=2)
    return out.getvalue()
