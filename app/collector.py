"""Python's automatic garbage collection paused while a block imports large libraries: a fresh process's app and
page code (torch, pandas, plotly, every page's module; app/main.py) and a model's first load (transformers;
app/models.py). Each automatic full collection walks every object alive, and while the heap grows by import a fresh
server ran 8-10 of them before its first page was drawn (0.5 s before the landing page, 1.0 s before /attention's,
measured in the server with gc.callbacks). At the block's end the heap it imported is collected once and frozen
(gc.freeze: later collections skip it), as app/serving.py's after_run does at a run's end; ATTENTION_LAB_GC_FREEZE=0
leaves freezing out everywhere (benchmarks/rerun_gc.py compares). This module imports nothing heavy: app/main.py
enters it before its own imports.

The pause is process-wide, and a model's first load can take a while (SmolLM2's first conversion, 15-40 s): the
other visitors' runs meanwhile still free their cyclic garbage as each ends (app/serving.script_run collects, at
most once a second while runs overlap), and they were faster, not slower, beside a paused load: 10 visitors on
/attention while SmolLM2 converted, p50 119-149 ms / p95 2.9-3.0 s paused against 191-197 ms / 3.6-3.8 s without
the pause, the load itself 18-20 s against 23-24 s; the server's resident memory as the load ended was 70-120 MB higher
(the garbage the pause kept, collected at its end) and 1.21-1.22 GB either way 8 s later
(scripts/collector_during_load.py, results/collector_during_load.json)."""

from __future__ import annotations

import contextlib
import gc
import os
import sys

FREEZE = os.environ.get("ATTENTION_LAB_GC_FREEZE", "1") != "0"  # read by app/serving.py too


@contextlib.contextmanager
def paused():
    """Automatic collection off for the block, then back on; where the block imported modules, one collection and
    the heap frozen (FREEZE) first. A block that imports nothing (every later run) costs two flag flips: no
    collection per run (app/serving.py says why). Of runs that overlap, the one that found collection on turns it
    back on (another run's block may then finish with collection on: slower, never wrong)."""
    was_on = gc.isenabled()
    modules = len(sys.modules)
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            if FREEZE and len(sys.modules) != modules:
                gc.collect()  # the block's garbage is freed, not frozen for good
                gc.freeze()
            gc.enable()
