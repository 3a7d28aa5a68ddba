"""Shared test set-up. The repository root is on sys.path through pytest's `pythonpath` (pyproject.toml), and models
load from installed packages with local_files_only=True, so no environment preamble is needed here.

The pretrained models are session fixtures: each test process loads each model at most once (MiniLM about a
second, SmolLM2 a few seconds from its cache, ~25 s the very first time), whichever test files use them. A model
whose weight package is missing skips the tests that need it, with the install command as the reason. Every test
file takes its models from these fixtures; a test that uses one (directly or through another fixture) is marked
`slow` by pytest_collection_modifyitems below, so `bash scripts/dev.sh quick` loads none."""

from __future__ import annotations

import os
import sys

import pytest
from streamlit import config as streamlit_config

# core.models (torch and transformers, about 5 s) is imported where a fixture first needs it, not here: pytest-xdist's
# controller loads this file too, and it runs no test, while both workers wait for it to start them.
# The developer's setting (scripts/dev.sh run's): an unexpected exception shows under the visitor's sentence, so
# the page tests' AppTest sees it as an Exception element (tests/app/test_serving_hosted.py checks what a visitor
# of .streamlit/config.toml's "none" sees). Servers the tests start get it from the environment.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
streamlit_config.get_option("client.showErrorDetails")  # read .streamlit/config.toml first, then override it
streamlit_config.set_option("client.showErrorDetails", os.environ["STREAMLIT_CLIENT_SHOW_ERROR_DETAILS"])


def load_or_skip(key: str):
    from core.models import registry

    reason = registry.model_status().get(key)
    if reason is not None:
        pytest.skip(f"{key}: {reason}")
    return registry.RECORDS[key].load()


@pytest.fixture(scope="session")
def minilm():
    """MiniLM-L6 (all-MiniLM-L6-v2): 6-layer encoder, 12 heads."""
    return load_or_skip("minilm")


@pytest.fixture(scope="session")
def smollm2():
    """SmolLM2-135M-Instruct: 30-layer decoder, 9 query heads over 3 key/value heads."""
    return load_or_skip("smollm2")


@pytest.fixture(scope="session")
def moe():
    """The tiny MoE trained by this repository (its default, balanced variant)."""
    return load_or_skip("moe")


@pytest.fixture(scope="session")
def moe_variants(moe):
    """Every shipped MoE checkpoint by variant name (balanced, collapsed, ...): the `moe` fixture's balanced one
    plus the others, each loaded once per test process."""
    from core.models import moe_model

    return {v: moe if v == moe.variant else moe_model.load_moe(v) for v in moe_model.VARIANTS}


@pytest.fixture(scope="session")
def encoder_decoder():
    """(model, tokenizer) of the small encoder-decoder trained by this repository (data/encoder_decoder)."""
    from core.encoder_decoder import model as ed

    reason = ed.status()
    if reason:
        pytest.skip(f"encoder_decoder: {reason}")
    return ed.load()


# Any test that uses one of these, directly or through another fixture, loads a real model: it is marked `slow`
# (so `bash scripts/dev.sh quick` never loads one); explicit marks elsewhere stay as they are.
REAL_MODEL_FIXTURES = frozenset({"minilm", "smollm2", "moe", "moe_variants", "encoder_decoder"})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if REAL_MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    _mark_page_tests(items)
    _longest_files_first(config, items)


# The files that take longest, in the order they start (seconds of one worker, measured in a whole run on this 2-core
# machine: `bash scripts/dev.sh test --durations=0`, summed per file, 2026-11-28). `dev.sh test` hands files to its
# two workers in collection order (--dist loadfile --no-loadscope-reorder), so these start first and the run ends
# with short files on both workers, not with one long file on one while the other waits. The files that drive a
# real server (a browser, a load client, nginx) spend much of their time waiting on it: each is put beside page
# and engine files, which keep one core busy, not beside another of its kind. The two chromium files at once, as
# they started before, took 218 + 80 s of the two workers; the second after the AppTest files, 196 + 61 s (six
# files on two workers, back to back under the measure lock, load 3.6-4.6: 262 s whole, then 233 s). A file
# missing here only runs later; a name here that no longer exists is ignored.
LONGEST_FILES = (
    "tests/test_browser.py",  # 230 s: every page in chromium, SmolLM2's runs on hostile texts
    "tests/pages/test_shareable_links.py",  # 66 s
    "tests/test_fuzz.py",  # 36 s
    "tests/pages/test_lesson_questions_on_pages.py",  # 58 s
    "tests/pages/test_page_states_shown.py",  # 58 s alone at load 6-8 (27 s of CPU): every state of every page
    "tests/pages/test_app_pages.py",  # 29 s before its default runs moved to the file above
    "tests/core/test_lessons_shipped.py",  # 17 s
    "tests/pages/test_models_on_pages.py",  # 14 s
    "tests/test_browser_room.py",  # 78 s: a room in chromium, and one across a restart
    "tests/test_load_test.py",  # 24 s
    "tests/pages/test_room_page.py",
    "tests/test_browser_proxy.py",  # 21 s
    "tests/core/test_lessons_answers.py",
    "tests/pages/test_lesson_step_figures.py",
    "tests/test_load_test_room.py",  # 14 s
    "tests/pages/test_page_states.py",
    "tests/pages/test_positions_pages.py",
    "tests/test_serve_class.py",  # 11 s
    "tests/test_hosting.py",  # 7 s; a file not named here takes 8 s or less
)


# ... and the one that runs last: its database-away act wants every session told within the five seconds the
# database is away, which a busy start (chromium and a model on the other worker) can starve (seen once at load 8).
LAST_FILES = ("tests/test_fault_room.py",)  # 28 s


def _longest_files_first(config, items) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FILES)} | {name: len(LONGEST_FILES) + 1 for name in LAST_FILES}
    root = config.rootpath
    items.sort(key=lambda item: rank.get(item.path.relative_to(root).as_posix(), len(LONGEST_FILES)))


# Page tests open the app headless: one whose pages load a real model takes seconds to minutes, so a page test is
# `slow` unless its module says MODEL_FREE = True; there, any model load fails the test (the flag cannot go stale:
# a page that starts loading a model makes its model-free tests fail). Page tests are those of tests/pages and
# those of tests/app that drive the app through tests/apptest_helpers (app/serving.py's, on real pages).
def _page_test(item) -> bool:
    folder = item.path.parent.name
    return folder == "pages" or (folder == "app" and _drives_the_app(item.module))


def _drives_the_app(module) -> bool:
    return any(getattr(value, "__module__", None) == "tests.apptest_helpers" for value in vars(module).values())


def _mark_page_tests(items):
    for item in items:
        if _page_test(item) and not getattr(item.module, "MODEL_FREE", False):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _no_model_in_model_free_page_tests(request, monkeypatch):
    if not getattr(request.module, "MODEL_FREE", False) or request.node.get_closest_marker("slow"):
        yield
        return
    from core.models import registry

    loads = []
    real = registry.shared

    def shared(key, *args, **kwargs):
        loads.append(key)
        return real(key, *args, **kwargs)

    monkeypatch.setattr(registry, "shared", shared)
    yield
    assert not loads, f"a MODEL_FREE page test loaded {loads}: mark the module slow instead"


# torch's thread count is process-wide: a test that changed it would leave every later file of its xdist worker on
# another count than the same file gets alone (other float roundings, other speed). The first page run of a process
# set it to one (app/serving.after_run), so files ran on torch's default (a thread per core) or on one, depending on
# whether a page test had run before them in that worker. Every test now starts on the app's count (one, unless
# OMP_NUM_THREADS says otherwise) and must end on it; one that needs another count takes it with one_torch_thread
# or puts it back itself.
@pytest.fixture(autouse=True)
def _torch_threads_kept():
    torch = sys.modules.get("torch")  # imported by collection in any worker whose tests use it
    if torch is None:
        yield
        return
    from app.serving import torch_threads

    threads = torch_threads()
    count, set_count = torch.get_num_threads, torch.set_num_threads  # torch's own: a test may monkeypatch them
    if count() != threads:
        set_count(threads)
    yield
    left = count()
    if left != threads:
        set_count(threads)
        pytest.fail(f"the test left torch on {left} threads, not {threads}: put the count back (one_torch_thread)")


@pytest.fixture
def one_torch_thread():
    """torch on one thread for this test (a result committed from a run on one thread), put back after it."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
