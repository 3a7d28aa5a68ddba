"""The join link's QR code of a study room (/room). The room's answers are drawn by viz.lessons.histogram, the
figure /lessons draws a learner's own answer with."""

from __future__ import annotations

import io


def join_qr(url: str, scale: int = 8) -> bytes:
    """A PNG QR code of the join link (segno: pure Python, no network)."""
    import segno

    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="png", scale=scale, border=2)
    return out.getvalue()
