"""app/serving.py: what one server process does after every script run (issue 20)."""

import gc

from core.models.base import Trace
from tests.apptest_helpers import assert_no_exception, open_view


def widget_metadata(at) -> dict:
    return at.session_state._state._state._new_widget_state.widget_metadata


def test_new_sentences_leave_no_widgets_or_traces_behind():
    # The model view's chart is a clickable widget whose id hashes the figure: Streamlit 1.67 keeps a stale widget's
    # metadata (and its callback) for the whole session, so without forget_stale_widgets() each new sentence left
    # one more entry, and the callback kept that sentence's trace alive (13 MB a minute in the load test's soak).
    at = open_view("attention")
    sizes, charts = [], []
    for i in range(8):
        at.text_area(key="text").set_value(f"Sentence {i}: the cat number {i} sat on mat {i * 7}.")
        at.run()
        assert_no_exception(at)
        meta = widget_metadata(at)
        sizes.append(len(meta))
        charts.append(sum(wid.endswith("-fig-grid") for wid in meta))
    # this run's chart (its callback answers the next click) and at most the previous run's, until its value goes
    assert all(1 <= n <= 2 for n in charts), charts
    assert len(set(sizes[2:])) == 1, sizes
    gc.unfreeze()  # app/serving.py froze the heap: gc.get_objects() lists only what collections still walk
    gc.collect()
    texts = {t.batch.texts[0] for t in gc.get_objects() if isinstance(t, Trace)}
    early = {f"Sentence {i}: the cat number {i} sat on mat {i * 7}." for i in range(3)}
    assert "Sentence 7: the cat number 7 sat on mat 49." in texts  # the run cache keeps the newest ones
    assert not texts & early, texts  # nothing keeps the evicted ones
