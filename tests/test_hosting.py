"""A real hosted server (`streamlit run` with ATTENTION_LAB_HOSTED=1, from the repository root so
.streamlit/config.toml applies) against an anonymous client speaking Streamlit's websocket protocol: the client's
"clear cache" message leaves every visitor's shared caches alone, /_stcore/metrics tells it nothing about caches
or sessions, and a message above the widget size limit is refused."""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from core.room import PASSCODE_ENV
from scripts import load_test as lt
from scripts.app_server import free_port, start_server, stop_server


@pytest.fixture(scope="module")
def hosted_server(tmp_path_factory):
    port, log_path = free_port(), tmp_path_factory.mktemp("hosted") / "server.log"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTENTION_LAB_HOSTED", "1")
        mp.delenv(PASSCODE_ENV, raising=False)  # the operator set none: the server makes its own (test_rooms_...)
        mp.delenv("DATABASE_URL", raising=False)
        mp.setenv("ATTENTION_LAB_ROOMS", str(log_path.parent / "rooms.sqlite3"))
        with open(log_path, "w") as log:
            proc = start_server(port, log)
    try:
        yield port, log_path
    finally:
        stop_server(proc)


def _metrics(port: int) -> str:
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 only, never via a proxy
    try:
        with direct.open(f"http://{lt.HOST}:{port}/_stcore/metrics", timeout=30) as r:
            return r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return f"HTTP {err.code}"


async def _visit_and_clear(port: int) -> lt.RunResult:
    """Open /sdpa-steps (it fills shared caches), send the "clear cache" message, then change a widget."""
    s = lt.StreamlitSession(port, timeout_s=120)
    try:
        await s.open("sdpa-steps")
        msg = BackMsg()
        msg.clear_cache = True
        await s.ws.send(msg.SerializeToString())
        return await s.rerun(lt.ClientState(query_string=s.query, page_script_hash=s.page_hash))
    finally:
        await s.close()


def test_a_visitor_can_neither_clear_the_shared_caches_nor_read_their_metrics(hosted_server):
    port, log_path = hosted_server
    result = asyncio.run(_visit_and_clear(port))
    assert not result.exceptions
    log = log_path.read_text(encoding="utf-8")
    assert "asked to clear the shared caches: ignored" in log, log[-2000:]
    metrics = _metrics(port)
    for family in ("cache_memory_bytes", "session_state", "active_sessions", "session_events"):
        assert family not in metrics, metrics[:2000]


async def _oversized(port: int) -> str:
    """A rerun whose text is above .streamlit/config.toml's maxWidgetStateSize (1 MB): the server refuses it."""
    s = lt.StreamlitSession(port, timeout_s=60)
    try:
        await s.open("attention")
        wid, _ = s.widget("text")
        try:
            await s.set_widget(WidgetState(id=wid, string_value="x" * 2_000_000))
        except (lt.websockets.ConnectionClosed, TimeoutError) as err:
            return type(err).__name__
        return "accepted"
    finally:
        await s.close()


def test_a_message_above_the_widget_limit_is_refused(hosted_server):
    port, _ = hosted_server
    assert asyncio.run(_oversized(port)) != "accepted"


async def _upload(port: int, size: int) -> int:
    """PUT a file of `size` bytes to /_stcore/upload_file for this client's own session, as a browser's file uploader
    would (the session's id from its first message, Streamlit's XSRF cookie and header): the HTTP status."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    s = lt.StreamlitSession(port, timeout_s=60)
    try:
        await asyncio.to_thread(s._get, f"http://{lt.HOST}:{port}/_stcore/health")  # Streamlit's XSRF cookie
        s.ws = await lt.websockets.connect(
            f"ws://{lt.HOST}:{port}/_stcore/stream",
            subprotocols=["streamlit"],
            proxy=None,
            max_size=None,
            additional_headers={"Cookie": s.cookie_header()},
        )
        msg = BackMsg()
        msg.rerun_script.query_string, msg.rerun_script.page_name = "", "models"  # a light page
        await s.ws.send(msg.SerializeToString())
        session_id = ""
        while not session_id:
            reply = ForwardMsg()
            reply.ParseFromString(await asyncio.wait_for(s.ws.recv(), 60))
            if reply.WhichOneof("type") == "new_session":
                session_id = reply.new_session.initialize.session_id
        xsrf = next(c.value for c in s.cookies if c.name == "_streamlit_xsrf")
        body = (
            b"--b\r\nContent-Disposition: form-data; name=file; filename=x.bin\r\n\r\n" + b"a" * size + b"\r\n--b--\r\n"
        )
        put = urllib.request.Request(
            f"http://{lt.HOST}:{port}/_stcore/upload_file/{session_id}/file-1",
            data=body,
            method="PUT",
            headers={
                "Content-Type": "multipart/form-data; boundary=b",
                "X-Xsrftoken": xsrf,
                "Cookie": s.cookie_header(),
            },
        )
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with await asyncio.to_thread(direct.open, put, timeout=30) as r:
                return r.status
        except urllib.error.HTTPError as err:
            return err.code
    finally:
        await s.close()


def test_a_file_put_to_a_session_is_refused_before_it_is_read(hosted_server):
    """No page has a file uploader, yet Streamlit kept every file a client PUT to its session in memory, with no
    limit on their number (200 PUTs of 1 MB: 200 MB more): refused (413, .streamlit/config.toml maxUploadSize = 0);
    one that got past it is not kept either (tests/app/test_serving_hosted.py)."""
    port, _ = hosted_server
    assert asyncio.run(_upload(port, 1000)) == 413


async def _websocket_from(port: int, origin: str) -> str:
    """Open Streamlit's websocket as a page of `origin` would (a browser sends its page's Origin)."""
    try:
        ws = await lt.websockets.connect(
            f"ws://{lt.HOST}:{port}/_stcore/stream",
            subprotocols=["streamlit"],
            origin=origin,
            open_timeout=60,
            proxy=None,
        )
    except lt.websockets.exceptions.InvalidStatus as err:
        return f"HTTP {err.response.status_code}"
    await ws.close()
    return "open"


def test_a_page_of_another_site_cannot_open_a_session(hosted_server):
    """Streamlit refuses a cross-site websocket (SECURITY.md): a prankster's page cannot drive a visitor's browser
    into a session here; the server's own pages can."""
    port, _ = hosted_server
    assert asyncio.run(_websocket_from(port, "http://evil.example")) == "HTTP 403"
    assert asyncio.run(_websocket_from(port, f"http://{lt.HOST}.evil.example:{port}")) == "HTTP 403"
    assert asyncio.run(_websocket_from(port, f"http://{lt.HOST}:{port}")) == "open"


async def _passcode_boxes(port: int) -> int:
    """How many password boxes /room's open-a-room form draws."""
    s = lt.StreamlitSession(port, timeout_s=120)
    try:
        result = await s.open("room")
        assert not result.exceptions and not result.page_not_found
        return sum(type(w).__name__ == "TextInput" and w.type == w.PASSWORD for w in s.widgets.values())
    finally:
        await s.close()


MADE_PASSCODE = re.compile(r"[A-Z2-9]{5}(?:-[A-Z2-9]{5}){3}")  # core.room.new_passcode's shape


def test_rooms_on_a_hosted_server_with_no_passcode_set_open_with_one_it_wrote_to_its_log(hosted_server):
    """A lone hosted server whose operator set no passcode makes one: /room asks for it (the refusals and the room
    it opens: tests/pages/test_room_page.py), and the server's log has it, once."""
    port, log_path = hosted_server
    assert asyncio.run(_passcode_boxes(port)) == 1
    assert asyncio.run(_passcode_boxes(port)) == 1  # a second visitor: the same passcode, not written again
    made = MADE_PASSCODE.findall(log_path.read_text(encoding="utf-8"))
    assert len(made) == 1, made


async def _folder_boxes(port: int, headers: dict[str, str]) -> int:
    """How many text boxes /models draws for a visitor whose websocket request carries `headers`."""
    s = lt.StreamlitSession(port, timeout_s=120, headers=headers)
    try:
        result = await s.open("models")
        assert not result.exceptions and not result.page_not_found
        return sum(type(w).__name__ == "TextInput" for w in s.widgets.values())
    finally:
        await s.close()


def test_a_laptop_run_serves_a_proxys_visitors_as_hosted(tmp_path):
    """`dev.sh run` (127.0.0.1, neither setting) offers the folder box to a browser that reaches it straight, and
    not to a visitor an operator's own proxy brings (SECURITY.md): the request's forwarding headers decide."""
    port = free_port()
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("ATTENTION_LAB_HOSTED", raising=False)
        mp.delenv("ATTENTION_LAB_LOCAL", raising=False)
        mp.delenv(PASSCODE_ENV, raising=False)
        mp.delenv("DATABASE_URL", raising=False)
        mp.setenv("ATTENTION_LAB_ROOMS", str(tmp_path / "rooms.sqlite3"))
        with open(tmp_path / "server.log", "w") as log:
            proc = start_server(port, log)
    try:
        assert asyncio.run(_folder_boxes(port, {})) == 1
        assert asyncio.run(_folder_boxes(port, {"X-Forwarded-For": "203.0.113.7"})) == 0
        assert asyncio.run(_folder_boxes(port, {"X-Real-IP": "203.0.113.7"})) == 0
        assert asyncio.run(_passcode_boxes(port)) == 0  # a laptop run opens rooms with no passcode
        assert not MADE_PASSCODE.findall((tmp_path / "server.log").read_text(encoding="utf-8"))
    finally:
        stop_server(proc)


# --- hosted by default --------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def test_every_server_deployment_runs_hosted():
    """The Dockerfile's image, both compose replicas, the k8s Deployment and `dev.sh serve`'s servers set
    ATTENTION_LAB_HOSTED=1 (compose and serve_class bind 127.0.0.1 behind nginx: the address alone would say
    laptop); `dev.sh run` is the laptop run, bound to 127.0.0.1."""
    from scripts import serve_class

    assert re.search(r"^\s*ATTENTION_LAB_HOSTED=1\b", (ROOT / "Dockerfile").read_text(), re.M)
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    replicas = [s for s in compose["services"].values() if "STREAMLIT_SERVER_PORT" in s.get("environment", {})]
    assert len(replicas) >= 2 and all(s["environment"]["ATTENTION_LAB_HOSTED"] == "1" for s in replicas)
    (deployment,) = [
        d for d in yaml.safe_load_all((ROOT / "deploy/k8s/app.yaml").read_text()) if d["kind"] == "Deployment"
    ]
    (app,) = deployment["spec"]["template"]["spec"]["containers"]
    assert {"name": "ATTENTION_LAB_HOSTED", "value": "1"} in app["env"]
    servers = serve_class.Class([8601], 8080, ROOT, ROOT)
    assert servers.server_env()["ATTENTION_LAB_HOSTED"] == "1"
    run_line = re.search(r"^\s*run\)(.*?);;", (ROOT / "scripts/dev.sh").read_text(), re.M | re.S).group(1)
    assert "--server.address 127.0.0.1" in run_line


@pytest.mark.parametrize(
    ("address", "env", "hosted"),
    [
        (None, {}, True),  # Streamlit's default: every interface
        ("0.0.0.0", {}, True),
        ("127.0.0.1", {}, False),
        ("localhost", {}, False),
        ("::1", {}, False),
        ("127.0.0.1", {"ATTENTION_LAB_HOSTED": "1"}, True),
        ("0.0.0.0", {"ATTENTION_LAB_LOCAL": "1"}, False),
        ("127.0.0.1", {"ATTENTION_LAB_HOSTED": "1", "ATTENTION_LAB_LOCAL": "1"}, True),
    ],
)
def test_hosted_unless_a_laptop_run(monkeypatch, address, env, hosted):
    from streamlit import config

    from app import serving

    for name in (serving.HOSTED_ENV, serving.LOCAL_ENV):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    before = config.get_option("server.address")
    config.set_option("server.address", address)
    try:
        assert serving.hosted() is hosted
    finally:
        config.set_option("server.address", before)


def test_the_hostile_script_sends_the_largest_message_the_server_accepts():
    """scripts/hostile_sessions.py's value: a rerun message carrying it fits .streamlit/config.toml's limit, with
    less than 2 % to spare (so the measured load is the worst a client can send)."""
    import tomllib

    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ClientState_pb2 import ClientState

    from scripts import hostile_sessions

    limit = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())["server"]["maxWidgetStateSize"] * 10**6
    state = ClientState(query_string="text=a", page_script_hash="0" * 32, page_name="attention")
    for value in ("words", "filler"):
        text = hostile_sessions.hostile_text(49, value)
        state.widget_states.widgets.append(WidgetState(id="$$ID-" + "0" * 32 + "-text", string_value=text))
        msg = BackMsg()
        msg.rerun_script.CopyFrom(state)
        assert 0.98 * limit < len(msg.SerializeToString()) < limit
        del state.widget_states.widgets[:]


# --- a bounded number of page runs at once -----------------------------------------------------------------------


def test_at_most_page_runs_pages_run_at_once_and_a_waiting_one_can_be_stopped(monkeypatch):
    import threading
    import time
    from types import SimpleNamespace

    from app import serving

    slots = serving._page_runs()
    running, most, lock, full = [0], [0], threading.Lock(), threading.Event()

    def page():
        with serving.page_slot():
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
                if running[0] == slots:
                    full.set()
            # Held until every slot has been taken once, then a while longer: the runs overlap however slowly a
            # busy machine starts the threads (started 25 ms apart at load 6, a run that only slept 50 ms could end
            # before the fourth began), and a run let in past the limit would be counted meanwhile.
            full.wait(10)
            time.sleep(0.05)
            with lock:
                running[0] -= 1

    threads = [threading.Thread(target=page) for _ in range(3 * slots)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == slots

    class Stopped(Exception):
        pass

    def stop():
        raise Stopped

    held = [f"other{i}" for i in range(slots)]
    assert all(serving._page_slots.acquire(who, timeout=1) for who in held)  # every slot taken
    try:
        monkeypatch.setattr(serving, "get_script_run_ctx", lambda **_: SimpleNamespace(yield_check=stop))
        monkeypatch.setattr(serving, "visitor", lambda: "browser:left")
        with pytest.raises(Stopped):  # the visitor left while waiting: the run ends, no slot kept
            with serving.page_slot():
                pass
    finally:
        for who in held:
            serving._page_slots.release(who)
    assert serving._page_slots.in_use() == 0


def test_a_page_waiting_in_the_heavy_queue_gives_its_slot_back():
    import threading

    from app import serving

    free_while_waiting = []

    def page():
        with serving.page_slot():
            # every other slot taken by other pages; this one waits for a heavy job that needs a page to run
            others = [f"other{i}" for i in range(serving._page_runs() - 1)]
            assert all(serving._page_slots.acquire(who, timeout=1) for who in others)
            with serving._slot_given_back():
                free_while_waiting.append(serving._page_slots.acquire("another", timeout=1))
                serving._page_slots.release("another")
            for who in others:
                serving._page_slots.release(who)

    t = threading.Thread(target=page)
    t.start()
    t.join(10)
    assert free_while_waiting == [True]
    assert serving._page_slots.in_use() == 0  # all given back


def test_a_visitor_keeps_the_time_it_was_first_seen():
    import time

    from app import serving

    first = serving.first_seen("browser:first-seen-test")
    time.sleep(0.01)
    assert serving.first_seen("browser:first-seen-test") == first
    assert serving.first_seen("browser:first-seen-later") > first
