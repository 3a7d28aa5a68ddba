"""What an anonymous visitor of a hosted server can and cannot make the app do, headless (AppTest): a crafted link
cannot make the app's own notice show a link or fetch an image, an unexpected exception is one sentence (the
traceback in the server's log), a full server says so, and a text box takes at most the processing limit."""

from __future__ import annotations

import logging
import re

import pytest
from markdown_it import MarkdownIt
from streamlit import config

from app import catalog, i18n, serving, ui
from tests.apptest_helpers import assert_no_exception, run_view, shown_text

HOSTILE_NAMES = (
    "[a prize](https://example.com/win)",
    "![pixel](https://example.com/pixel.png)",
    "<img src=https://example.com/tag.png>",
    "<https://example.com/angle>",
    "https://example.com/bare",
    "www.example.com",
    "x`](https://example.com/tick)",
    "a\n\n[after a blank line](https://example.com/para)",
)


def _outside_code(markdown: str) -> str:
    """What CommonMark renders of `markdown` outside code spans, as HTML."""
    html = MarkdownIt("commonmark").render(markdown)
    return re.sub(r"<code>.*?</code>", "", html, flags=re.S)


def test_a_link_parameter_name_is_shown_as_typed_never_as_a_link_or_an_image():
    at = run_view("attention", params={name: "1" for name in HOSTILE_NAMES})
    assert_no_exception(at)
    notices = [w.value for w in at.warning if "Ignored link parameters" in w.value]
    assert notices, [w.value for w in at.warning]
    html = _outside_code(notices[0])
    assert "<a " not in html and "<img" not in html, html
    assert "example.com" not in html, html  # not even a bare URL that GitHub-style markdown would turn into a link
    assert "prize" in notices[0] and "pixel" in notices[0]  # the names are still there for the reader


def test_literal_keeps_every_character_inside_one_code_span():
    for name in HOSTILE_NAMES:
        html = MarkdownIt("commonmark").render(ui.literal(name))
        assert html.count("<code>") == 1 and "<a " not in html and "<img" not in html, (name, html)


@pytest.fixture()
def visitor_details():
    """Streamlit's error details as .streamlit/config.toml sets them for visitors (the tests run with "full")."""
    before = config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", "none")
    yield
    config.set_option("client.showErrorDetails", before)


def _a_traceback(record: logging.LogRecord) -> bool:
    """A log record that carries a traceback: Streamlit's (exc_info) or the app's (serving.traceback_text)."""
    return bool(record.exc_info) or "Traceback (most recent call last)" in record.getMessage()


def _broken_page(*_args, **_kwargs):
    raise RuntimeError("secret detail at /srv/attention-lab/private.py")


@pytest.fixture()
def break_page(monkeypatch):
    """Replace a topic's page function with one that raises. The navigation holds each page's function from the
    first run in this process on (catalog._sections), so it is made again with the broken one, and again after."""

    def broken(module):
        monkeypatch.setattr(module, "page", _broken_page)
        monkeypatch.setattr(serving, "_tracebacks", {})  # each test sees its own first traceback
        catalog._sections.cache_clear()

    yield broken
    catalog._sections.cache_clear()


def test_an_unexpected_exception_is_one_sentence_and_the_traceback_goes_to_the_log(break_page, visitor_details, caplog):
    from app.views import masks

    break_page(masks)
    with caplog.at_level(logging.ERROR, logger="attention_lab"):
        at = run_view("masks")
    assert not at.exception, [e.value for e in at.exception]  # no traceback box, not even Streamlit's redacted one
    assert [e.value for e in at.error] == [i18n.text("en", "common", "unexpected")]
    assert "secret detail" not in shown_text(at) and "RuntimeError" not in shown_text(at)
    logged = [r for r in caplog.records if "Traceback" in r.getMessage() and "secret detail" in r.getMessage()]
    assert logged, "the traceback did not reach the server's log"


def test_the_same_error_again_and_again_is_one_traceback_then_a_count(break_page, visitor_details, caplog, monkeypatch):
    """A prankster repeating a message that fails (a crafted widget value) gets the sentence each time, while the
    server's log gets the traceback once a minute for that error and then how many came since, not one per message."""
    from app.views import masks

    clock = [1000.0]
    monkeypatch.setattr(serving, "_clock", lambda: clock[0])
    break_page(masks)
    with caplog.at_level(logging.ERROR, logger="attention_lab"):
        at = run_view("masks")
        for _ in range(5):
            at.run()
            assert [e.value for e in at.error] == [i18n.text("en", "common", "unexpected")]
        clock[0] += serving.TRACEBACK_EVERY_S
        at.run()
    logged = [r for r in caplog.records if "Traceback" in r.getMessage() and "secret detail" in r.getMessage()]
    assert [r.getMessage().splitlines()[0] for r in logged] == [
        "unexpected error on a page",
        "unexpected error on a page (5 more like it since its last traceback)",
    ]


def _clicked(selections: list[str], caplog):
    """/attention's model view, then each crafted click on it (a websocket frame any visitor can send): the page
    after each."""
    from unittest import mock

    from streamlit.proto.WidgetStates_pb2 import WidgetState
    from streamlit.testing.v1 import element_tree

    at = run_view("attention", {"view": "grid", "text": "a dog ran"})
    assert_no_exception(at)
    (chart,) = [e.proto.id for e in at.get("plotly_chart") if e.proto.id.endswith("-fig-grid")]
    states, click = element_tree.ElementTree.get_widget_states, [""]

    def with_the_click(tree):
        sent = states(tree)
        sent.widgets.append(WidgetState(id=chart, string_value=click[0]))
        return sent

    with (
        caplog.at_level(logging.ERROR),
        mock.patch.object(element_tree.ElementTree, "get_widget_states", with_the_click),
    ):
        for selection in selections:
            click[0] = selection
            yield at.run()


def test_a_crafted_click_streamlit_cannot_read_is_one_sentence_and_one_traceback_a_minute(
    visitor_details, caplog, monkeypatch
):
    """A widget's callback, and Streamlit's reading of the widget values that decides which callbacks to call, run
    before app/main.py, under Streamlit's own handler: a crafted click on /attention's model view that Streamlit's
    own reading fails on (sent again and again, each frame another) showed Streamlit's English error box and logged
    a full traceback for every frame. It is the app's sentence, and the traceback once a minute, as for an error on
    a page."""
    monkeypatch.setattr(serving, "_tracebacks", {})
    for at in _clicked([f'{{"selection": {i}}}' for i in range(3)], caplog):
        assert not at.exception, [e.value for e in at.exception]
        assert [e.value for e in at.error] == [i18n.text("en", "common", "unexpected")]
    tracebacks = [r for r in caplog.records if _a_traceback(r)]
    assert [r.name for r in tracebacks] == ["attention_lab"], [(r.name, r.getMessage()) for r in tracebacks]


def test_a_crafted_click_on_the_model_view_opens_nothing(visitor_details, caplog):
    """A click no browser sends (a point at NaN or infinity, points that are no points) reached the click's callback,
    which failed on it (viz.grid.tile_of_point): Streamlit's English error box and a traceback per frame. It opens no
    head and says nothing."""
    crafted = [
        '{"selection": {"points": [{"x": NaN, "y": 0}], "point_indices": [], "box": [], "lasso": []}}',
        '{"selection": {"points": [{"x": Infinity, "y": 1}], "point_indices": [], "box": [], "lasso": []}}',
        '{"selection": {"points": "x", "point_indices": [], "box": [], "lasso": []}}',
        '{"selection": {"points": [7], "point_indices": [], "box": [], "lasso": []}}',
        '{"selection": {"points": 7, "point_indices": [], "box": [], "lasso": []}}',
    ]
    for at in _clicked(crafted, caplog):
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        assert at.session_state["view"] == "grid"
    assert not [r for r in caplog.records if _a_traceback(r)]


def test_a_developer_run_shows_the_traceback_under_the_sentence(break_page):
    from app.views import masks

    break_page(masks)
    at = run_view("masks")  # the tests run with client.showErrorDetails = "full", as scripts/dev.sh run does
    assert at.error and at.exception and "secret detail" in at.exception[0].value


def test_every_page_catches_in_one_place_in_every_language(break_page, visitor_details):
    from app.views import home

    break_page(home)
    for lang in ui.LANGS:
        at = run_view("home", params={"lang": lang})
        assert not at.exception and [e.value for e in at.error] == [i18n.text(lang, "common", "unexpected")]


def test_a_full_server_says_so_and_draws_no_page(monkeypatch):
    monkeypatch.setattr(serving, "_admitted", {"someone-else"})
    monkeypatch.setattr(serving, "_live_sessions", lambda: {"someone-else"})
    monkeypatch.setenv(serving.SESSIONS_ENV, "1")
    at = run_view("home")
    assert_no_exception(at)
    assert [w.value for w in at.warning] == [i18n.text("en", "common", "server_full")]
    assert not at.title and not at.markdown
    monkeypatch.setenv(serving.SESSIONS_ENV, "2")  # a place frees up: the next visitor gets the page
    at = run_view("home")
    assert_no_exception(at)
    assert at.title and not at.warning


def test_a_text_box_takes_at_most_the_processing_limit():
    at = run_view("attention", params={"text": "a dog ran. " * 10})
    assert_no_exception(at)
    assert at.text_area and all(box.max_chars == ui.MAX_TEXT_CHARS for box in at.text_area)


def test_a_longer_text_than_the_limit_sent_past_the_box_is_cut_before_the_model_reads_it(monkeypatch):
    """A crafted message (AppTest's set_value alike) carries 25,000 characters past the browser's max_chars: the
    page runs the model on the first 20,000 only (Streamlit cuts a typed value at max_chars, ui.text_area a link's)."""
    from app import models

    ran = []
    real = models.run
    monkeypatch.setattr(
        models, "run", lambda key, model, texts, *a, **k: (ran.append(texts), real(key, model, texts, *a, **k))[1]
    )
    at = run_view("attention")
    ran.clear()
    at.text_area(key="text").set_value("a dog ran. " * 2_500).run()
    assert_no_exception(at)
    assert ran and all(len(t) <= ui.MAX_TEXT_CHARS for texts in ran for t in texts), [len(t) for x in ran for t in x]
    assert ran[-1] == [("a dog ran. " * 2_500)[: ui.MAX_TEXT_CHARS]]


def test_a_link_with_hundreds_of_unknown_parameters_gets_a_short_notice_and_one_url_rewrite(monkeypatch):
    """A prankster's link with 300 junk keys (and one of the page's own with a bad value): the notice names the bad
    value's key and the first few junk names, cut to 40 characters, and counts the rest; the page draws as usual and
    the URL is rewritten once, not once per dropped key (each rewrite sends the whole query string)."""
    from streamlit.runtime.state.query_params import QueryParams

    sent = []
    send = QueryParams._send_query_param_msg
    monkeypatch.setattr(QueryParams, "_send_query_param_msg", lambda self: sent.append(1) or send(self))
    junk = {f"junk{i:03d}_" + "q" * 60: "1" for i in range(300)}
    at = run_view("padded-batch", {**junk, "head": "nan"})
    assert_no_exception(at)
    notice = next(w.value for w in at.warning if "Ignored link parameters" in w.value)
    assert len(notice) < 400, notice
    assert "`head`" in notice.replace(" ", "")  # the page's own parameter is always named
    assert "junk000_" + "q" * 32 + "…" in notice and "junk004_" in notice and "junk005_" not in notice
    assert notice.endswith(i18n.text("en", "common", "ignored_more", n=295)), notice
    assert at.number_input(key="head").value == 0 and at.get("plotly_chart")  # the page itself is unchanged
    assert not set(junk) & set(at.query_params)
    assert len(sent) < 20, len(sent)  # a few writes of the page's own keys; one per dropped key would be 300


def test_the_notice_names_every_unknown_parameter_while_few_and_counts_only_what_it_leaves_out():
    names = [f"n{i}" for i in range(ui.MAX_NAMED_UNKNOWN + 2)]
    for n in range(len(names) + 1):
        listed = ui.ignored_names({"head"}, names[:n])
        more = n - ui.MAX_NAMED_UNKNOWN if n > ui.MAX_NAMED_UNKNOWN + 1 else 0  # never "and 1 more" for one name
        assert listed.count("`") == 2 * (1 + n - more), listed
        assert listed.endswith(i18n.text("en", "common", "ignored_more", n=more)) == bool(more), listed


def test_a_visitors_request_for_the_servers_git_information_runs_no_git(monkeypatch):
    """Any client can send Streamlit's "load_git_info" message: it ran git several times in the server's event loop
    (2,000 such messages kept the next visitor's page from opening for 26 s) and named the repository, its branch
    and its uncommitted and untracked files. It runs nothing and answers nothing."""
    from types import SimpleNamespace

    from streamlit import git_util
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.runtime.app_session import AppSession

    asked, sent = [], []
    monkeypatch.setattr(git_util, "GitRepo", lambda path: asked.append(path) or SimpleNamespace())
    session = object.__new__(AppSession)  # its handler of the message, on the few attributes that handler reads
    session._script_data = SimpleNamespace(main_script_path="app/main.py")
    session._enqueue_forward_msg = sent.append
    msg = BackMsg()
    msg.load_git_info = True
    AppSession.handle_backmsg(session, msg)
    assert serving.ignore_git_info()  # this Streamlit has the handler it replaces
    assert asked == [] and sent == []


def test_a_file_a_client_uploads_is_not_kept(monkeypatch):
    """No page has a file uploader, yet Streamlit kept every file a client PUT to /_stcore/upload_file/<its session>/
    <any id> in memory until the session ended, with no limit on their number (200 PUTs of 1 MB: 200 MB). None is
    kept; one kept before the app was imported (a fresh process's first visitor) is dropped at the first run's end.
    The server refuses the body first: tests/test_hosting.py."""
    from types import SimpleNamespace

    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    assert serving.refuse_uploads()  # this Streamlit keeps uploads where it replaces the keeping
    files = MemoryUploadedFileManager("/_stcore/upload_file")
    for i in range(3):
        files.add_file("s1", UploadedFileRec(file_id=f"f{i}", name="x.bin", type="application/octet-stream", data=b"a"))
    assert files.get_files("s1", ["f0", "f1", "f2"]) == []
    kept = UploadedFileRec(file_id="early", name="x.bin", type="application/octet-stream", data=b"a" * 1000)
    files.file_storage["s2"]["early"] = kept  # as Streamlit's own add_file keeps it, before the app was imported
    monkeypatch.setattr(serving.Runtime, "exists", staticmethod(lambda: True))
    monkeypatch.setattr(serving.Runtime, "instance", staticmethod(lambda: SimpleNamespace(uploaded_file_mgr=files)))
    serving._forget_kept_uploads()
    assert files.get_files("s2", ["early"]) == [] and not files.file_storage


def _figure_with_csv():
    """A figure with its CSV, every request for its CSV that Streamlit keeps for this session answered thrice."""
    import numpy as np
    import plotly.graph_objects as go
    import streamlit as st
    from streamlit.runtime import get_instance

    from app import ui

    ui.show_figure(go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])), "map", data=np.array([[1.0, 2.0], [3.0, 4.0]]))
    files = get_instance().media_file_mgr
    st.session_state["answers"] = [files.execute_deferred(i) for i in list(files._deferred_callables) for _ in range(3)]


def test_a_figures_csv_is_built_once_however_often_a_client_asks_for_it(monkeypatch):
    """Streamlit built a download's contents anew for every request a client sent (a few bytes each, in the
    server's worker threads, outside the page slots): 300 requests for /attention's head map took a minute of the
    server's CPU and every other page 25 times longer. The CSV is built once, the same file every time."""
    from streamlit.testing.v1 import AppTest

    built, to_csv = [], ui.to_csv
    monkeypatch.setattr(ui, "to_csv", lambda *a, **k: built.append(1) or to_csv(*a, **k))
    at = AppTest.from_function(_figure_with_csv).run()
    assert_no_exception(at)
    answers = at.session_state["answers"]
    assert len(answers) == 3 and len(set(answers)) == 1, answers
    assert len(built) == 1


def test_what_a_client_chose_reaches_streamlits_log_as_one_short_line_and_once_a_minute(monkeypatch):
    """Streamlit writes a rerun's fragment id, a backend request's id or a file's id into its log as a client sent
    them (up to 1 MB each): a crafted message wrote a line that read as the server's own (a second passcode line),
    terminal escapes, and 1 MB of log per message. Each value is one short line, the same message once a minute and
    then a count of its repeats."""
    import io

    from streamlit.logger import get_logger

    clock = [1000.0]
    monkeypatch.setattr(serving, "_log_lines", {})
    monkeypatch.setattr(serving, "_clock", lambda: clock[0])
    log = get_logger("streamlit.runtime.app_session")  # where Streamlit writes the fragment's and request's ids
    assert serving.filter_streamlit_log() > 0
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    log.addHandler(handler)
    forged = "f1\n2026-11-29 18:00:00.000 rooms: opening a room on this server asks for the passcode FAKE1\x1b[2J"
    try:
        for _ in range(3):
            log.warning("The fragment with id %s does not exist anymore (%s)", forged, "x" * 100_000)
        clock[0] += serving.TRACEBACK_EVERY_S
        log.warning("The fragment with id %s does not exist anymore (%s)", forged, "x" * 100_000)
    finally:
        log.removeHandler(handler)
    lines = written.getvalue().splitlines()
    assert len(lines) == 2, [line[:120] for line in lines]
    assert all(len(line) < 400 and "\x1b" not in line for line in lines)
    assert "2 more like it" in lines[1]


def test_a_visitors_words_in_an_exception_are_one_line_of_the_servers_traceback_log(monkeypatch):
    """An exception's message may carry what a visitor sent (Streamlit's date reader writes 'Unable to parse date:
    ' and the value): a line break in it wrote a line into the server's log that read as the server's own (a
    second passcode line), a terminal escape cleared the operator's screen. The traceback keeps its frames and the
    exception's type and words, on one line each, whatever raised them (a cause and its context too)."""
    import io

    monkeypatch.setattr(serving, "_tracebacks", {})
    forged = "x\n2026-11-29 18:00:00.000 rooms: opening a room on this server asks for the passcode FAKE1\x1b[2J"
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    serving.LOG.addHandler(handler)
    try:
        try:
            try:
                raise KeyError("room")
            except KeyError as cause:
                raise ValueError(f"Unable to parse date: {forged}") from cause
        except ValueError as err:
            err.add_note(f"note: {forged}")
            serving._log_traceback(err)
    finally:
        serving.LOG.removeHandler(handler)
    lines = written.getvalue().splitlines()
    assert not [line for line in lines if "rooms:" in line and "ValueError" not in line and "note" not in line]
    assert "\x1b" not in written.getvalue()
    assert any(line.startswith("ValueError: Unable to parse date: x?2026") for line in lines), lines
    assert (
        "KeyError: 'room'" in lines and "The above exception was the direct cause of the following exception:" in lines
    )
    assert sum(line.startswith("Traceback (most recent call last)") for line in lines) == 2
    assert any("raise ValueError" in line for line in lines)  # the frames are still there
