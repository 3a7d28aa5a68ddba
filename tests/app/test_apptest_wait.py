"""tests/apptest_helpers.py waits for an AppTest run without polling: Streamlit's own wait woke every millisecond,
taking the GIL from the script thread each time (CPU every page test paid). The wait still ends with the run and
still stops a run past its timeout."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import local_script_runner

from tests.apptest_helpers import function_app

MODEL_FREE = True


def a_page_that_works_a_while():
    import time

    import streamlit as st

    time.sleep(0.3)
    st.write("done")


@pytest.fixture
def polls(monkeypatch):
    """The times the wait for a run slept to look again (local_script_runner's time.sleep)."""
    slept = []

    class CountedTime:
        def __getattr__(self, name):
            return getattr(time, name)

        @staticmethod
        def sleep(seconds):
            slept.append(seconds)
            time.sleep(seconds)

    monkeypatch.setattr(local_script_runner, "time", CountedTime())
    return slept


def test_a_run_is_waited_for_without_polling(polls):
    at = function_app(a_page_that_works_a_while, timeout=30).run()
    assert [m.value for m in at.markdown] == ["done"]
    assert not polls, f"the wait woke {len(polls)} times to look for the run's end"


def test_a_run_past_its_timeout_is_stopped_and_fails(polls):
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"timed out after 0\.05"):
        function_app(a_page_that_works_a_while, timeout=0.05).run()
    assert time.monotonic() - started < 5
