"""Every heavy path goes through the server's heavy-work queue (app/serving.py): each page's live run and live
analysis executes on the queue's worker thread, not in the visitor's script thread, so one visitor's run waits its
turn (one waiting job per visitor and kind) instead of taking a core beside everyone else's. Each computation is
spied on where the page looks it up; the spy records the thread it ran on and then does the real work."""

from __future__ import annotations

import threading

import pytest

from app import serving
from app.work_queue import WorkQueue
from tests.apptest_helpers import assert_no_exception, run_view
from tests.tiny_models import registered_folders


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    with registered_folders(tmp_path_factory.mktemp("queued-models"), ("llama",)) as keys:
        yield keys["llama"]


@pytest.fixture(autouse=True)
def own_queue(monkeypatch):
    """The server's queue as each test first finds it: the process-wide one keeps results by key and may hold jobs
    that earlier page tests in this worker left, so a kept result could answer without the spy ever running."""
    old = serving.HEAVY
    monkeypatch.setattr(serving, "HEAVY", WorkQueue(workers=old.workers, max_waiting=old.max_waiting, name=old._name))


def spy(monkeypatch, owner, name: str) -> list[str]:
    """Replace owner.name with a wrapper that records the running thread's name; returns the record."""
    threads: list[str] = []
    real = getattr(owner, name)

    def wrapper(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return threads


def assert_queued(threads: list[str]) -> None:
    assert threads, "the computation never ran"
    assert all(t.startswith(f"{serving.HEAVY._name}-queue-") for t in threads), threads


def press(at, key: str | None = None, label: str | None = None):
    button = at.button(key=key) if key else next(b for b in at.button if b.label.startswith(label))
    button.click().run()
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    return at


def test_rope_scalings_live_run_is_queued(monkeypatch, llama):
    from core.rope_scaling import experiment

    threads = spy(monkeypatch, experiment, "live_runs")
    at = run_view("rope-scaling", params={"model": llama, "live_n": "256", "live_method": "yarn", "live_factor": "2"})
    press(at, key="live-run")
    assert_queued(threads)


def test_the_antecedent_recompute_is_queued(monkeypatch):
    from core import antecedents

    threads = spy(monkeypatch, antecedents, "evaluate")
    at = run_view("antecedents")  # MiniLM: the tiny models' vocabulary cannot tell the candidates apart
    press(at, label="Recompute now")
    assert_queued(threads)


def test_head_detectors_map_is_queued(monkeypatch, llama):
    from core import head_detectors

    threads = spy(monkeypatch, head_detectors, "detector_map")
    at = run_view("head-detectors", params={"model": llama, "detector": "previous_token"})
    assert_no_exception(at)
    assert_queued(threads)


def test_sdpa_live_timing_is_queued(monkeypatch):
    from app.views.sdpa_gqa import backends

    threads = spy(monkeypatch, backends, "sdpa_live_run")
    press(run_view("sdpa-gqa", params={"sd_n": "128"}), key="run-sdpa")
    assert_queued(threads)


@pytest.mark.parametrize(("function", "button"), [("time_scaling", "run-timing"), ("generation_table", "run-gen")])
def test_linear_attention_live_timings_are_queued(monkeypatch, function, button):
    from core.linear_attention import measure

    threads = spy(monkeypatch, measure, function)
    press(run_view("linear-attention", params={"max_n": "512", "max_ctx": "256"}), key=button)
    assert_queued(threads)
