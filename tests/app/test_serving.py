"""app/serving.py: what one server process does after every script run."""

import gc
import os
import weakref

import pytest

from app import serving
from core.models.base import Trace
from tests.apptest_helpers import assert_no_exception, function_app, open_view

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it


def widget_metadata(at) -> dict:
    return at.session_state._state._state._new_widget_state.widget_metadata


@pytest.mark.slow  # /attention runs MiniLM
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


def _queued_script():
    """A page that waits behind another job in app/serving.py's heavy-work queue, with the places on show."""
    import threading

    import streamlit as st

    from app import serving

    gate = threading.Event()
    serving.HEAVY.submit(("test-serving-gate", st.session_state.get("n", 0)), gate.wait, "test-gate")
    shown = []
    words = serving.ui.t

    def spy(section, key, **fmt):  # what the waiting visitor reads, recorded
        shown.append(key)
        if key == "queue_waiting":
            gate.set()  # the job ahead finishes once the place was shown
        return words(section, key, **fmt)

    serving.ui.t = spy
    try:
        value = serving.heavy(("test-serving-job", st.session_state.get("n", 0)), lambda: 6 * 7, "test-job")
    finally:
        serving.ui.t = words
    st.session_state["shown"] = shown
    st.write(f"value {value}")


def test_a_heavy_job_waits_in_sight_and_is_computed_once():
    from app import serving

    computed = serving.HEAVY.computed
    at = function_app(_queued_script)
    at.run()
    assert_no_exception(at)
    assert "value 42" in [m.value for m in at.markdown]
    assert at.session_state["shown"][0] == "queue_waiting"  # place 1 behind the gate job
    assert not at.info  # the place box is gone once the result is in
    assert serving.HEAVY.computed == computed + 2  # the gate and the job
    at.run()  # the same requests again: answered from the kept results, nothing computed, nothing shown
    assert "value 42" in [m.value for m in at.markdown]
    assert at.session_state["shown"] == [] and serving.HEAVY.computed == computed + 2


def test_streamlits_cache_computes_an_identical_request_once():
    # app/serving.py relies on it for the lighter cached calls (models.run, padding_report, detector_map ...):
    # while one session computes a key, the others asking for it wait for that value (a lock per cache key).
    import threading

    import streamlit as st

    calls, started, release = [], threading.Event(), threading.Event()

    @st.cache_resource(show_spinner=False, max_entries=2)
    def slow(text: str):
        calls.append(text)
        started.set()
        assert release.wait(30)
        return object()

    results, asking = [], threading.Semaphore(0)

    def visitor():
        asking.release()
        results.append(slow("the same sentence"))

    threads = [threading.Thread(target=visitor) for _ in range(10)]
    threads[0].start()
    assert started.wait(30)
    for th in threads[1:]:
        th.start()
    for _ in range(10):
        assert asking.acquire(timeout=30)
    threading.Event().wait(0.3)  # let the nine reach the cache while the first still computes (no cache hit yet)
    assert calls == ["the same sentence"]  # nobody else entered the function: they wait for its value
    release.set()
    for th in threads:
        th.join(30)
    assert calls == ["the same sentence"] and len(results) == 10 and len({id(r) for r in results}) == 1


def test_a_browsers_tabs_are_one_visitor_for_the_queue():
    # Streamlit masks its XSRF cookie anew on each response; the token inside is the browser's, the same in every
    # tab: app/serving.visitor() keys the queue's one-waiting-job rule on it.
    from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string

    from app.serving import browser_token

    token = bytes(range(16))
    one, two = generate_xsrf_token_string(token, 1_800_000_000), generate_xsrf_token_string(token, 1_800_000_000)
    assert one != two and browser_token(one) == browser_token(two) == token.hex()
    assert browser_token(generate_xsrf_token_string()) != token.hex()  # another browser
    assert browser_token(token.hex()) == token.hex()  # a version-1 cookie: the bare token
    for bad in (None, "", "2|zz|00|1", "3|00|00|1", "2|00000000|00|1", "<script>"):
        assert browser_token(bad) is None, bad


def test_a_cookie_far_longer_than_streamlits_token_names_no_browser():
    """Streamlit's XSRF token is 16 random bytes; a client writes its own cookie, and the server took any length as
    the browser's name: a real server accepted an 8,000-character cookie (a larger one stalls its handshake), and
    the name, 8,008 characters, is what serving.first_seen keeps for 10,000 visitors (about 80 MB of one process
    held for good; Streamlit's own tokens, a few MB), the heavy queue keys on and the rooms' limits write to
    the database with every counted action. Such a client is its session, as one without the cookie is."""
    from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string

    from app.serving import MAX_TOKEN_BYTES, browser_token

    assert browser_token(generate_xsrf_token_string(bytes(range(16)))) == bytes(range(16)).hex()
    assert browser_token(bytes(MAX_TOKEN_BYTES).hex()) == bytes(MAX_TOKEN_BYTES).hex()
    for n in (MAX_TOKEN_BYTES + 1, 4_000):
        assert browser_token("ab" * n) is None, n  # a bare version-1 token
        assert browser_token(generate_xsrf_token_string(bytes(n))) is None, n  # masked, version 2


VISITOR_PROBE = """import os
import streamlit as st
from app import serving
with open(os.environ["VISITOR_LOG"], "a") as f:
    f.write(serving.visitor() + "\\n")
with open(os.environ["VISITOR_LOG"] + ".gc", "w") as f:
    f.write(str(st.get_option("runner.postScriptGC")))
st.markdown("ok")
"""


def test_on_a_real_server_two_tabs_of_one_browser_are_one_visitor(tmp_path, monkeypatch):
    # The queue's (and the rooms') per-browser rules rest on this: Streamlit sets its XSRF cookie on the page's
    # first answer and the browser sends it with each tab's websocket.
    import asyncio
    import os
    import signal
    import subprocess
    import time
    import urllib.request

    from scripts.app_server import free_port
    from scripts.load_test import StreamlitSession
    from scripts.serve_class import ROOT, healthy, streamlit_command

    (tmp_path / "probe.py").write_text(VISITOR_PROBE)
    log = tmp_path / "visitors.txt"
    monkeypatch.setenv("VISITOR_LOG", str(log))
    port = free_port()
    proc = subprocess.Popen(streamlit_command(port, str(tmp_path / "probe.py")), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while not healthy(port):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.3)

        async def visits():
            tab, same_browser, other_browser = (StreamlitSession(port, 60) for _ in range(3))
            same_browser.cookies = tab.cookies  # a second tab: the same cookie jar
            same_browser._http = urllib.request.build_opener(
                urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(tab.cookies)
            )
            for session in (tab, same_browser, other_browser):
                await session.open("")
                await session.close()

        asyncio.run(visits())
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    first, second, third = log.read_text().split()
    assert first.startswith("browser:") and first == second and third != first and third.startswith("browser:")
    # served from the repository root, as every deployment is: .streamlit/config.toml leaves collecting to
    # app/main.py (serving.script_run), not to Streamlit after each run
    assert (tmp_path / "visitors.txt.gc").read_text() == "False"


class _Cycle:
    def __init__(self):
        self.me = self  # garbage only a collection frees


def _cycle_in(run) -> weakref.ref:
    with run:
        return weakref.ref(_Cycle())


def test_overlapping_runs_are_collected_once_the_last_one_ends(monkeypatch):
    """A class's runs at one step are collected when the last ends, not each as it ends (each collection walked
    every run in flight); a lone run is collected as it ends, and overlapping runs at most COLLECT_EVERY_S apart."""
    from types import SimpleNamespace

    # The runs' clock stands still unless the test moves it: on the real one, a busy machine that paused this
    # process for COLLECT_EVERY_S between the lone run and the overlapping ones would have them collected early.
    now = [1000.0]
    monkeypatch.setattr(serving, "time", SimpleNamespace(monotonic=lambda: now[0]))
    gc.disable()  # Python's own collector must not free the cycles meanwhile
    gc.freeze()  # what the test process holds now: collections skip it, as the server's (serving.after_run)
    try:
        monkeypatch.setattr(serving, "_last_collection", now[0])
        assert _cycle_in(serving.script_run())() is None  # alone: collected as it ends
        first = serving.script_run()
        first.__enter__()
        second = _cycle_in(serving.script_run())  # ends while `first` runs: not yet
        assert second() is not None
        first.__exit__(None, None, None)  # the last run in flight ends
        assert second() is None
        now[0] += serving.COLLECT_EVERY_S
        with serving.script_run():  # runs overlapping for longer than COLLECT_EVERY_S: one collects anyway
            assert _cycle_in(serving.script_run())() is None
        with pytest.raises(RuntimeError), serving.script_run():  # a run that raises (a page switch) ends too
            raise RuntimeError
        assert serving._runs_in_flight == 0
    finally:
        gc.unfreeze()
        gc.enable()


def test_the_first_run_maps_large_blocks_on_their_own(monkeypatch):
    """The server's process sets glibc as /models' memory estimate assumes (core/timing.py map_large_blocks), once."""
    calls = []
    monkeypatch.setattr(serving.timing, "map_large_blocks", lambda: calls.append(1) or True)
    monkeypatch.setattr(serving, "_blocks_mapped", False)
    serving.after_run()
    serving.after_run()
    assert calls == [1]


def test_a_thread_started_before_any_run_ends_takes_the_apps_torch_count():
    """torch's thread count is each thread's own, fixed at its first torch call. A server's heavy-queue worker can
    start during the process's first run (a model page first), before that run ends: it must run on the app's count
    too, not on torch's default of a thread per core. A fresh process, as a server is, without OMP_NUM_THREADS
    (a laptop's `dev.sh run`): the count is 1 there, and torch's own default on a machine of 2 cores or more is not
    (on this project's 2-core CI it is 2)."""
    import subprocess
    import sys

    probe = (
        "import threading, torch\n"
        "from app import serving\n"
        "seen = []\n"
        "def worker():\n"
        "    torch.ones(64, 64).matmul(torch.ones(64, 64))\n"
        "    seen.append(torch.get_num_threads())\n"
        "t = threading.Thread(target=worker); t.start(); t.join()\n"
        "print(seen[0], serving.torch_threads())\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = root
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    in_thread, app_count = map(int, out.stdout.split())
    assert app_count == 1
    assert in_thread == app_count
