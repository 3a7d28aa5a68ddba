"""A fresh server's first pages: the landing page, a page without a model, /room, and the pages that show shipped
models' capabilities (/models, /long-maps; /positions with its table of example families closed) import no
transformers, and none of them torch's compiler parts (torch._dynamo, sympy).

Importing transformers (and the torch compiler parts it pulls in) took 2-4 s of every fresh server's first answer,
whatever the page, and of each of CI's server starts; core/models imports it where a model is built or RoPE is
computed, and a shipped model's capabilities are read from its config.json (core.models.capabilities.config_file)
(scripts/cold_start.py times a server's first page). torch.optim's optimizer objects import torch._dynamo on first
use (1.1 s; it also looks for scikit-learn and scipy, without importing them): /positions' step uses torch's
functional Adam (core.positions.training_step.adam_first_step); torch.broadcast_shapes imports sympy (0.3 s of
/masks): core.sdpa.broadcast_shape asks numpy. Run in a fresh interpreter: this one has imported
transformers for other tests."""

import os
import subprocess
import sys
from pathlib import Path

MODEL_FREE = True  # the pages it opens load no model

ROOT = Path(__file__).resolve().parents[1]

# The first run opens the landing page, which imports every page's module (the navigation); the importer of a
# heavy package is named by the stack at its first import.
FIRST_PAGES = """
import importlib.abc, sys, traceback
HEAVY = ("transformers", "torch._dynamo", "sympy", "sklearn", "scipy")
importers = {}

class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in HEAVY and name not in importers:
            importers[name] = [f"{f.filename}:{f.lineno}" for f in traceback.extract_stack()[:-1]
                               if f.filename.startswith(sys.argv[1]) and "-packages" not in f.filename][-4:]
        return None

sys.meta_path.insert(0, Watch())
sys.path.insert(0, "tests")
from apptest_helpers import open_view

# /long-maps reads SmolLM2's config from its cached copy's config.json; on a machine that never loaded SmolLM2 there
# is none yet, and transformers reads the GGUF file's metadata (as it should: not checked there)
from core.models import cache, smollm2
uncached = smollm2.status() is None and not cache.is_valid(smollm2.cache_folder(), smollm2.fingerprint(smollm2.gguf_path()))
pages = ["home", "room", "models"] + ([] if uncached else ["long-maps"])
import gc
# a first page without a seat (a room code alone in its link is dropped) draws no lesson step: the navigation
# imports every page's module and every sidebar the room's (app/views/room/seated.py), none of them the step views
# and the answer functions they import (app/step_views, core.lessons.answers: 0.3 s)
open_view("masks", {"room": "ABCDEF"})
assert "core.lessons.answers" not in sys.modules, "a first page without a seat imported core.lessons.answers"
for topic in pages + ["positions"]:
    open_view(topic)
    assert not importers, f"opening /{topic} imported {importers}"
    assert gc.isenabled(), f"/{topic} left automatic garbage collection off (app/collector.py)"
"""


def test_the_first_pages_of_a_fresh_server_import_no_transformers(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env["ATTENTION_LAB_ROOMS"] = str(tmp_path / "rooms.sqlite3")
    done = subprocess.run(
        [sys.executable, "-c", FIRST_PAGES, str(ROOT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
