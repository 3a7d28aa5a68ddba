"""The load client (scripts/load_test.py): it reads Streamlit's ForwardMsg stream right (exception boxes counted,
warnings apart, widgets found by their key), its statistics, and a short real run against the app."""

from __future__ import annotations

import gc
import json

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from app import i18n
from scripts import load_test as lt


def delta_with(kind: str) -> ForwardMsg:
    msg = ForwardMsg()
    element = msg.delta.new_element
    if kind == "exception":
        element.exception.type = "ValueError"
        element.exception.message = "boom"
    elif kind == "warning":
        element.exception.type = "Deprecation"
        element.exception.is_warning = True
    elif kind in ("sentence", "sentence-ko"):  # the app's own sentence for an unexpected error (app/serving.py)
        element.alert.body = i18n.text("ko" if kind == "sentence-ko" else "en", "common", "unexpected")
        element.alert.format = element.alert.ERROR
    elif kind == "other-error":  # a page's own refusal: a sentence the page expected, not an error of the app
        element.alert.body = "The text is empty."
        element.alert.format = element.alert.ERROR
    elif kind == "text_area":
        element.text_area.id = "$$ID-0123abcd-text"
    elif kind == "editor":
        element.dataframe.id = "$$ID-4567ef-sdpa-Q-3"
    return msg


def test_exception_boxes_are_counted_and_warnings_kept_apart():
    session, result = lt.StreamlitSession(port=0, timeout_s=1), lt.RunResult(ms=0)
    for kind in ("exception", "warning", "exception", "text_area"):
        session._delta(delta_with(kind).delta, result)
    assert result.exceptions == ["ValueError: boom", "ValueError: boom"]
    assert result.warnings == 1


def test_the_apps_sentence_for_an_unexpected_error_is_counted_once_with_or_without_its_traceback():
    """A hosted server shows an error no page expected as the app's sentence alone (app/serving.unexpected); a
    developer's run draws the traceback's Exception element under it: one error either way."""
    session, result = lt.StreamlitSession(port=0, timeout_s=1), lt.RunResult(ms=0)
    for kind in ("sentence", "other-error", "sentence-ko", "exception", "exception", "warning"):
        session._delta(delta_with(kind).delta, result)
    assert result.exceptions == [lt.APP_SENTENCE, "ValueError: boom", "ValueError: boom"]
    assert result.warnings == 1


def test_widgets_are_found_by_their_key():
    session, result = lt.StreamlitSession(port=0, timeout_s=1), lt.RunResult(ms=0)
    for kind in ("text_area", "editor"):
        session._delta(delta_with(kind).delta, result)
    assert session.widget("text")[0] == "$$ID-0123abcd-text"
    assert session.widget_with_prefix("sdpa-q-") == ("$$ID-4567ef-sdpa-Q-3", "sdpa-Q-3")
    with pytest.raises(lt.ProtocolError):
        session.widget("view")


def test_percentiles_and_capacity():
    p = lt.percentiles(list(range(1, 101)))  # 1..100 ms
    assert (p["n"], p["p50_ms"], p["max_ms"]) == (100, 50, 100)
    assert p["p95_ms"] == 95  # statistics.quantiles, inclusive: 1 + 0.95 * 99 = 95.05
    assert lt.percentiles([]) == {"n": 0}
    sweep = [
        {"sessions": 10, "by_page": {"attention": {"p95_ms": 400}}, "errors": 0, "exception_boxes": 0},
        {"sessions": 20, "by_page": {"attention": {"p95_ms": 1400}}, "errors": 0, "exception_boxes": 0},
        {"sessions": 30, "by_page": {"attention": {"p95_ms": 1300}}, "errors": 0, "exception_boxes": 1},
        {"sessions": 40, "by_page": {"attention": {"p95_ms": 2600}}, "errors": 0, "exception_boxes": 0},
    ]
    assert lt.capacity(sweep, 1500) == 20  # 30 had an exception box: not counted as served
    assert lt.capacity(sweep[3:], 1500) is None


def test_the_clients_start_up_heap_is_left_out_of_its_collections(tmp_path, monkeypatch):
    with lt.client_heap_frozen():
        assert gc.get_freeze_count() > 10_000  # streamlit's protos at least, imported above
    assert gc.get_freeze_count() == 0
    frozen = []

    async def measure(*args):
        frozen.append(gc.get_freeze_count())
        return {"warm_up": {"errors": [], "exception_boxes": []}, "sweep": []}

    monkeypatch.setattr(lt, "start_server", lambda *a, **k: None)
    monkeypatch.setattr(lt, "stop_server", lambda server: None)
    monkeypatch.setattr(lt, "measure", measure)
    assert lt.main(["--no-cold-start", "--soak-seconds", "0", "--out", str(tmp_path / "x.json")]) == 0
    assert frozen[0] > 10_000 and gc.get_freeze_count() == 0


@pytest.mark.slow
def test_short_run_against_the_app(tmp_path):
    """2 sessions for 10 s on 127.0.0.1 after a warm-up through every step of the study loop."""
    out = tmp_path / "load.json"
    args = ["--sweep", "2", "--seconds", "10", "--think", "0.5", "1.5", "--burst", "2", "--burst-seconds", "2"]
    code = lt.main([*args, "--soak-seconds", "0", "--no-cold-start", "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["warm_up"]["errors"] == [] and result["warm_up"]["exception_boxes"] == []
    assert {a["page"] for a in result["warm_up"]["actions"]} == {"attention", "padded-batch", "moe", "sdpa-steps"}
    (step,) = result["sweep"]
    assert step["sessions"] == 2 and step["first_page"]["n"] == 2
    assert step["actions"] >= 4 and step["actions"] == sum(v["n"] for v in step["by_action"].values())
    assert step["errors"] == 0 and step["exception_boxes"] == 0 and step["page_not_found"] == 0
    assert step["rss_mb"]["max"] > 100  # the server's process tree was found and measured
    assert result["burst"]["first_page"]["n"] == 2
    assert len(result["loadavg_before"]) == 3 and result["machine"]["cpu_count"]
    assert code == 0
