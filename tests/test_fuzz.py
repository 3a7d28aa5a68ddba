"""Fuzzed inputs on every page of app/catalog.py: Hypothesis-generated link parameters and typed texts, 0 exceptions.

Link parameters: each example opens the page in a fresh session (a link's parameters are read on a session's first
run of a page only), with parameters named like the page's own (those it writes into its URL), the app's `lang`,
and unknown names, holding any text: numbers out of range, NaN, huge integers, control characters, very long
values. Texts: one session per page, each example types a text into every text box the page shows: any Unicode
(control characters included, surrogates left out since a browser cannot send them), up to 30,000 characters.

AppTest runs are slow, so few examples per page (FUZZ_EXAMPLES; the default keeps the file near a minute on two
cores); run with ATTENTION_LAB_FUZZ_EXAMPLES=50 for a longer hunt.

The examples follow from a seed (FUZZ_SEED, and the page's name), so every run tries the same ones: a failure in CI
shows again on a rerun and on a laptop, and a clean submission never fails on examples no run tried before.
ATTENTION_LAB_FUZZ_SEED=<n> tries others; a failure says the command that repeats it. (Hypothesis's own default
drew new examples on every run, except where a CI variable was set.)
"""

from __future__ import annotations

import os
import zlib

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from app import catalog
from tests.apptest_helpers import run_view

pytestmark = pytest.mark.slow  # every page of the catalog, SmolLM2's included: not in `dev.sh quick`

FUZZ_EXAMPLES = int(os.environ.get("ATTENTION_LAB_FUZZ_EXAMPLES", "4"))
FUZZ_SEED = int(os.environ.get("ATTENTION_LAB_FUZZ_SEED", "0"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
TOPICS = [p.topic for p in catalog.PAGES]
UNKNOWN_NAMES = ["x", "", "view ", "text\x00", "🐱", "a" * 300, "<script>"]

# Any character a browser can send (no lone surrogates), control characters and unassigned code points included.
CHARS = st.characters(exclude_categories=["Cs"])
SHORT_TEXT = st.text(CHARS, max_size=40)
LONG_TEXT = st.builds(
    lambda piece, times: (piece * times)[:30_000], st.text(CHARS, min_size=1, max_size=12), st.integers(100, 5_000)
)
NUMBER_LIKE = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e309", "0x10", "1_000", " 3", "3.0", "-0", "", "None", "true"]),
)
VALUE = st.one_of(NUMBER_LIKE, SHORT_TEXT, LONG_TEXT)

_sessions: dict[str, object] = {}
_param_names: dict[str, list[str]] = {}


def page_session(topic: str):
    """One session per page, opened once and shared by the text examples of that page."""
    if topic not in _sessions:
        at = run_view(topic)
        assert not at.exception, [e.value for e in at.exception]
        _sessions[topic] = at
        _param_names[topic] = sorted(set(at.query_params) | {"lang"})
    return _sessions[topic]


def no_exception(at, what: str) -> None:
    assert not at.exception, (what[:300], [str(e.value)[:500] for e in at.exception])


def fuzz(request, check) -> None:
    """Run a Hypothesis test on this page's examples: from FUZZ_SEED and the test's id (each page its own), named
    in a failure with the command that runs them again."""
    try:
        seed(zlib.crc32(f"{FUZZ_SEED} {request.node.nodeid}".encode()))(check)()
    except Exception as failure:
        failure.add_note(
            f"The same examples: ATTENTION_LAB_FUZZ_SEED={FUZZ_SEED} ATTENTION_LAB_FUZZ_EXAMPLES={FUZZ_EXAMPLES} "
            f"python -m pytest -p no:randomly '{request.node.nodeid}'"
        )
        raise


@pytest.mark.parametrize("topic", TOPICS)
def test_link_parameters_never_raise(topic, request):
    page_session(topic)  # learns the names of the parameters the page writes into its URL
    names = _param_names[topic]

    @FUZZ
    @given(st.dictionaries(st.sampled_from(names + UNKNOWN_NAMES), VALUE, max_size=len(names) + 2))
    def check(params):
        no_exception(run_view(topic, params), repr(params))

    fuzz(request, check)


@pytest.mark.parametrize("topic", TOPICS)
def test_typed_text_never_raises(topic, request):
    at = page_session(topic)
    keys = [t.key for t in at.text_area]
    if not keys:
        pytest.skip(f"/{topic.replace('_', '-')} has no text box with its default settings")

    @FUZZ
    @given(st.one_of(SHORT_TEXT, LONG_TEXT), st.sampled_from(keys))
    def check(text, key):
        at.text_area(key=key).set_value(text).run()
        no_exception(at, repr(text))

    fuzz(request, check)
