"""viz/room.py: the histogram draws the counts it is given, colours the right answer only after the reveal, and
keeps learners' responses as text; the QR code is a PNG."""

from core.lessons import Answer
from core.room import histogram as room_histogram
from viz import room as figures


def words(key, **fmt):
    return {"title": "answers ({n})", "count": "learners", "answer": "answer", "right_answer": "right"}[key].format(
        **fmt
    )


def test_histogram_counts_and_reveal():
    view = room_histogram(Answer("choice", "b", ("a", "b", "<b>c</b>"), None, {}), ["a", "b", "b"])
    before = figures.histogram(view, words, reveal=False).to_dict()
    after = figures.histogram(view, words, reveal=True).to_dict()
    bar = before["data"][0]
    assert list(bar["x"]) == [1, 2, 0] and before["layout"]["title"]["text"] == "answers (3)"
    assert len(set(bar["marker"]["color"])) == 1  # nothing gives the answer away before the reveal
    colours = after["data"][0]["marker"]["color"]
    assert colours[1] == figures.RIGHT and colours[0] == colours[2] == figures.OTHER
    assert list(bar["y"])[2] == "&lt;b&gt;c&lt;/b&gt;"  # plotly would draw <b> as bold: escaped, it is text


def test_join_qr_is_a_png():
    png = figures.join_qr("http://localhost:8501/room?room=ABC234")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 200
