"""viz/labels.py: learner text in figure labels is escaped (never markup), clipped, and newlines/tabs are shown."""

from core.pooling import MAX_LABEL_CHARS
from viz.labels import safe_label


def test_markup_is_escaped_to_entities():
    assert safe_label("<script>alert('x')</script>", 100) == "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"
    assert safe_label('a & "b"') == "a &amp; &quot;b&quot;"


def test_newlines_and_tabs_are_visible_marks():
    assert safe_label("a\nb\tc") == "a⏎b⇥c"


def test_long_text_is_clipped():
    assert len(safe_label("x" * 500)) <= MAX_LABEL_CHARS
    assert len(safe_label("y" * 50, 10)) <= 10
    assert safe_label("short", 10) == "short"
