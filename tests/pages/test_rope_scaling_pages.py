"""The /rope-scaling page through AppTest: renders within budget, ignores bad links, shows the committed results
file (and says when there is none or a run is missing), and reruns a small size live."""

import json

import pytest

from core import results
from core.rope_scaling import experiment
from tests.apptest_helpers import figure_bytes, figure_titles
from tests.apptest_helpers import open_view as open_page
from tests.apptest_helpers import shown_text as shown

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it

MAX_VIEW_BYTES = 1_000_000


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"factor": "32", "maxd": "16384", "measure": "vector"},
        {"factor": "2", "maxd": "131072", "measure": "slowest_pair", "exp_factor": "all"},
    ],
    ids=["default", "s32", "s2"],
)
def test_rope_scaling_page_renders_within_budget(params):
    at = open_page("rope_scaling.py", params)
    assert figure_bytes(at) < MAX_VIEW_BYTES
    assert "linear interpolation divides every step by s" in shown(at)


def test_rope_scaling_bad_links_are_ignored():
    at = open_page("rope_scaling.py", {"factor": "3", "maxd": "-1", "live_n": "1e9", "live_method": "<b>x</b>"})
    assert "Ignored link parameters" in shown(at)


def test_rope_scaling_page_shows_the_results_file():
    by_length = experiment.results_by_length()
    if not by_length:
        pytest.skip("no results file")
    res = by_length[max(by_length)]  # the page opens on the longest run
    at = open_page("rope_scaling.py")
    text = shown(at)
    device = results.device_of(res)
    assert (
        res["command"] in text and f"CPU ({device.name}), {device.threads} torch threads, torch {res['torch']}" in text
    )
    beyond = [r for r in res["runs"] if r["mean_loss_beyond_context"] is not None]
    if beyond:
        best = min(beyond, key=lambda r: r["mean_loss_beyond_context"])
        assert f"{best['mean_loss_beyond_context']:.2f} ({best['label']})" in text
        # position interpolation with fine-tuning named, beside the un-fine-tuned linear run measured here
        plain = next(r for r in res["runs"] if r["method"] == "default")
        linear = min((r for r in res["runs"] if r["method"] == "linear"), key=lambda r: r["factor"])
        assert linear["mean_loss_within_context"] > plain["mean_loss_within_context"]
        assert "**position interpolation with fine-tuning** (Chen et al. 2023)" in text
        assert (
            f"{linear['label']} without it has a mean loss of {linear['mean_loss_within_context']:.2f} within 8,192 "
            f"positions against {plain['mean_loss_within_context']:.2f} unscaled"
        ) in text
        assert f"{best['label']} reaches {best['mean_loss_beyond_context']:.2f} beyond 8,192 positions" in text


def test_rope_scaling_page_without_results(monkeypatch, tmp_path):
    missing = tmp_path / "none.json"
    monkeypatch.setattr(experiment, "RESULTS_PATH", missing)
    assert experiment.load_results(missing) is None
    (tmp_path / "bad.json").write_text("{not json")
    assert experiment.load_results(tmp_path / "bad.json") is None
    (tmp_path / "odd.json").write_text(json.dumps({"runs": "x"}))
    assert experiment.load_results(tmp_path / "odd.json") is None
    at = open_page("rope_scaling.py")
    assert "No results file yet" in shown(at)


def fake_results(n: int, runs: list[tuple[str, float]], command: str) -> dict:
    """A results file in the experiment script's format; losses made up (only the page's reading is tested)."""

    def run(method, factor, i):
        label = "no scaling" if method == "default" else f"{method} x{factor:g}"
        beyond = 4.0 - 0.1 * i if n > 8192 else None
        return {
            "method": method,
            "factor": factor,
            "label": label,
            "attention_factor": 1.0,
            "n_tokens": n,
            "seconds": 1.0,
            "mean_loss_all": 3.0,
            "mean_loss_within_context": 2.5 + 0.01 * i,
            "mean_loss_beyond_context": beyond,
            "start": [0, n // 2],
            "end": [n // 2 - 1, n - 2],
            "mean_loss": [2.5, 3.5],
            "count": [n // 2, n // 2 - 1],
        }

    return {
        "command": command,
        "date": "2026-11-22",
        "device": "cpu: test",
        "torch": "x",
        "transformers": "y",
        "model": "SmolLM2-135M-Instruct",
        "weights": {"source": "smollm2", "fields": {}},
        "n_tokens": n,
        "bucket": n // 2,
        "text": {"path": "data/licence_texts.txt", "tokens_available": 43114},
        "complete": True,
        "runs": [run(m, f, i) for i, (m, f) in enumerate(runs)],
    }


def test_rope_scaling_page_picks_a_length_and_names_missing_runs(monkeypatch, tmp_path):
    monkeypatch.setattr(experiment, "RESULTS_PATH", tmp_path / "long_context.json")
    (tmp_path / "long_context.json").write_text(json.dumps(fake_results(16384, experiment.STANDARD_RUNS, "cmd-16k")))
    partial = [("default", 1.0), ("yarn", 4.0), ("dynamic", 4.0), ("linear", 4.0)]
    (tmp_path / "long_context_32k.json").write_text(json.dumps(fake_results(32768, partial, "cmd-32k")))
    (tmp_path / "long_context_bad.json").write_text("{broken")
    assert list(experiment.results_by_length()) == [16384, 32768]
    at = open_page("rope_scaling.py")
    text = shown(at)
    assert "cmd-32k" in text and "cmd-16k" not in text
    warning = " ".join(w.value for w in at.warning)
    assert "holds 4 of the 10 configurations" in warning
    assert "linear x2, linear x8, dynamic x2, dynamic x8, yarn x2, yarn x8" in warning
    at.radio(key="exp_n").set_value("16384").run()
    assert not at.exception
    assert "cmd-16k" in shown(at) and "configurations" not in " ".join(w.value for w in at.warning)
    assert "exp_n" in at.query_params


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_the_results_weights_are_said_in_the_readers_words(monkeypatch, tmp_path, lang):
    """The "how made" note said where the weights came from in the script's English to every reader; a results file
    now keeps the model's own record (source and fields) and the page says it from [models] weights_<source>."""
    from app import i18n

    monkeypatch.setattr(experiment, "RESULTS_PATH", tmp_path / "long_context.json")
    (tmp_path / "long_context.json").write_text(json.dumps(fake_results(16384, experiment.STANDARD_RUNS, "cmd-16k")))
    text = shown(open_page("rope_scaling.py", {"lang": lang}))
    assert "cmd-16k" in text and i18n.text(lang, "models", "weights_smollm2") in text, text
    assert i18n.text("en", "models", "weights_smollm2") not in text


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_machine_of_the_results_is_said_in_the_readers_words(monkeypatch, tmp_path, lang):
    """The "how made" note showed the line the script wrote ('cpu: x86_64, 2 threads') to every reader: the page
    says the machine from its fields ([common] device_*), read from the line a file written before the fields has."""
    from app import i18n

    monkeypatch.setattr(experiment, "RESULTS_PATH", tmp_path / "long_context.json")
    said = lambda key, **f: i18n.text(lang, "common", key, **f)  # noqa: E731
    join = said("device_join")
    older = {"device": "cpu: x86_64, 2 threads", "torch": "2.13.0+cpu"}
    fields = {"device": "cpu", "device_name": "AMD EPYC", "cpu_count": 1, "torch_threads": 1, "torch": "2.13.0+cpu"}
    for machine, line in [
        (older, join.join([said("device_cpu", name="x86_64"), said("device_threads", threads=2)])),
        (fields, join.join([said("device_cpu", name="AMD EPYC"), said("device_cores", cores=1),
                            said("device_threads", threads=1)])),
    ]:  # fmt: skip
        file = fake_results(16384, experiment.STANDARD_RUNS, "cmd-16k") | machine
        (tmp_path / "long_context.json").write_text(json.dumps(file))
        text = shown(open_page("rope_scaling.py", {"lang": lang}))
        assert f"{line}{join}{said('device_torch', torch='2.13.0+cpu')}" in text, text
        assert lang == "en" or ("threads" not in text and "cores" not in text)
    assert lang != "en" or "CPU (AMD EPYC), 1 core, 1 torch thread, torch 2.13.0+cpu" in text


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
@pytest.mark.parametrize("record", [None, {}, {"source": "", "fields": {}}])
def test_a_results_file_with_no_weights_record_names_the_model_with_no_empty_brackets(
    monkeypatch, tmp_path, lang, record
):
    """A results file written before the weights record (or with an empty one) showed 'Model: SmolLM2-135M-Instruct
    ()': the model is named alone; with a record, its words stand in the reader's brackets after it."""
    from app import i18n

    monkeypatch.setattr(experiment, "RESULTS_PATH", tmp_path / "long_context.json")
    results = fake_results(16384, experiment.STANDARD_RUNS, "cmd-16k") | {"weights": record}
    (tmp_path / "long_context.json").write_text(json.dumps(results))
    text = shown(open_page("rope_scaling.py", {"lang": lang}))
    assert "cmd-16k" in text and "SmolLM2-135M-Instruct" in text, text
    assert "()" not in text and "（）" not in text, text
    results["weights"] = {"source": "smollm2", "fields": {}}
    (tmp_path / "long_context.json").write_text(json.dumps(results))
    text = shown(open_page("rope_scaling.py", {"lang": lang}))
    said = i18n.text(lang, "models", "weights_aside", note=i18n.text(lang, "models", "weights_smollm2"))
    assert f"SmolLM2-135M-Instruct{said}" in text, text


@pytest.mark.slow
def test_live_rerun_small():
    at = open_page("rope_scaling.py", {"live_n": "256", "live_method": "yarn", "live_factor": "2"})
    at.button(key="live-run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Live run" in title for title in figure_titles(at))


@pytest.mark.slow  # a tiny model of its own, loaded
def test_a_kept_live_run_belongs_to_the_load_that_ran_it(tmp_path, monkeypatch):
    """The live run kept in the session is shown again on a rerun, but not once another model takes the same key
    (a learner's folder replaced, its record changed): keyed on the load (app.models.kept_serial) as computed()
    keys its cache, not on the key alone."""
    from core.models import registry
    from tests.apptest_helpers import assert_no_exception, run_view
    from tests.tiny_models import registered_folders, stand_in

    def live_titles(at) -> list[str]:
        assert_no_exception(at)
        return [t for t in figure_titles(at) if "Live run" in t]

    made_up = fake_results(256, [("default", 1.0), ("yarn", 2.0)], "live")["runs"]  # the loss is not the point
    monkeypatch.setattr(experiment, "live_runs", lambda model, *args, **kwargs: made_up)
    with registered_folders(tmp_path, ("llama",)) as keys:
        key = keys["llama"]
        at = run_view("rope-scaling", params={"model": key, "live_n": "256", "live_method": "yarn", "live_factor": "2"})
        at.button(key="live-run").click().run()
        assert live_titles(at)
        assert live_titles(at.run()), "kept for a rerun of the same model"
        record = registry.RECORDS[key]
        # undone before the folder is unregistered: the test's own monkeypatch, undone after it, would put the
        # record back into the process's registry for every later test
        with pytest.MonkeyPatch.context() as patch:
            stand_in(patch, key, lambda: record.load())  # another model under the same key
            assert not live_titles(at.run())
