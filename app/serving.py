"""Process-wide settings for one server process that a whole class shares. app/main.py calls
`after_run()` at the end of every script run; both steps below are cheap after their first time.

1. torch runs each model call on one thread (unless OMP_NUM_THREADS says otherwise). Every visitor's script runs
   in its own thread of this process; torch's default of one worker thread per core makes concurrent calls fight
   over the cores, and on a busy 2-core machine a MiniLM forward took 1.2-1.4 s with 2 threads against 0.12 s with
   1 (benchmarks/rerun_gc.py, scripts/load_test.py). Visitors run in parallel instead: torch releases the GIL.
   torch's count is each thread's own: a thread keeps the count in force at its first torch call, and
   set_num_threads changes only the calling thread's and the one later threads start with. So the count is set as
   this module is imported, before any page runs: set at the end of the first run, as it was, it missed the heavy
   queue's worker when a fresh process's first visit was a model page (the worker, started during that run, kept
   the machine's core count for every visitor's model work).
   At the first run's end, glibc is told to map every block of 1 MiB or more on its own (core/timing.py
   map_large_blocks): a run's scores go back to the system when it ends, and its resident peak is what /models
   estimates.

2. The long-lived heap is frozen, and a burst of runs is collected once, at its end. Streamlit can run a full
   `gc.collect(2)` after every script run (`runner.postScriptGC`); a full collection walks every tracked object,
   and once torch, transformers, plotly and a model are imported that is about 440,000 objects: 0.3-1 s per rerun
   with the GIL held, which every visitor of the server waits for. `gc.freeze()` moves the objects alive now into a
   permanent generation that collections skip. The heap is frozen again whenever modules were imported since the
   last freeze (a page's first visit imports its code, a model's first load its transformers classes): a bounded
   number of times per process. Each freeze collects first, so the garbage of that moment is freed rather than
   frozen for good. ATTENTION_LAB_GC_FREEZE=0 turns this off (benchmarks/rerun_gc.py compares). While a process
   imports its code or loads a model, automatic collection waits and the imported heap is frozen at once
   (app/collector.py).
   Frozen or not, a collection walks what every run in flight holds: a room's step starts 30 learners' runs at
   once, and each of their 60 collections (a learner's panel run, then the step page's run) walked the other
   runs' objects, 12 ms each, 25 of a learner's 59 ms of server CPU (scripts/load_test_room.py --lesson masks,
   one process). So Streamlit's own collection is off (.streamlit/config.toml) and `script_run()`, around every
   full run (app/main.py), collects when it ends the last run in flight, or when the last collection is
   COLLECT_EVERY_S old: a lone visitor's run is still collected as it ends (what a run created later, figures,
   traces, is freed then, not at some later run), a class's burst once at its end and at most once a second
   meanwhile. Fragment runs (a room's panels) leave theirs to Python's own collector and the next full run.

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
   path uses it, the pages' live runs with a progress bar included (`heavy(..., progress=...)`). Lighter cached
   calls (st.cache_resource / st.cache_data) are single-flight already: Streamlit holds a lock per cache key while
   one session computes it.

5. Hosted or laptop (`hosted()`): every server deployment runs hosted (ATTENTION_LAB_HOSTED=1 in the Dockerfile,
   compose.yaml, deploy/k8s and scripts/serve_class.py), and so does any run not bound to the loopback address; a
   laptop run (`bash scripts/dev.sh run` binds 127.0.0.1) or ATTENTION_LAB_LOCAL=1 is local. Hosted, visitors pick
   from the operator's models only (no folder box), a visitor's request to clear the shared caches is ignored and
   Streamlit's metrics (cache sizes, sessions) are not served (`protect_shared_state()`). A process hosted by its
   settings alone (`hosted_process()`) asks for a passcode to open a study room, the operator's or the one the
   processes sharing its room database agree on (app/room/store.py opening_passcode).

6. Bounded per process: at most MAX_SESSIONS visitors at once (`admit()`: a later one reads that the server is
   full); at most ATTENTION_LAB_PAGE_RUNS (4) page runs at once, and one per visitor (`page_slot()`: one client's 50
   sessions each running /attention on 20,000 characters at the same moment took a replica past its 3 GiB, and a
   run's memory is held only while it runs; a client's sessions sharing one browser cookie then run one at a time
   while other visitors keep the other slots, and a free slot goes to the visitor here longest, so a crowd of new
   sessions waits among itself; a visitor waiting in the heavy-work queue gives the slot back meanwhile); an
   unexpected exception on a page is one sentence for the visitor and a traceback in the server's log
   (`unexpected()`), the traceback shown too only where Streamlit's client.showErrorDetails is "full" (a
   developer's run: `bash scripts/dev.sh run`; .streamlit/config.toml says "none" for everyone else).
"""

from __future__ import annotations

import collections
import contextlib
import gc
import logging
import os
import sys
import threading
import time
import traceback
import urllib.parse

import streamlit as st
import torch
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from app import collector, ui
from app.work_queue import FairSlots, QueueFull, Replaced, Ticket, WorkQueue, workers_from_env
from core import timing

_lock = threading.Lock()
_modules_at_freeze = 0
_blocks_mapped = False
FREEZE = collector.FREEZE  # ATTENTION_LAB_GC_FREEZE (2. above)
COLLECT_EVERY_S = 1.0  # while runs overlap, a full collection at most this often (2. above)
_runs_in_flight = 0
_last_collection = 0.0
LOG = logging.getLogger("attention_lab")
HOSTED_ENV = "ATTENTION_LAB_HOSTED"  # "1": hosted whatever the address (every server deployment sets it)
LOCAL_ENV = "ATTENTION_LAB_LOCAL"  # "1": a laptop run on another address (the folder box shown); HOSTED wins
LOOPBACK = ("127.0.0.1", "localhost", "::1")
SESSIONS_ENV = "ATTENTION_LAB_MAX_SESSIONS"
_admitted: set[str] = set()  # ids of the sessions let in (pruned to the live ones when a new one arrives)
_protected = False
PAGE_RUNS_ENV = "ATTENTION_LAB_PAGE_RUNS"
WAIT_POLL_S = 0.1  # how often a page waiting for a slot looks whether its visitor stopped or changed something


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
    except AttributeError:  # another Streamlit's internals: leave them alone (tests/app/test_serving.py would fail)
        return 0
    return len(gone)


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def hosted_process() -> bool:
    """Whether this process serves others whoever asks, by its settings alone: ATTENTION_LAB_HOSTED=1 -> yes; else
    ATTENTION_LAB_LOCAL=1 -> no; else yes unless Streamlit listens on the loopback address alone (server.address
    127.0.0.1, localhost, ::1). Streamlit's default address is every interface, so a bare `streamlit run` on a
    server is hosted."""
    if _flag(HOSTED_ENV):
        return True
    if _flag(LOCAL_ENV):
        return False
    return str(st.get_option("server.address") or "").strip().strip("[]") not in LOOPBACK


def hosted() -> bool:
    """True unless this is a laptop run: hosted_process(), or, on a laptop run on the loopback address without
    ATTENTION_LAB_LOCAL=1, this visitor's request came through a proxy or names another host (came_from_afar): a
    laptop run that an operator put behind their own proxy is hosted for every visitor the proxy brings."""
    if hosted_process():
        return True
    if _flag(LOCAL_ENV):
        return False
    return came_from_afar(st.context.headers if get_script_run_ctx() is not None else {})


# Headers a proxy adds (RFC 7239's Forwarded, and the de facto X-Forwarded-* and X-Real-IP of nginx and others).
PROXY_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-IP")


def came_from_afar(headers) -> bool:
    """Whether a request to a server on the loopback address came through a proxy or names another host: a proxy
    header, a Host other than localhost, 127.0.0.1 or [::1] (with or without a port), or a browser's Origin (the
    address of the page that opened the websocket) other than those. A proxy that sets Host to its upstream's
    address and adds no header (nginx's default, proxy_set_header Host $proxy_host) still brings the browser's
    Origin; Streamlit refuses such a websocket unless server.enableCORS and enableXsrfProtection are off, the
    usual answer to that 403. `headers`: a mapping whose keys are case-insensitive (st.context.headers), or {}
    outside a visitor's run."""
    if any(headers.get(name) for name in PROXY_HEADERS):
        return True
    origin = (headers.get("Origin") or "").strip()
    if origin:
        try:
            origin_host = urllib.parse.urlsplit(origin).hostname  # None for "null" (a sandboxed or file page)
        except ValueError:
            origin_host = None
        if origin_host not in LOOPBACK:
            return True
    host = (headers.get("Host") or "").strip().lower()
    if not host:
        return False
    name = (
        host[1 : host.find("]")] if host.startswith("[") else host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    )
    return name not in LOOPBACK


def max_sessions() -> int:
    """Visitors one process serves at once ($ATTENTION_LAB_MAX_SESSIONS, default 60, at least 1): a class of 30
    with room to spare; the memory it bounds is measured by scripts/hostile_sessions.py."""
    try:
        return max(1, int(os.environ.get(SESSIONS_ENV, "60")))
    except ValueError:
        return 60


def _live_sessions() -> set[str] | None:
    """Ids of the sessions connected now (None outside a Streamlit server, as in AppTest)."""
    if not Runtime.exists():
        return None
    runtime = Runtime.instance()
    with _lock:  # `is True`: AppTest's stand-in runtime answers with a mock, and its sessions count as gone
        return {sid for sid in _admitted if runtime.is_active_session(sid) is True}


def admit() -> bool:
    """Let this session in if it was let in before or fewer than max_sessions() live sessions were; else say the
    server is full (in the reader's language) and return False: the page is not drawn."""
    ctx = get_script_run_ctx()
    if ctx is None or ctx.session_id in _admitted:
        return True
    live = _live_sessions()
    with _lock:
        if live is not None:
            _admitted.intersection_update(live)
        if len(_admitted) < max_sessions():
            _admitted.add(ctx.session_id)
            return True
    LOG.warning("session refused: %d visitors already (%s)", len(_admitted), SESSIONS_ENV)
    st.warning(ui.t("common", "server_full"))
    return False


def _page_runs() -> int:
    try:
        return max(1, int(os.environ.get(PAGE_RUNS_ENV, "4")))
    except ValueError:
        return 4


_page_slots = FairSlots(_page_runs())
_holding = threading.local()  # .owner: who this thread's page run holds a slot for (absent: none held)


_first_seen: collections.OrderedDict = collections.OrderedDict()  # visitor -> monotonic time, most recent last
FIRST_SEEN_KEPT = 10_000  # visitors remembered; one forgotten is new again on its next run


def first_seen(who) -> float:
    """When this process first saw the visitor (a page run's seniority for the slots)."""
    now = time.monotonic()
    with _lock:
        since = _first_seen.pop(who, now)
        _first_seen[who] = since
        while len(_first_seen) > FIRST_SEEN_KEPT:
            _first_seen.popitem(last=False)
    return since


def _acquire_slot(own_limit: bool = True) -> None:
    ctx = get_script_run_ctx(suppress_warning=True)
    check = getattr(ctx, "yield_check", None)  # raises Streamlit's stop or rerun: the visitor left or changed
    owner = (visitor() if ctx is not None else None) or object()  # no visitor known: a slot of its own
    since = first_seen(owner) if isinstance(owner, str) else time.monotonic()
    _page_slots.acquire(owner, check=check, poll_s=WAIT_POLL_S, own_limit=own_limit, since=since)
    _holding.owner = owner


def _release_slot() -> bool:
    owner = getattr(_holding, "owner", None)
    if owner is None:
        return False
    _holding.owner = None
    _page_slots.release(owner)
    return True


@contextlib.contextmanager
def page_slot():
    """Run a page inside one of the process's ATTENTION_LAB_PAGE_RUNS slots (waiting for a free one), at most one
    per visitor at a time: the memory and CPU of the pages running at once stay bounded, and one client's many
    sessions share one slot whatever they open. Threads under one interpreter lock gain little from more at once."""
    _acquire_slot()
    try:
        yield
    finally:
        _release_slot()


@contextlib.contextmanager
def _slot_given_back():
    """While this page waits for something else (the heavy-work queue), its slot serves another page; taken back
    without the one-per-visitor rule (another tab of this visitor may hold one meanwhile)."""
    held = _release_slot()
    try:
        yield
    finally:
        if held:
            _acquire_slot(own_limit=False)


TRACEBACK_EVERY_S = 60.0  # one error's traceback at most this often in the log; its repeats are counted
_tracebacks: dict[tuple, list] = {}  # (type, file, line) -> [when last logged, repeats since]
_tracebacks_lock = threading.Lock()
_clock = time.monotonic


def _log_traceback(err: Exception) -> None:
    """The traceback of an unexpected error, once per TRACEBACK_EVERY_S for each place an error of its type arises:
    a crafted message that fails the same way each time (any visitor can send thousands a second) cannot fill the
    server's disk, and the log still shows each distinct error and how often it came back."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = (type(err).__qualname__, tb.tb_frame.f_code.co_filename, tb.tb_lineno) if tb else (type(err).__qualname__,)
    now = _clock()
    with _tracebacks_lock:
        seen = _tracebacks.get(where)
        if seen is not None and now - seen[0] < TRACEBACK_EVERY_S:
            seen[1] += 1
            return
        repeats = seen[1] if seen else 0
        if len(_tracebacks) >= 1024:  # bounded: the oldest places are forgotten first
            del _tracebacks[next(iter(_tracebacks))]
        _tracebacks.pop(where, None)
        _tracebacks[where] = [now, 0]
    again = f" ({repeats} more like it since its last traceback)" if repeats else ""
    LOG.error("unexpected error on a page%s\n%s", again, traceback_text(err))


EXCEPTION_WORDS_CHARS = 500  # of an exception's own words (its type, message and notes) in the server's log
_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"


def exception_words(err: BaseException) -> str:
    """An exception's type, message and notes as one line of at most EXCEPTION_WORDS_CHARS printable characters, as
    the server's log takes them (traceback_text)."""
    words = " ".join(line.strip() for line in traceback.format_exception_only(type(err), err))
    return _one_line(words, EXCEPTION_WORDS_CHARS)


def traceback_text(err: BaseException) -> str:
    """A traceback as Python writes it, but each exception's own words (type, message, notes: what may carry a
    visitor's text, a crafted widget value's, a date Streamlit could not read) on one line of at most
    EXCEPTION_WORDS_CHARS printable characters: a line break in them wrote a line into the server's log that read as
    the server's own (a second "rooms: ... asks for the passcode" line). The frames are the server's own code."""
    chain: list[tuple[BaseException, str]] = []  # the error, then what it was raised from or while handling
    seen: set[int] = set()
    e: BaseException | None = err
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if e.__cause__ is not None:
            chain.append((e, _CAUSE))
            e = e.__cause__
        elif e.__context__ is not None and not e.__suppress_context__:
            chain.append((e, _CONTEXT))
            e = e.__context__
        else:
            chain.append((e, ""))
            e = None
    parts: list[str] = []
    for i in range(len(chain) - 1, -1, -1):  # the first cause first, as Python writes them
        e = chain[i][0]
        if e.__traceback__ is not None:
            parts.append("Traceback (most recent call last):\n" + "".join(traceback.format_tb(e.__traceback__)))
        parts.append(exception_words(e) + "\n")
        if i:
            parts.append(chain[i - 1][1])
    return "".join(parts).rstrip("\n")


def unexpected(err: Exception) -> None:
    """An exception no page expected: its traceback to the server's log (_log_traceback: once a minute for the same
    error), one sentence to the visitor (and the traceback under it on a developer's run only,
    client.showErrorDetails = "full")."""
    _log_traceback(err)
    st.error(ui.t("common", "unexpected"))
    if str(st.get_option("client.showErrorDetails")).lower() in ("full", "true"):
        st.exception(err)


def _script_error(err: Exception, on_script_error=None) -> None:
    """Streamlit's handler of an exception it caught itself, replaced by unexpected() (catch_script_errors)."""
    try:
        unexpected(err)
    except Exception:  # noqa: BLE001 - no page to write to: Streamlit's own handling, as before
        _streamlit_script_error(err, on_script_error)


_streamlit_script_error = None  # Streamlit's handle_user_script_exception, kept for _script_error's fallback


def catch_script_errors() -> bool:
    """An exception Streamlit catches before app/main.py could is unexpected()'s too: a widget's callback and
    Streamlit's reading of the widget values that decides which callbacks to call run ahead of the page's script,
    and a fragment's body (a room's panel) under Streamlit's own handler, which showed its English error box and
    logged a full traceback for each one (a crafted click on /attention's model view, sent again and again).
    Process-wide, at import; False where this Streamlit has no such handler (tests/app/test_serving_hosted.py
    would fail)."""
    global _streamlit_script_error
    from streamlit.runtime import fragment
    from streamlit.runtime.scriptrunner import exec_code

    modules = [m for m in (exec_code, fragment) if callable(getattr(m, "handle_user_script_exception", None))]
    for module in modules:
        if module.handle_user_script_exception is not _script_error:
            _streamlit_script_error = module.handle_user_script_exception
            module.handle_user_script_exception = _script_error
    return bool(modules)


catch_script_errors()


def _ignore_git_info(session: AppSession) -> None:
    """Streamlit's answer to a "load_git_info" message, which any client can send whatever the toolbar shows: git
    run several times in the server's event loop, which every visitor's connection waits on (2,000 such messages
    from one client kept the next visitor's page from opening for 26 s), and the repository, its branch and its
    uncommitted and untracked files named to the client. No page needs it."""


def ignore_git_info() -> bool:
    """Process-wide, at import: a visitor's request for the server's git information is dropped (_ignore_git_info).
    False where this Streamlit has no such handler (tests/app/test_serving_hosted.py would fail)."""
    found = callable(getattr(AppSession, "_handle_git_information_request", None))
    AppSession._handle_git_information_request = _ignore_git_info
    return found


ignore_git_info()


def _drop_upload(self, session_id: str, file) -> None:
    """No page has a file uploader, yet Streamlit kept every file a client PUT to /_stcore/upload_file/<its session>/
    <any id> in memory until the session ended, one per id and with no limit on their number (200 PUTs of 1 MB from
    one session: 200 MB). .streamlit/config.toml's maxUploadSize = 0 refuses a file's body; one that gets past it
    (an empty file, under a new id each time) is not kept either."""


def refuse_uploads() -> bool:
    """Process-wide, at import: no upload is kept (_drop_upload); what a client uploaded before this process's
    first page run imported the app is dropped at that run's end (after_run, _forget_kept_uploads). False where
    this Streamlit keeps uploads elsewhere (tests/app/test_serving_hosted.py would fail)."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

    found = callable(getattr(MemoryUploadedFileManager, "add_file", None))
    MemoryUploadedFileManager.add_file = _drop_upload
    return found


def _forget_kept_uploads() -> None:
    files = getattr(Runtime.instance(), "uploaded_file_mgr", None) if Runtime.exists() else None
    storage = getattr(files, "file_storage", None)
    if isinstance(storage, dict):  # MemoryUploadedFileManager's; AppTest's stand-in runtime has none
        for session_id in list(storage):
            files.remove_session_files(session_id)


refuse_uploads()


LOGGED_VALUE_CHARS = 80  # of a value a client chose that Streamlit writes into its log (a fragment's id, ...)
_log_lines: dict[tuple, list] = {}  # (logger, message, level) -> [when last written, repeats since]


def _one_line(value: str, limit: int = LOGGED_VALUE_CHARS) -> str:
    value = "".join(c if c.isprintable() else "?" for c in value[: limit + 1])
    return value if len(value) <= limit else value[:limit] + "…"


class ClientWordsInLog(logging.Filter):
    """Streamlit writes values a client chose into its log as they came: a rerun's fragment id, a backend request's
    id, a file's id (up to the 1 MB of a message each). A crafted message wrote lines that read as the server's own
    (a second "rooms: ... asks for the passcode" line, the operator's to read), terminal escapes, and 1 MB of log
    for every message. Each such value is one line of at most LOGGED_VALUE_CHARS printable characters, and one
    message (logger, wording, level) is written at most once per TRACEBACK_EVERY_S, then with a count of its repeats,
    as a traceback is (_log_traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            record.args = tuple(_one_line(a) if isinstance(a, str) else a for a in record.args)
        if not isinstance(record.msg, str):
            return True
        where, now = (record.name, record.msg[:200], record.levelno), _clock()
        with _tracebacks_lock:
            seen = _log_lines.get(where)
            if seen is not None and now - seen[0] < TRACEBACK_EVERY_S:
                seen[1] += 1
                return False
            if len(_log_lines) >= 1024:  # bounded: the oldest messages are forgotten first
                del _log_lines[next(iter(_log_lines))]
            _log_lines.pop(where, None)
            _log_lines[where] = [now, 0]
        if seen is not None and seen[1]:
            record.msg += f" ({seen[1]} more like it since it was last written)"
        return True


_client_words_in_log = ClientWordsInLog()


def filter_streamlit_log() -> int:
    """Put ClientWordsInLog on every logger Streamlit made (each writes through its own handler); returns how many.
    At import and at the first run's end (loggers of modules imported since)."""
    from streamlit import logger as streamlit_logger

    loggers = list(getattr(streamlit_logger, "_loggers", {}).values())
    for each in loggers:
        if _client_words_in_log not in each.filters:
            each.addFilter(_client_words_in_log)
    return len(loggers)


filter_streamlit_log()


def _ignore_clear_cache(session: AppSession) -> None:
    LOG.warning("a visitor asked to clear the shared caches: ignored on a hosted server")


def protect_shared_state() -> None:
    """On a hosted server: a visitor's "clear cache" request (a websocket message any client can send, whatever
    the menu shows) no longer empties every visitor's shared caches, and /_stcore/metrics (cache sizes and
    functions, session counts) serves nothing. Process-wide, once."""
    global _protected
    if _protected or not hosted():
        return
    with _lock:
        AppSession._handle_clear_cache_request = _ignore_clear_cache
        families = getattr(Runtime.instance().stats_mgr, "_providers_by_family", None) if Runtime.exists() else None
        if families is not None:  # another Streamlit's internals: tests/test_hosting.py would fail
            families.clear()
        _protected = True


@contextlib.contextmanager
def script_run():
    """Around a full script run (app/main.py): a full collection when it ends the last run in flight, or when the
    last one is COLLECT_EVERY_S old (2. above). However the run ends: a page switch or a rerun raises through."""
    global _runs_in_flight, _last_collection
    with _lock:
        _runs_in_flight += 1
    try:
        yield
    finally:
        now = time.monotonic()
        with _lock:
            _runs_in_flight -= 1
            collect = _runs_in_flight == 0 or now - _last_collection >= COLLECT_EVERY_S
            if collect:
                _last_collection = now
        if collect:
            gc.collect()


def torch_threads() -> int:
    """torch's thread count in a process that serves the app (1. above); the tests run torch on it too."""
    return int(os.environ.get("OMP_NUM_THREADS") or 1)


torch.set_num_threads(torch_threads())  # before any page's thread calls torch (1. above)


def after_run() -> None:
    """Call at the end of a full script run. Costs a dict scan, a len() and a flag test when there is nothing to
    do."""
    global _modules_at_freeze, _blocks_mapped
    forget_stale_widgets()
    protect_shared_state()
    if _blocks_mapped and (not FREEZE or len(sys.modules) == _modules_at_freeze):
        return
    with _lock:  # sessions run their scripts in threads of one process
        if not _blocks_mapped:
            timing.map_large_blocks()  # a run's resident peak is its tensors', as /models estimates it
            _forget_kept_uploads()  # kept before this module was imported (refuse_uploads)
            filter_streamlit_log()  # the loggers of Streamlit's modules imported since
            _blocks_mapped = True
        if FREEZE and len(sys.modules) != _modules_at_freeze:
            gc.collect()
            gc.freeze()
            _modules_at_freeze = len(sys.modules)


# --- heavy work: one queue per process (4. above) ----------------------------------------------------------------

# First guesses of a run's seconds on one core (the queue then learns them): logit lens at 64 tokens 1.6 s
# (results/), a short generation, a live ablation card of a few draws, one layer of a long document, the pages'
# live runs (timings and evaluations of a few tens of seconds at most; a timing is kept by the page that asked, so
# the queue keeps none: a later click measures anew), a lesson step's answer that runs a model (a forward).
HEAVY = WorkQueue(
    workers=workers_from_env(),
    max_waiting=int(os.environ.get("ATTENTION_LAB_QUEUE_MAX", "64")),
    keep={"logit_lens": 8, "generate": 4, "claim_card": 8, "layer_qk": 2, "transformer_xl": 4, "detector_map": 4,
          "rope_live": 2, "antecedent_eval": 2, "sdpa_live": 0, "linear_timing": 0, "linear_generation": 0,
          "lesson_answer": 128},
    estimates_s={"logit_lens": 2.0, "generate": 3.0, "claim_card": 10.0, "layer_qk": 10.0, "transformer_xl": 10.0,
                 "detector_map": 10.0, "rope_live": 30.0, "antecedent_eval": 30.0, "sdpa_live": 20.0,
                 "linear_timing": 20.0, "linear_generation": 20.0, "lesson_answer": 2.0},
    name="heavy",
)  # fmt: skip
POLL_S = 0.5  # how often a waiting visitor's place and wait are refreshed (and a stop request noticed)
XSRF_COOKIE = "_streamlit_xsrf"  # Streamlit's own per-browser cookie (server.enableXsrfProtection, on by default)
MAX_TOKEN_BYTES = 64  # Streamlit's token is 16 random bytes; a longer cookie is a client's own (browser_token)


def browser_token(cookie: str | None) -> str | None:
    """The random token inside Streamlit's XSRF cookie ("2|mask|masked token|time", or a bare v1 hex token): the
    same for every tab of one browser while the mask changes with each response; None when absent, malformed or
    longer than MAX_TOKEN_BYTES (a client's own cookie: its name is kept for 10,000 visitors in first_seen, keys the
    queue and is written to the rooms' database, and a server takes an 8,000-character cookie)."""
    if not cookie or len(cookie) > 4 * MAX_TOKEN_BYTES + 64:  # a token, mask and time; not a client's own essay
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
    return token.hex() if 8 <= len(token) <= MAX_TOKEN_BYTES else None


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
        with _slot_given_back():
            return HEAVY.run(
                key, fn, kind, on_wait=on_wait, poll_s=POLL_S, visitor=visitor(), reports=progress is not None
            )
    except QueueFull as err:
        st.warning(ui.t("models", "queue_full", n=err.waiting))
        st.stop()
    except Replaced:
        st.info(ui.t("models", "queue_replaced"))
        st.stop()
    finally:
        if box is not None:
            box.empty()
