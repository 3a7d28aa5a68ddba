"""Process-wide settings for one server process that a whole class shares. app/main.py calls
`after_run()` at the end of every script run; both steps below are cheap after their first time.

1. torch runs each model call on one thread (unless OMP_NUM_THREADS says otherwise). Every visitor's script runs
   in its own thread of this process; torch's default of one worker thread per core makes concurrent calls fight
   over the cores, and on a busy 2-core machine a MiniLM forward took 1.2-1.4 s with 2 threads against 0.12 s with
   1 (benchmarks/rerun_gc.py, scripts/load_test.py). Visitors run in parallel instead: torch releases the GIL.

2. The long-lived heap is frozen. Streamlit runs a full `gc.collect(2)` after every script run
   (`runner.postScriptGC`); a full collection walks every tracked object, and once torch, transformers, plotly and
   a model are imported that is about 440,000 objects: 0.3-1 s per rerun with the GIL held, which every visitor of
   the server waits for. `gc.freeze()` moves the objects alive now into a permanent generation that collections
   skip; what a run creates later (figures, session state, traces) is still collected after every run, so the
   setting's purpose, memory that does not build up, is kept. The heap is frozen again whenever modules were
   imported since the last freeze (a page's first visit imports its code, a model's first load its transformers
   classes): a bounded number of times per process. Each freeze collects first, so the garbage of that moment is
   freed rather than frozen for good. ATTENTION_LAB_GC_FREEZE=0 turns this off (benchmarks/rerun_gc.py compares).

3. Stale widgets are forgotten. Streamlit (1.67) drops a stale widget's value after a run but keeps its metadata
   (id, serde, callbacks and what they close over) for the rest of the session. A clickable plotly chart is a widget
   whose id hashes the figure, so every new sentence on /attention's model view left one more entry per session;
   with its callback holding the run's trace, a 10-minute soak at 30 visitors grew by 13 MB a minute (mallinfo:
   memory in use, not fragmentation; tracemalloc saw nothing, as tensors live outside Python's allocator).
   `forget_stale_widgets()` removes the metadata of widgets that hold no value any more (Streamlit removed it at the
   end of an earlier run) and were not drawn by this run; fragment runs are left alone.

4. Heavy model work goes through one queue per process (`heavy()`, app/work_queue.py): identical
   requests (a room following its facilitator) are computed once, at most ATTENTION_LAB_HEAVY_WORKERS (1) run at
   a time so the other pages keep a core, and a waiting visitor sees their place and an estimated wait; leaving
   the page (the script is stopped or rerun) frees the place. It is fair between visitors: a browser (all its
   tabs: `visitor()`) holds at most one waiting job per kind, a newer request replacing its older one. Every heavy
   path uses it, the pages' live runs with a progress bar included (`heavy(..., progress=...)`). Lighter cached calls (st.cache_resource /
   st.cache_data) are single-flight already: Streamlit holds a lock per cache key while one session computes it.
"""

from __future__ import annotations

import gc
import os
import sys
import threading

import streamlit as st
import torch
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from app import ui
from app.work_queue import QueueFull, Replaced, Ticket, WorkQueue, workers_from_env

_lock = threading.Lock()
_modules_at_freeze = 0
_threads_set = False
FREEZE = os.environ.get("ATTENTION_LAB_GC_FREEZE", "1") != "0"


def forget_stale_widgets() -> int:
    """Remove the metadata of this session's widgets that hold no value and were not drawn in this run (3. above);
    returns how many. Call at the end of a full script run."""
    ctx = get_script_run_ctx()
    try:
        if ctx is None or ctx.fragment_ids_this_run:
            return 0
        safe = ctx.session_state
        state = safe._state  # SessionState under SafeSessionState, which holds its lock while Streamlit changes it
        drawn = ctx.shared.widget_ids_this_run.snapshot()
        with safe._lock:
            widgets = state._new_widget_state
            gone = [
                wid
                for wid in widgets.widget_metadata
                if wid not in drawn and wid not in widgets.states and wid not in state._old_state
            ]
            for wid in gone:
                del widgets.widget_metadata[wid]
    except AttributeError:  # another Streamlit's internals: leave them alone (tests/test_serving.py would fail)
        return 0
    return len(gone)


def after_run() -> None:
    """Call at the end of a full script run. Costs a dict scan, a len() and a flag test when there is nothing to
    do."""
    global _modules_at_freeze, _threads_set
    forget_stale_widgets()
    if _threads_set and (not FREEZE or len(sys.modules) == _modules_at_freeze):
        return
    with _lock:  # sessions run their scripts in threads of one process
        if not _threads_set:
            torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or 1))
            _threads_set = True
        if FREEZE and len(sys.modules) != _modules_at_freeze:
            gc.collect()
            gc.freeze()
            _modules_at_freeze = len(sys.modules)


# --- heavy work: one queue per process (4. above) ----------------------------------------------------------------

# First guesses of a run's seconds on one core (the queue then learns them): logit lens at 64 tokens 1.6 s
# (results/), a short generation, a live ablation card of a few draws, one layer of a long document, the pages'
# live runs (timings and evaluations of a few tens of seconds at most; a timing is kept by the page that asked, so
# the queue keeps none: a later click measures anew).
HEAVY = WorkQueue(
    workers=workers_from_env(),
    max_waiting=int(os.environ.get("ATTENTION_LAB_QUEUE_MAX", "64")),
    keep={"logit_lens": 8, "generate": 4, "claim_card": 8, "layer_qk": 2, "transformer_xl": 4, "detector_map": 4,
          "rope_live": 2, "antecedent_eval": 2, "sdpa_live": 0, "linear_timing": 0, "linear_generation": 0},
    estimates_s={"logit_lens": 2.0, "generate": 3.0, "claim_card": 10.0, "layer_qk": 10.0, "transformer_xl": 10.0,
                 "detector_map": 10.0, "rope_live": 30.0, "antecedent_eval": 30.0, "sdpa_live": 20.0,
                 "linear_timing": 20.0, "linear_generation": 20.0},
    name="heavy",
)  # fmt: skip
POLL_S = 0.5  # how often a waiting visitor's place and wait are refreshed (and a stop request noticed)
XSRF_COOKIE = "_streamlit_xsrf"  # Streamlit's own per-browser cookie (server.enableXsrfProtection, on by default)


def browser_token(cookie: str | None) -> str | None:
    """The random token inside Streamlit's XSRF cookie ("2|mask|masked token|time", or a bare v1 hex token): the
    same for every tab of one browser while the mask changes with each response; None when absent or malformed."""
    if not cookie:
        return None
    parts = cookie.strip("\"'").split("|")
    try:
        if len(parts) == 4 and parts[0] == "2":
            mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
            token = bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked)) if mask else b""
        elif len(parts) == 1:
            token = bytes.fromhex(parts[0])
        else:
            return None
    except ValueError:
        return None
    return token.hex() if len(token) >= 8 else None


def visitor() -> str | None:
    """Who asks, for the queue's one waiting job per visitor and kind: the browser when it sent Streamlit's XSRF
    cookie (its tabs are one visitor), else this session (a client that keeps no cookies: each connection is its
    own, and nginx bounds how many one address opens). None outside a script run."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return None
    try:
        token = browser_token(st.context.cookies.get(XSRF_COOKIE))
    except Exception:  # noqa: BLE001 - no request behind this session (AppTest): the session decides
        token = None
    return f"browser:{token}" if token else f"session:{ctx.session_id}"


def heavy(key, fn, kind: str, progress=None):
    """fn() computed once for every session asking for `key` (which names the work, model, text and settings),
    through the process's heavy-work queue. While it waits, the page shows the visitor's place and an estimated
    wait; a stopped or rerun script leaves the queue. Returns fn's result or raises its exception; when too many
    jobs wait, or a newer request of this visitor (another tab) replaced this one, says so and stops this run (the
    other pages keep working). progress: for a live run that reports, `label -> words` of its bar; fn is then
    called as fn(report) with report(fraction, label=None)."""
    box = None
    shown = None

    def on_wait(ticket: Ticket) -> None:
        nonlocal box, shown
        check = getattr(get_script_run_ctx(suppress_warning=True), "yield_check", None)
        if check is not None:
            check()  # raises Streamlit's stop or rerun: the visitor left or changed something
        place, seconds = ticket.position(), max(1, round(ticket.eta_s()))
        report = ticket.progress() if progress is not None else None
        if place == 0 and report is not None:
            frac, label = report
            words = ("bar", round(frac, 2), None if label is None else progress(label))
        elif place == 0:
            words = ui.t("models", "queue_running", seconds=seconds)
        else:
            words = ui.t("models", "queue_waiting", place=place, seconds=seconds)
        if words != shown:
            if box is None:
                box = st.empty()
            if isinstance(words, tuple):
                box.progress(words[1], text=words[2])
            else:
                box.info(words)
            shown = words

    try:
        return HEAVY.run(key, fn, kind, on_wait=on_wait, poll_s=POLL_S, visitor=visitor(), reports=progress is not None)
    except QueueFull as err:
        st.warning(ui.t("models", "queue_full", n=err.waiting))
        st.stop()
    except Replaced:
        st.info(ui.t("models", "queue_replaced"))
        st.stop()
    finally:
        if box is not None:
            box.empty()
