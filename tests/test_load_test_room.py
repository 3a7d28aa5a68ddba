"""The room load client (scripts/load_test_room.py): it tells a page drawn from a fragment's poll, keeps the
fragments a page registered, reads the facilitator's histogram, and a short real run of a room of two."""

from __future__ import annotations

import json

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from scripts import load_test_room as ltr


def message(kind: str, **fields) -> bytes:
    msg = ForwardMsg()
    if kind == "new_session":
        msg.new_session.page_script_hash = fields.get("page", "p1")
    elif kind == "auto_rerun":
        msg.auto_rerun.fragment_id, msg.auto_rerun.interval = fields["fid"], fields["every"]
    elif kind == "finished":
        msg.script_finished = fields["status"]
    elif kind == "widget":
        msg.delta.new_element.button.id = f"$$ID-abc-{fields['key']}"
    elif kind == "chart":
        chart = msg.delta.new_element.plotly_chart
        chart.id = "$$ID-def-room-hist"
        chart.spec = json.dumps({"data": [{"type": "bar", "x": fields["x"]}], "layout": {}})
    return msg.SerializeToString()


def test_pages_fragments_and_histogram_are_read_from_the_stream():
    s = ltr.LiveSession(port=0, timeout_s=1, name="t")
    for raw in (message("new_session"), message("widget", key="room-next"), message("auto_rerun", fid="f1", every=1.5),
                message("finished", status=ForwardMsg.FINISHED_SUCCESSFULLY)):  # fmt: skip
        s.handle(raw)
    assert len(s.pages) == 1 and s.fragments == {"f1": 1.5} and s.has("room-next")
    for raw in (message("new_session"), message("chart", x=[1, 2, 0]),
                message("finished", status=ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)):  # fmt: skip
        s.handle(raw)
    assert len(s.pages) == 1 and s.fragment_runs == 1 and s.fragments == {"f1": 1.5}  # a poll is not a page
    assert s.chart_total == 3 and s.histogram[-1][1] == 3
    for raw in (message("new_session", page="p2"), message("finished", status=ForwardMsg.FINISHED_SUCCESSFULLY)):
        s.handle(raw)
    assert len(s.pages) == 2 and s.fragments == {} and not s.has("room-next")  # the new page drew neither


@pytest.mark.slow
def test_a_short_real_run(tmp_path):
    out = tmp_path / "room.json"
    args = ["--learners", "2", "--idle-seconds", "2", "--steps", "1", "--ramp", "0.5", "--answer-spread", "0.5",
            "--settle", "1", "--out", str(out)]  # fmt: skip
    assert ltr.main(args) == 0
    result = json.loads(out.read_text())
    assert result["join"]["all_following"] and result["follow"]["changes"][0]["reached"] == 2
    assert result["answer"]["kept"] == result["answer"]["on_histogram"] == 2
    assert not result["exception_boxes"] and result["idle"]["fragment_runs"] > 0
    assert {"command", "date", "machine", "loadavg_before", "loadavg_after"} <= set(result)
