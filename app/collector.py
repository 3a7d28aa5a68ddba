"""Python's automatic garbage collection paused while a block imports large libraries: a fresh process's app and
page code (torch, pandas, plotly, every page's module; app/main.py) and a model's first load (transformers;
app/models.py). Each automatic full collection walks every object alive, and while the heap grows by import a fresh
server ran 8-10 of them before its first page was drawn (0.5 s before the landing page, 1.0 s before /attention's,
measured in the server with gc.callbacks). At the block's end the heap it imported is collected once and frozen
(gc.freeze: later collections skip it), as app/serving.py's after_run does at a run's end; ATTENTION_LAB_GC_FREEZE=0
leaves freezing out everywhere (benchmarks/rerun_gc.py compares). This module imports nothing heavy: app/main.py
enters it before its own imports."""

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
