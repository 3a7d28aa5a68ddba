"""viz/room.py: the join link's QR code is a PNG (the room's histogram is viz/lessons.py's:
tests/viz/test_lessons_figures.py, tests/pages/test_answer_histogram_pages.py)."""

from viz import room as figures


def test_join_qr_is_a_png():
    png = figures.join_qr("http://localhost:8501/room?room=ABC234")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 200
