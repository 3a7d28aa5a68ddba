"""app/collector.py: automatic collection paused while a block imports, the imported heap collected and frozen once
at its end, and nothing collected where a block imports nothing (every later script run passes through one)."""

import gc
import sys
import weakref

import pytest

from app import collector


class Node:
    pass


def collections_during(block) -> int:
    seen = []

    def count(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(count)
    try:
        block()
    finally:
        gc.callbacks.remove(count)
    return len(seen)


@pytest.fixture
def fresh_module(tmp_path, monkeypatch):
    (tmp_path / "collector_probe.py").write_text("TABLE = [[i] for i in range(20_000)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "collector_probe"
    sys.modules.pop("collector_probe", None)
    gc.unfreeze()  # the test process's heap back as it was


def test_an_importing_block_runs_without_automatic_collection_then_frees_and_freezes(fresh_module, monkeypatch):
    monkeypatch.setattr(collector, "FREEZE", True)
    frozen = gc.get_freeze_count()

    def block():
        with collector.paused():
            assert not gc.isenabled()
            cycle = Node()
            cycle.me = cycle
            block.garbage = weakref.ref(cycle)
            del cycle
            __import__(fresh_module)

    assert collections_during(block) == 1  # the one at the block's end
    assert gc.isenabled()
    assert block.garbage() is None  # collected, not frozen for good
    assert gc.get_freeze_count() > frozen + 20_000  # the imported table among what later collections skip


def test_a_block_that_imports_nothing_collects_nothing(monkeypatch):
    monkeypatch.setattr(collector, "FREEZE", True)
    frozen = gc.get_freeze_count()

    def block():
        with collector.paused():
            pass

    assert collections_during(block) == 0 and gc.isenabled() and gc.get_freeze_count() == frozen


def test_collection_left_off_stays_off(fresh_module):
    gc.disable()
    try:
        with collector.paused():
            __import__(fresh_module)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_pages_first_import_of_transformers_waits_for_no_collection(monkeypatch):
    """/rope-scaling's curves and the example tables of /positions and /encoder-decoder (models.show_examples) are
    what first imports transformers on those pages (and a lesson step of /rope-scaling, by the page's call), as a
    model load does on the others: automatic collection waits
    meanwhile (the collections of their first run: scripts/page_run_cost.py, results/page_run_cost.json)."""
    from app import models, step_views
    from app.views.rope_scaling import formulas as page
    from core import lessons as core_lessons
    from core.rope_scaling import formulas

    seen = []

    def recorded(function):
        return lambda *args: seen.append((function.__name__, gc.isenabled())) or function(*args)

    monkeypatch.setattr(formulas, "frequency_view", recorded(formulas.frequency_view))
    monkeypatch.setattr(formulas, "decay_view", recorded(formulas.decay_view))
    page.frequencies.clear()
    page._decay.clear()
    page.frequencies(8.0, 4096)  # the page's calls, outside a page run: the rule is theirs
    page._decay(8.0, 4096)
    models.show_examples(str, recorded(lambda: []), ("a", "b", "c", "d"), "kind_", "detail_")
    step_views._drawn.clear()
    step = core_lessons.Step("rope-scaling", {"factor": "4", "maxd": "2048"}, {}, None)
    assert step_views.figures(step)  # a lesson's step: the page's curves, through the page's call
    assert seen == [("frequency_view", False), ("decay_view", False), ("<lambda>", False), ("frequency_view", False)]
    assert gc.isenabled()


def test_a_run_beside_a_paused_model_load_still_frees_its_cycles_as_it_ends(monkeypatch):
    """A model's first load keeps automatic collection off for the whole process (SmolLM2's first conversion: 15-40
    s). The other visitors' runs do not keep their cyclic garbage meanwhile: each full run's end collects
    (app/serving.script_run, at most once a second while runs overlap), collection paused or not
    (scripts/collector_during_load.py measured it: results/collector_during_load.json)."""
    import threading

    from app import serving

    loading, loaded = threading.Event(), threading.Event()

    def slow_load():  # the loading visitor's run, in flight all along
        with serving.script_run(), collector.paused():
            loading.set()
            loaded.wait(10)

    thread = threading.Thread(target=slow_load)
    thread.start()
    try:
        assert loading.wait(10) and not gc.isenabled()
        monkeypatch.setattr(serving, "_last_collection", 0.0)  # the last collection is over a second old
        with serving.script_run():  # another visitor's run
            cycle = Node()
            cycle.me = cycle
            garbage = weakref.ref(cycle)
            del cycle
        assert garbage() is None and not gc.isenabled()
    finally:
        loaded.set()
        thread.join()
    assert gc.isenabled()
