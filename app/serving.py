"""Process-wide settings for one server process that a whole class shares (issue 20). app/main.py calls
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
"""

from __future__ import annotations

import gc
import os
import sys
import threading

import torch
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

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
