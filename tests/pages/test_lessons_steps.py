"""Every step of every shipped lesson opens its page with its state, as a link would, without an exception, and
with no parameter of the state ignored by the page (a lesson whose state names a setting the page does not read
would show a 'parameters ignored' notice instead of the view the lesson means)."""

import pytest

from app import catalog
from core import lessons as core
from tests.apptest_helpers import open_view

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it

LESSONS = core.load_lessons(pages=catalog.BY_URL)
VIEWS = sorted({(s.page, tuple(sorted(s.state.items()))) for lesson in LESSONS.values() for s in lesson.steps})


@pytest.mark.slow
@pytest.mark.parametrize("page, state", VIEWS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(VIEWS)])
def test_every_step_opens_its_page_with_its_state(page, state):
    at = open_view(catalog.BY_URL[page].topic, dict(state))
    ignored = [w.value for w in at.warning if "ignored" in str(w.value).lower()]
    assert not ignored, ignored
    for key, value in state:
        assert at.query_params.get(key) == value, (key, at.query_params.get(key), value)
