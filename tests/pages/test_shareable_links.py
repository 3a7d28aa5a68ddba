"""Shareable links: every widget a page binds to the URL can be set by a link, and a bad link never breaks a page.

tests/pages/test_app_pages.py already checks that each page survives a few hostile parameters (lang=xx, a <script> key,
head=-5, a huge layer). Here every page's own widgets are driven through links, generically: each ui.* widget call
is recorded (key, kind, options or bounds, default) during a run with default inputs, then
  - a link that sets every widget to another valid value must show exactly those values, keep them in the URL and
    raise no "Ignored link parameters" notice (one choice widget at a time, since a choice can change which other
    widgets a page draws);
  - links with malformed values for every widget (NaN, inf, huge numbers, out-of-range and negative numbers,
    values off a slider's grid, script text as a choice, unknown keys) must run, name every bad parameter in the
    notice, fall back to the defaults and rewrite the URL to them.
New pages in app/catalog.py are covered without change here.
"""

from __future__ import annotations

import functools
import inspect
import math

import pytest

from app import catalog, i18n, ui
from tests.apptest_helpers import assert_no_exception
from tests.apptest_helpers import run_view as run_page  # the one helper: open main.py, switch page, apply link

pytestmark = pytest.mark.slow  # every page of the catalog, SmolLM2's included: not in `dev.sh quick`

PAGE_URLS = [p.url for p in catalog.PAGES]
WIDGETS = ("text_area", "select", "slider", "number", "checkbox")
LINK_TEXT = "Shared link: the dog chased the cat. 犬が猫を追った。 개가 고양이를 쫓았다."
SCRIPT = "<script>alert(1)</script>"
HUGE_NUMBER = "9" * 400  # parses as an int far out of any range; as a float it is finite too
IGNORED_PREFIX = i18n.text("en", "common", "ignored_params").split("{")[0]


class Recorder:
    """Wraps the ui widget functions to note how each URL-bound widget was created in the last run."""

    def __init__(self):
        self.specs: dict[str, dict] = {}

    def wrap(self, kind: str, fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            spec = dict(bound.arguments, kind=kind)
            if kind == "select":
                spec["options"] = list(spec["options"])
                spec["default"] = spec["options"][0] if spec["default"] is None else spec["default"]
            self.specs[spec["key"]] = spec
            return fn(*args, **kwargs)

        return recorded


@pytest.fixture
def recorder(monkeypatch):
    rec = Recorder()
    for kind in WIDGETS:
        monkeypatch.setattr(ui, kind, rec.wrap(kind, getattr(ui, kind)))
    return rec


def open_page(recorder: Recorder, url: str, link: dict | None = None):
    recorder.specs.clear()
    at = run_page(url, link)
    assert_no_exception(at)
    return at, dict(recorder.specs)


_DEFAULT_SPECS: dict[str, dict] = {}


def default_specs(recorder: Recorder, url: str) -> dict[str, dict]:
    """The widgets a page draws with no link (one run per page for the whole module)."""
    if url not in _DEFAULT_SPECS:
        _DEFAULT_SPECS[url] = open_page(recorder, url)[1]
    return _DEFAULT_SPECS[url]


# --- what a widget shows, and how the URL writes a value ----------------------------------------------------------


def is_int_slider(spec: dict) -> bool:
    return all(isinstance(spec[k], int) and not isinstance(spec[k], bool) for k in ("lo", "hi", "default"))


def url_text(value) -> str:
    """The URL form ui._mirror writes."""
    return str(int(value)) if isinstance(value, bool) else str(value)


def widget(at, spec: dict):
    kind, key = spec["kind"], spec["key"]
    if kind == "text_area":
        return at.text_area(key=key)
    if kind == "select":
        return at.radio(key=key) if spec["radio"] else at.selectbox(key=key)
    if kind == "slider":
        return at.slider(key=key)
    if kind == "number":
        return at.number_input(key=key)
    return at.checkbox(key=key)


def drawn(at, spec: dict) -> bool:
    try:
        widget(at, spec)
        return True
    except KeyError:
        return False


def same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def ignored_names(at) -> str:
    return " ".join(w.value for w in at.warning if w.value.startswith(IGNORED_PREFIX))


def ignored_notice(names) -> str:
    return i18n.text("en", "common", "ignored_params", names=", ".join(ui.literal(n) for n in sorted(names)))


# --- valid and invalid values for a widget ------------------------------------------------------------------------


def other_value(spec: dict):
    """A valid value that differs from the default, one step away (so that widgets whose range depends on this
    one stay valid)."""
    kind, default = spec["kind"], spec["default"]
    if kind == "text_area":
        return LINK_TEXT
    if kind == "checkbox":
        return not default
    if kind == "select":
        options = spec["options"]
        return options[(options.index(default) + 1) % len(options)]
    hi = spec["hi"]
    step = 1 if kind == "number" else (spec["step"] or (1 if is_int_slider(spec) else 0.01))
    value = default + step if default + step <= hi else default - step
    return value if isinstance(value, int) else round(value, 10)


def bad_values(spec: dict) -> list[str]:
    """Link values the widget must refuse: one per round, for every round (so each round sets every widget)."""
    kind = spec["kind"]
    if kind == "select":
        labels_not_keys = [o for o in ("NONE", str(spec["default"]).upper() + "_") if o not in spec["options"]]
        return [SCRIPT, "undefined", labels_not_keys[0]]
    if kind == "checkbox":
        return ["yes", "-1", "2"]
    lo, hi = spec["lo"], spec["hi"]
    if kind == "number":
        return ["nan", HUGE_NUMBER, str(lo - 5)]
    step = spec["step"]
    if is_int_slider(spec):
        return ["nan", HUGE_NUMBER, str(lo + step // 2) if step and step > 1 else str(lo - 5)]
    off_grid = str(lo + step / 2) if step else str(hi + 1.0)
    return ["nan", "inf", off_grid]


# --- tests --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", PAGE_URLS)
def test_link_sets_every_widget(recorder, url):
    defaults = default_specs(recorder, url)
    if not defaults:
        pytest.skip("page has no link-bound widgets")
    choices = [s for s in defaults.values() if s["kind"] == "select" and len(s["options"]) > 1]
    # 1. every non-choice widget at once, plus an unknown key that must be the only one reported
    link = {k: url_text(other_value(s)) for k, s in defaults.items() if s["kind"] != "select"}
    runs = [(link, [s for s in defaults.values() if s["kind"] != "select"])]
    # 2. each choice widget on its own
    runs += [({s["key"]: other_value(s)}, [s]) for s in choices]
    checked = 0
    for link, specs in runs:
        if not specs:
            continue
        at, after = open_page(recorder, url, {**link, "zz_unknown": "1"})
        hidden = {s["key"] for s in specs if s["key"] not in after}
        # only the unknown key is reported, and any widget hidden by another value of the same link (not lost
        # silently)
        assert ignored_names(at) == ignored_notice({"zz_unknown", *hidden}), (link, ignored_names(at))
        for spec in specs:
            want = other_value(spec)
            if spec["key"] in hidden:
                continue
            shown = widget(at, spec).value
            assert same(shown, want), (spec["key"], shown, want)
            if spec["kind"] == "text_area":
                assert at.query_params[spec["key"]] == [want] or at.query_params[spec["key"]] == want
            else:
                assert at.query_params[spec["key"]] in (url_text(want), [url_text(want)]), spec["key"]
            checked += 1
        # and the URL follows the visitor: put the widgets back to their defaults by hand; the link then holds
        # what each widget shows (not necessarily the default: a widget whose range another one sets may reset)
        reverted = [s for s in specs if s["key"] not in hidden]
        for spec in reverted:
            widget(at, spec).set_value(spec["default"])
        at.run()
        assert_no_exception(at)
        for spec in reverted:
            shown = url_text(widget(at, spec).value)
            if spec["kind"] != "text_area" or len(shown) <= ui.MAX_LINK_TEXT_CHARS:
                assert at.query_params[spec["key"]] in (shown, [shown]), spec["key"]
    assert checked >= len(defaults) // 2, f"only {checked} of {len(defaults)} widgets could be checked"


@pytest.mark.parametrize("url", PAGE_URLS)
def test_malformed_link_values_are_ignored(recorder, url):
    defaults = default_specs(recorder, url)
    refusable = {k: s for k, s in defaults.items() if s["kind"] != "text_area"}  # any text is valid text
    for round_ in range(3):
        link = {k: bad_values(s)[round_] for k, s in refusable.items()}
        link.update({"zz_unknown": SCRIPT, SCRIPT: "1", "x" * 300: HUGE_NUMBER})
        at, after = open_page(recorder, url, link)
        notice = ignored_names(at)
        for name in [*refusable, "zz_unknown", SCRIPT, "x" * 40]:
            assert name in notice, (round_, name, link.get(name), notice)
        assert "x" * 41 not in notice  # long names are shortened in the notice
        for key, spec in refusable.items():
            assert key in after and drawn(at, spec), key  # defaults draw the same widgets as before
            assert same(widget(at, spec).value, after[key]["default"]), (key, link[key])
            assert same(after[key]["default"], spec["default"]), key
            assert at.query_params[key] in (url_text(spec["default"]), [url_text(spec["default"])]), key
        for name in ("zz_unknown", SCRIPT, "x" * 300):
            assert name not in at.query_params  # dropped from the URL, not carried on


@pytest.mark.parametrize("url", [u for u in PAGE_URLS if u != "home"])
def test_long_link_text_is_cut_and_kept_out_of_the_url(recorder, url):
    defaults = default_specs(recorder, url)
    texts = [k for k, s in defaults.items() if s["kind"] == "text_area"]
    if not texts:
        pytest.skip("page has no text input")
    huge = ("The cat sat on the mat because it was tired. " * 700)[: ui.MAX_TEXT_CHARS + 5_000]
    at, _ = open_page(recorder, url, {texts[0]: huge})
    assert not ignored_names(at)  # long text is text, not a bad parameter
    assert len(at.text_area(key=texts[0]).value) == len(huge)  # the box shows what the link held ...
    cut = str(ui.MAX_TEXT_CHARS)[:2]  # ... and a notice says only 20,000 are used
    assert any(cut in i.value for i in at.info), [i.value for i in at.info]
    assert texts[0] not in at.query_params  # too long for a shareable link


def test_stale_parameters_of_hidden_widgets_are_dropped_silently(recorder):
    """Switching a choice that hides other widgets leaves their keys in the URL; the page drops them without
    telling the visitor that a link was ignored (there was no link)."""
    for url in PAGE_URLS:
        defaults = default_specs(recorder, url)
        for spec in (s for s in defaults.values() if s["kind"] == "select" and s["radio"]):  # part/view switches
            at, _ = open_page(recorder, url)
            widget(at, spec).set_value(other_value(spec))
            recorder.specs.clear()
            at.run()
            assert_no_exception(at)
            hidden = set(defaults) - set(recorder.specs)
            if hidden:
                assert not ignored_names(at), (url, spec["key"], ignored_names(at))
                assert not hidden & set(at.query_params), hidden & set(at.query_params)
                return
    pytest.skip("no page hides widgets when a choice changes")
