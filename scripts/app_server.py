"""Start and stop a real `streamlit run` of the app, and the page probes a browser needs to know a run is over.

Shared by the real-browser test (tests/test_browser.py) and the load test (scripts/load_test.py).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[1]

# The browser every real-browser test and check drives: Debian's build of chromium's headless shell (the package
# chromium-headless-shell), the same Blink and V8 as its chromium, without the windowed browser that chromium's own
# --headless mode keeps running hidden. Opening pages took about 15 % less CPU in it (six pages with their checks, in
# turns: 99-104 s of the machine's CPU with chromium, 84-89 s with the shell), and the tests' largest share of CPU
# is the browser's.
CHROMIUM = "/usr/bin/chromium-headless-shell"

# Streamlit marks its root element with the script state; stale elements are those of the previous run that
# the current run has not replaced yet.
RUN_FINISHED = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
      && document.querySelector('[data-stale="true"]') === null;
}"""
# Counts the script runs the server reports finished to the page (window.__runsFinished; an init script): each
# ForwardMsg script_finished on the page's websocket, except one that ended for a rerun (another run follows at
# once). A run counts once the app has handled the message and React has drawn what it changed: the count waits
# for a timer, then a MessageChannel message, which React's scheduler queues its render on. Not the DOM's
# data-test-script-state going from 'running' to 'notRunning': the frontend handles a run's messages as they
# arrive and React draws once for all it handled, so a short run may never show 'running' (a radio's choice by
# keyboard, at load 11: 5 runs of 60 left the attribute untouched, though each script_finished reached the page).
_FINISHED = ForwardMsg.DESCRIPTOR.fields_by_name["script_finished"]
COUNT_RUNS = (
    f"(() => {{ const FIELD = {_FINISHED.number}, FOR_RERUN = {ForwardMsg.FINISHED_EARLY_FOR_RERUN};"
    + """
  window.__runsFinished = 0;
  // a ForwardMsg's script_finished status (a varint field), null for any other message
  const finishedStatus = (buffer) => {
    const b = new Uint8Array(buffer);
    let i = 0;
    const varint = () => { let x = 0, f = 1, c; do { c = b[i++]; x += (c & 127) * f; f *= 128; } while (c & 128); return x; };
    while (i < b.length) {
      const tag = varint(), wire = tag % 8;
      if (Math.floor(tag / 8) === FIELD && wire === 0) return varint();
      if (wire === 0) varint(); else if (wire === 2) { const n = varint(); i += n; } else if (wire === 1) i += 8;
      else if (wire === 5) i += 4; else return null;
    }
    return null;
  };
  window.__scriptFinishedStatus = finishedStatus;  // for tests/test_browser.py to check it against protobuf's
  const afterRender = (f) => setTimeout(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => { channel.port1.close(); f(); };
    channel.port2.postMessage(0);
  });
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        if (!(e.data instanceof ArrayBuffer)) return;
        const status = finishedStatus(e.data);
        if (status !== null && status !== FOR_RERUN) afterRender(() => { window.__runsFinished += 1; });
      });
    }
  };
})();
"""
)


_handed_out: set[int] = set()


def free_port() -> int:
    """A port free on 127.0.0.1 now, never one this process was handed before. The kernel picks a free port at
    random, and once the probe closes, the same port is free for the next call: two calls in a row returned the
    same port about once in 16,000 here (Linux 6.18, odd ports of 32768-60999), so two servers a test started on
    them collided, the second failing to bind. Two pytest-xdist workers are two processes that may probe at once:
    each takes only its share of the ports (_worker_share), so no two workers of one run are handed the same."""
    worker, workers = _worker_share()
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _handed_out and (port // 2) % workers == worker:
            _handed_out.add(port)
            return port


def _worker_share() -> tuple[int, int]:
    """(this worker's index, the number of workers) under pytest-xdist (gw0, gw1, ...), else (0, 1). Ports go to
    workers by port // 2: the kernel hands a probe odd ports, so port % 2 would leave one of two workers none."""
    name, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if name.startswith("gw") and name[2:].isdigit() and count.isdigit() and int(count) > int(name[2:]):
        return int(name[2:]), int(count)
    return 0, 1


def start_server(
    port: int,
    log: IO[str],
    timeout_s: float = 120,
    extra_args: Sequence[str] = (),
    launcher: Sequence[str] = ("-m", "streamlit"),
) -> subprocess.Popen:
    """`streamlit run app/main.py` on 127.0.0.1:port, offline, in its own process group; returns once
    /_stcore/health answers. Raises RuntimeError (after stopping it) when it exits or stays unhealthy.

    Run from the repository root, as `bash scripts/dev.sh run` runs it, so .streamlit/config.toml applies;
    `extra_args` go last (e.g. ["--runner.postScriptGC", "true"] to compare a setting). `launcher`: the
    interpreter's arguments that stand for `streamlit` (a measuring script's wrapper: "-c", code, ...)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    cmd = [
        sys.executable,
        *launcher,
        "run",
        "app/main.py",
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "viewer",  # no Deploy button
        *extra_args,
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            pass
        if time.monotonic() > deadline:
            stop_server(proc)
            raise RuntimeError(f"streamlit did not become healthy within {timeout_s:g} s")
        time.sleep(0.3)


def stop_server(proc: subprocess.Popen, timeout_s: float = 15) -> None:
    """Stop the server and anything it started (its whole process group)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=timeout_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=timeout_s)
