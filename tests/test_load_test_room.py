"""The room load client (scripts/load_test_room.py): it tells a page drawn from a fragment's run, arms and clears
fragment timers as Streamlit's frontend does, counts a fragment run the server ran as another page, reads the
facilitator's histogram; and a short real run of a room of two, where following costs no script run while the
room is still (the server reruns the panels, app/room/watch.py) and every step reaches both learners."""

from __future__ import annotations

import asyncio
import json

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from app import i18n
from scripts import load_test_room as ltr
from scripts.load_test import APP_SENTENCE


def message(kind: str, **fields) -> bytes:
    msg = ForwardMsg()
    if kind == "new_session":  # a full run's, or a fragment run's (fragments=[...])
        msg.new_session.page_script_hash = fields.get("page", "p1")
        msg.metadata.run.fragment_ids.extend(fields.get("fragments", []))
    elif kind == "auto_rerun":
        msg.auto_rerun.fragment_id, msg.auto_rerun.interval = fields["fid"], fields["every"]
    elif kind == "finished":
        msg.script_finished = fields["status"]
    elif kind == "widget":
        msg.delta.new_element.button.id = f"$$ID-abc-{fields['key']}"
    elif kind == "sentence":  # the app's sentence for an unexpected error (app/serving.unexpected), in Japanese
        msg.delta.new_element.alert.body = i18n.text("ja", "common", "unexpected")
    elif kind == "exception":
        msg.delta.new_element.exception.type, msg.delta.new_element.exception.message = "TypeError", "crafted"
    elif kind == "chart":
        chart = msg.delta.new_element.plotly_chart
        chart.id = "$$ID-def-room-hist"
        chart.spec = json.dumps({"data": [{"type": "bar", "x": fields["x"]}], "layout": {}})
    return msg.SerializeToString()


def test_pages_timers_and_histogram_are_read_from_the_stream():
    asyncio.run(read_the_stream())  # a timer is a task on the client's loop


async def read_the_stream():
    s = ltr.LiveSession(port=0, timeout_s=1, name="t")
    for raw in (message("new_session"), message("widget", key="room-next"), message("auto_rerun", fid="f1", every=1.5),
                message("finished", status=ForwardMsg.FINISHED_SUCCESSFULLY)):  # fmt: skip
        s.handle(raw)
    assert len(s.pages) == 1 and s.fragments == {"f1": 1.5} and s.has("room-next")
    for raw in (message("new_session", fragments=["f1"]), message("chart", x=[1, 2, 0]),
                message("finished", status=ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)):  # fmt: skip
        s.handle(raw)
    assert len(s.pages) == 1 and s.fragment_runs == 1 and s.fragments == {"f1": 1.5}  # a timer's run is no page
    assert s.chart_total == 3 and s.histogram[-1][1] == 3 and s.stale_runs == 0
    s.handle(message("new_session", page="p2"))  # a full run starts: the frontend clears every timer at once
    assert s.fragments == {} and s.armed == {}
    s.handle(message("finished", status=ForwardMsg.FINISHED_SUCCESSFULLY))
    assert len(s.pages) == 2 and not s.has("room-next")  # the new page drew neither
    s.handle(message("new_session", page="p1", fragments=["f1"]))  # a fragment run as the page it left
    assert s.stale_runs == 1


def test_an_error_in_a_room_panel_is_counted_as_a_hosted_server_shows_it():
    """A room panel's error is the app's sentence alone on a hosted server (app/views/room/follow.in_words), the
    sentence and the traceback's Exception element on a developer's run: one error each."""
    s = ltr.LiveSession(port=0, timeout_s=1, name="t")
    for raw in (message("new_session"), message("sentence"), message("sentence"), message("exception")):
        s.handle(raw)
    assert s.exceptions == [APP_SENTENCE, "TypeError: crafted"]


def test_the_answers_kept_are_read_once_the_learners_runs_settle():
    a, b = ltr.LiveSession(port=0, timeout_s=1, name="a"), ltr.LiveSession(port=0, timeout_s=1, name="b")
    assert ltr.settled([a, b], quiet_s=1.0)  # nothing ran yet
    b.handle(message("new_session", fragments=["f1"]))  # a click's run under way: its answer is not stored yet
    assert not ltr.settled([a, b], quiet_s=1.0, now=b.run_started + 60)
    b.handle(message("finished", status=ForwardMsg.FINISHED_EARLY_FOR_RERUN))  # restarted, not over
    assert b.running
    b.handle(message("finished", status=ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY))
    assert not ltr.settled([a, b], quiet_s=1.0, now=b.run_ended + 0.5)  # another may follow at once
    assert ltr.settled([a, b], quiet_s=1.0, now=b.run_ended + 1.0)


@pytest.mark.slow
def test_a_short_real_run(tmp_path, monkeypatch):
    from app.views.room.follow import FALLBACK_ENV

    # The servers' panels keep no fallback timer that could fire in the 2 idle seconds (its default, 15 s after a
    # panel drew, fell in them whenever the two learners took some 10 s to join on a busy machine): a run in them
    # is then one the server asked for, and a step reaches the learners only by the server's push.
    monkeypatch.setenv(FALLBACK_ENV, "600")
    out = tmp_path / "room.json"
    args = ["--learners", "2", "--idle-seconds", "2", "--steps", "1", "--ramp", "0.5", "--answer-spread", "0.5",
            "--settle", "1", "--out", str(out)]  # fmt: skip
    assert ltr.main(args) == 0
    result = json.loads(out.read_text())
    assert result["join"]["all_following"] and result["follow"]["changes"][0]["reached"] == 2
    assert result["answer"]["kept"] == result["answer"]["on_histogram"] == 2
    assert not result["exception_boxes"] and result["follow"]["changes"][0]["on_the_step_page"] == 2
    assert result["idle"]["fragment_runs"] == 0  # nothing changed: no panel ran (a timer would run them)
    assert {"command", "date", "machine", "loadavg_before", "loadavg_after"} <= set(result)
