"""core/results.py: the one reader of committed measurements."""

import json

from core import results


def test_a_committed_file_loads_and_a_missing_one_is_none(tmp_path):
    assert results.load_result("bench_views") is not None
    assert results.load_result("no_such_results_file") is None
    assert results.load_result(tmp_path / "absent.json") is None


def test_an_unreadable_or_wrongly_shaped_file_is_none(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert results.load_result(bad) is None
    bad.write_text("[1, 2]", encoding="utf-8")
    assert results.load_result(bad) is None  # not an object
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"rows": [1]}), encoding="utf-8")
    assert results.load_result(ok, lambda d: isinstance(d["rows"], list)) == {"rows": [1]}
    assert results.load_result(ok, lambda d: isinstance(d["missing"], list)) is None  # KeyError -> None


def test_save_then_load_round_trips(tmp_path):
    path = results.save_result(tmp_path / "out.json", {"é": [1.5, "日本"]})
    assert results.load_result(path) == {"é": [1.5, "日本"]}
    assert path.read_text(encoding="utf-8").endswith("\n")


def test_a_committed_gpu_run_takes_the_place_of_the_no_gpu_sentence(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "RESULTS_DIR", tmp_path)
    is_run = lambda run: isinstance(run["rows"], list)  # noqa: E731
    cpu, gpu = {"rows": [1]}, {"rows": [2]}
    results.save_result("bench", {"cpu": cpu, "cuda": "no GPU here", "odd": {"rows": "x"}})
    assert results.load_device_runs("bench", is_run) == {"cpu": cpu, "cuda": "no GPU here"}
    results.save_result(results.gpu_result_name("bench"), {"cuda": gpu, "cpu": "a sentence never replaces a run"})
    assert results.load_device_runs("bench", is_run) == {"cpu": cpu, "cuda": gpu}
    assert results.load_device_runs("bench", is_run, path=tmp_path / "bench.json")["cuda"] == "no GPU here"
    assert results.load_device_runs("absent", is_run) is None
