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


def test_the_machine_of_a_results_file_is_read_from_its_fields_or_from_the_line_an_older_script_wrote():
    fields = {"device": "cpu", "device_name": "AMD EPYC", "cpu_count": 2, "torch_threads": 1, "torch": "2.13.0+cpu"}
    assert results.device_of(fields) == results.Device("cpu", "AMD EPYC", 2, 1, "2.13.0+cpu")
    # scripts/antecedent_eval.py's line and scripts/long_context_experiment.py's (its torch beside it), as committed
    line = "CPU: AMD EPYC, 2 cores, torch 2.13.0+cpu (2 threads)"
    assert results.device_of({"device": line}) == results.Device("cpu", "AMD EPYC", 2, 2, "2.13.0+cpu")
    older = {"device": "cpu: x86_64, 2 threads", "torch": "2.13.0+cpu"}
    assert results.device_of(older) == results.Device("cpu", "x86_64", None, 2, "2.13.0+cpu")
    assert results.device_of({"device": "cuda: NVIDIA H200"}) == results.Device("cuda", "NVIDIA H200", None, None, None)
    gpu = {"device": "cuda", "device_name": "NVIDIA H200", "cpu_count": 16, "torch_threads": 8, "torch": "2.13.0"}
    assert results.device_of(gpu).cores is None  # the host's cores are not the GPU's
    assert results.device_of({"device": "a laptop"}) is None and results.device_of({}) is None
    assert results.device_of({"device": "cpu", "cpu_count": True, "torch_threads": "2"}).threads is None
    committed = results.device_of(results.load_result("antecedents"))
    assert committed is not None and committed.threads is not None
