"""The long-context experiment of /rope-scaling: the loss per position equals transformers' own loss, scaling
swapped into a model equals a model built with that config, and the results files and script agree."""

import json
import math

import numpy as np
import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from core import rope_scaling as rs
from core.rope_scaling import experiment, long_context

# --- the long-context experiment on a tiny random Llama -----------------------------------------------------


def tiny_llama(seed=0, max_pos=64):
    torch.manual_seed(seed)
    config = LlamaConfig(
        hidden_size=32,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        num_hidden_layers=2,
        intermediate_size=48,
        vocab_size=50,
        max_position_embeddings=max_pos,
        rope_parameters={"rope_type": "default", "rope_theta": 100.0},
        attn_implementation="sdpa",
    )
    return LlamaForCausalLM(config).eval()


def test_token_losses_equal_transformers_loss():
    model = tiny_llama()
    ids = torch.randint(0, 50, (100,), generator=torch.Generator().manual_seed(1))
    seen = []
    losses = long_context.token_losses(model, ids, block=7, progress=lambda f, s: seen.append(f))
    with torch.no_grad():
        ref = model(ids[None], labels=ids[None]).loss
    assert losses.shape == (99,)
    assert float(losses.mean()) == pytest.approx(float(ref), rel=1e-5)
    assert seen[-1] == 1.0 and len(seen) >= 3


@pytest.mark.parametrize("method,factor", [("linear", 4.0), ("dynamic", 2.0), ("yarn", 4.0)])
def test_applied_scaling_equals_a_model_built_with_that_config(method, factor):
    model = tiny_llama(max_pos=64)
    ids = torch.randint(0, 50, (1, 200), generator=torch.Generator().manual_seed(2))
    config = rs.rope_config(method, factor, head_dim=8, rope_theta=100.0, original_context=64, base_config=model.config)
    reference = LlamaForCausalLM(config).eval()
    reference.load_state_dict(model.state_dict())
    with torch.no_grad():
        before = model(ids).logits
        with rs.rope_scaling_applied(model, method, factor, original_context=64):
            scaled = model(ids).logits
        after = model(ids).logits
        expected = reference(ids).logits
    torch.testing.assert_close(scaled, expected)
    assert not torch.allclose(scaled, before)  # scaling changed something past 64 positions
    torch.testing.assert_close(after, before)  # and the model is back to plain RoPE
    assert model.config.rope_parameters["rope_type"] == "default"


def test_bucket_losses_against_a_loop():
    losses = torch.arange(10, dtype=torch.float32)
    b = long_context.bucket_losses(losses, 4)
    assert b["start"] == [0, 4, 8] and b["end"] == [3, 7, 9] and b["count"] == [4, 4, 2]
    assert b["mean_loss"] == pytest.approx([1.5, 5.5, 8.5])


def test_evaluate_scaling_records_each_run():
    model = tiny_llama(max_pos=32)
    ids = torch.randint(0, 50, (80,), generator=torch.Generator().manual_seed(3))
    saved = []
    runs = long_context.run_configs(["default", "linear", "yarn"], [2.0])
    assert runs == [("default", 1.0), ("linear", 2.0), ("yarn", 2.0)]
    out = long_context.evaluate_scaling(model, ids, runs, bucket=16, original_context=32, on_result=saved.append)
    assert [r["method"] for r in saved] == ["default", "linear", "yarn"]
    base = long_context.token_losses(model, ids)
    assert out[0]["mean_loss_all"] == pytest.approx(float(base.mean()), rel=1e-5)
    assert out[0]["mean_loss_within_context"] == pytest.approx(float(base[:32].mean()), rel=1e-5)
    assert out[2]["attention_factor"] == pytest.approx(0.1 * math.log(2) + 1)


def test_long_text_is_shipped_and_long_enough():
    text = long_context.load_long_text()
    assert 150_000 < len(text.encode("utf-8")) < 300_000
    assert "GNU GENERAL PUBLIC LICENSE" in text and "Apache License" in text


def _experiment_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "long_context_experiment.py"
    spec = importlib.util.spec_from_file_location("long_context_experiment", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_results_files_name_one_command_that_redoes_all_their_runs():
    """A file filled by several resumed invocations still names a single command; parsed back through the script's
    own run_configs it asks for exactly the runs the file holds."""
    script = _experiment_script()
    root = script.ROOT
    runs = [{"method": m, "factor": f} for m, f in long_context.run_configs(["default", "yarn"], [2.0, 4.0])]
    cmd = script.reproducing_command(runs, 16384, 1024, root / "results" / "long_context.json")
    assert cmd == "python scripts/long_context_experiment.py --max-tokens 16384 --methods default yarn --factors 2 4"
    assert script.reproducing_command(runs[:1], 32768, 512, root / "results" / "x.json") == (
        "python scripts/long_context_experiment.py --max-tokens 32768 --methods default --bucket 512 "
        "--out results/x.json"
    )
    assert script.default_out(32768).name == "long_context_32k.json"
    assert script.default_out(16384).name == "long_context.json"
    for n, res in experiment.results_by_length().items():
        words = res["command"].split()
        assert words[:2] == ["python", "scripts/long_context_experiment.py"]
        opts, key = {}, None
        for w in words[2:]:
            if w.startswith("--"):
                key = w[2:]
                opts[key] = []
            else:
                opts[key].append(w)
        asked = long_context.run_configs(
            opts.get("methods", script.DEFAULT_METHODS), [float(f) for f in opts.get("factors", script.DEFAULT_FACTORS)]
        )
        assert sorted(asked) == sorted((r["method"], float(r["factor"])) for r in res["runs"])
        assert int(opts["max-tokens"][0]) == res["n_tokens"] == n
        assert res["invocations"][-1]["date"] == res["date"]


def test_experiment_script_end_to_end_with_resume(tmp_path, monkeypatch):
    """The script itself on a tiny model: a first invocation, then a resumed one that adds a factor; the file ends
    with every run once, both invocations, and the one command that asks for all of them."""
    script = _experiment_script()

    class Tokenizer:
        def __call__(self, text):
            return {"input_ids": [ord(c) % 50 for c in text]}

    model = tiny_llama(max_pos=32)
    monkeypatch.setattr(script, "load_model", lambda: (model, Tokenizer(), "tiny test model"))
    monkeypatch.setattr(script, "load_long_text", lambda: "the cat sat on the mat because it was tired. " * 3)
    monkeypatch.setattr(script, "default_device", lambda: torch.device("cpu"))
    out = tmp_path / "lc.json"
    common = ["--max-tokens", "80", "--bucket", "16", "--out", str(out)]
    script.main(common + ["--methods", "default", "linear", "--factors", "2"])
    first = json.loads(out.read_text())
    assert first["complete"] and [(r["method"], r["factor"]) for r in first["runs"]] == [
        ("default", 1.0),
        ("linear", 2.0),
    ]
    script.main(common + ["--methods", "default", "linear", "--factors", "2", "4", "--resume"])
    res = json.loads(out.read_text())
    assert [(r["method"], r["factor"]) for r in res["runs"]] == [("default", 1.0), ("linear", 2.0), ("linear", 4.0)]
    assert res["runs"][:2] == first["runs"], "finished runs are kept, not redone"
    assert len(res["invocations"]) == 2 and res["invocations"][1]["command"].endswith("--resume")
    assert res["command"] == (
        "python scripts/long_context_experiment.py --max-tokens 80 --methods default linear "
        f"--factors 2 4 --bucket 16 --out {out}"
    )
    assert res["n_tokens"] == 80 and res["complete"]


def test_experiment_view_reads_the_committed_files():
    files = experiment.results_by_length()
    if not files:
        pytest.skip("no results file")
    n = max(files)
    assert experiment.choices()[n] == sorted({f"{r['factor']:g}" for r in files[n]["runs"] if r["factor"] != 1.0})
    view = experiment.experiment_view(n, "4")
    assert {r["method"] for r in view.loss.runs} <= {"default", "linear", "dynamic", "yarn"}
    assert all(r["method"] == "default" or r["factor"] == 4.0 for r in view.loss.runs)
    beyond = [r for r in files[n]["runs"] if r["mean_loss_beyond_context"] is not None]
    assert view.best["best_loss"] == min(r["mean_loss_beyond_context"] for r in beyond)
    run = view.loss.runs[0]
    np.testing.assert_allclose(view.loss.midpoints[run["label"]], (np.array(run["start"]) + run["end"]) / 2)
    assert view.loss.reaches_original == (n > experiment.ORIGINAL_CONTEXT)
    assert experiment.experiment_view(123, "all") is None
