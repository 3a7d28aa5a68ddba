"""The long-context experiment of /rope-scaling: the loss per position equals transformers' own loss, scaling
swapped into a model equals a model built with that config, and the results files and script agree."""

import copy
import json
import math
import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

from core.models import local
from core.models.hf import HFAttentionModel
from core.models.rope_scaling import rope_config
from core.rope_scaling import experiment, long_context
from tests import tiny_models
from tests.references import assert_close_in_scale

# --- the long-context experiment on a tiny random Llama -----------------------------------------------------


def tiny_llama(seed=0, max_pos=64):
    """A tiny random Llama behind the model contract, and its transformers module for the references."""
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
    module = LlamaForCausalLM(config).eval()
    return HFAttentionModel(module, tiny_models.tokenizer(False), "tiny llama", "rope", is_causal=True), module


def losses_of(module, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        logits = module(ids[None]).logits[0, :-1]
    return F.cross_entropy(logits, ids[1:], reduction="none")


def test_token_losses_equal_transformers_loss():
    model, module = tiny_llama()
    ids = torch.randint(0, 50, (100,), generator=torch.Generator().manual_seed(1))
    seen = []
    losses = long_context.token_losses(model, ids, progress=lambda f, s: seen.append(f))
    with torch.no_grad():
        ref = module(ids[None], labels=ids[None]).loss
    assert losses.shape == (99,)
    assert float(losses.mean()) == pytest.approx(float(ref), rel=1e-5)
    assert seen == pytest.approx([0.45, 0.9, 1.0])  # after each of the 2 layers, then the vocabulary blocks
    assert_close_in_scale(model.next_token_losses(ids, block=7), losses, what="blocks of 7 rows")


@pytest.mark.parametrize("method,factor", [("linear", 4.0), ("dynamic", 2.0), ("yarn", 4.0)])
def test_scaled_rope_equals_a_model_built_with_that_config(method, factor):
    model, module = tiny_llama(max_pos=64)
    ids = torch.randint(0, 50, (200,), generator=torch.Generator().manual_seed(2))
    config = rope_config(method, factor, head_dim=8, rope_theta=100.0, original_context=64, base_config=module.config)
    reference = LlamaForCausalLM(config).eval()
    reference.load_state_dict(module.state_dict())
    before = model.next_token_losses(ids)
    scaled = model.next_token_losses(ids, rope=(method, factor, 64))
    assert_close_in_scale(scaled, losses_of(reference, ids), what=f"{method} x{factor}")
    assert not torch.allclose(scaled, before)  # scaling changed something past 64 positions
    assert_close_in_scale(model.next_token_losses(ids), before, what="plain RoPE after a scaled pass")
    assert module.config.rope_parameters["rope_type"] == "default"


@pytest.mark.parametrize("family", ["mixtral", "gpt_oss", "qwen2", "phi3"])
@pytest.mark.parametrize("method", ["default", "yarn"])
def test_scaled_rope_of_other_families_equals_their_own_module_built_with_that_config(family, method, tmp_path):
    """A learner's decoder of another family, scaled through the contract, against that family's own transformers
    module built with the scaled config and the same weights (Mixtral's config holds head_dim None, which YaRN's
    function read as is: a TypeError; gpt-oss's rotary gives cos and sin of half a head: Llama's did not fit)."""
    import transformers

    tiny_models.build(family, tmp_path)
    model = local.load_folder(tmp_path)
    module = model.model
    caps = model.capabilities
    config = rope_config(
        method, 2.0, head_dim=caps.head_dim, rope_theta=caps.positions.rope_theta, original_context=32,
        base_config=module.config,
    )  # fmt: skip
    reference = getattr(transformers, tiny_models.FAMILIES[family][1])(config).eval()
    reference.load_state_dict(module.state_dict())
    ids = torch.tensor(model.encode(" ".join([tiny_models.TEXTS[0]] * 3)))
    scaled = model.next_token_losses(ids, rope=(method, 2.0, 32))
    assert_close_in_scale(scaled, losses_of(reference, ids), what=f"{family} {method} x2")


def test_a_scaled_pass_leaves_other_threads_plain():
    """The scaled rotary embedding acts only in the pass that asked for it: another visitor's pass through the
    same model, running meanwhile in another thread, keeps plain RoPE."""
    model, module = tiny_llama(max_pos=64)
    ids = torch.randint(0, 50, (120,), generator=torch.Generator().manual_seed(4))
    plain = losses_of(module, ids)
    seen = {}
    with model.hooked(rotary=model._scaled_rotary("linear", 4.0, 64)):
        worker = threading.Thread(target=lambda: seen.update(other=losses_of(module, ids)))
        worker.start()
        worker.join()
        seen["here"] = losses_of(module, ids)
    assert_close_in_scale(seen["other"], plain, what="the other thread's pass")
    assert not torch.allclose(seen["here"], plain)  # and in this thread's pass the scaling did act


def test_scaled_rope_is_refused_in_words_for_a_model_without_rope(tmp_path):
    tiny_models.build("gpt2", tmp_path)
    gpt2 = local.load_folder(tmp_path)
    with pytest.raises(ValueError, match="RoPE"):
        gpt2.next_token_losses(list(range(5, 12)), rope=("linear", 2.0, 32))


def test_scaled_rope_is_refused_in_words_for_a_rope_per_layer_type(tmp_path):
    """Gemma 3 rotates each layer type with its own base: no single RoPE to scale (a ValueError in words, where
    transformers' config lookup raised a KeyError)."""
    tiny_models.build("gemma3", tmp_path)
    gemma3 = local.load_folder(tmp_path)
    assert gemma3.capabilities.positions.kind == "rope" and gemma3.capabilities.positions.rope_theta is None
    with pytest.raises(ValueError, match="no single RoPE base"):
        gemma3.next_token_losses(list(range(5, 12)), rope=("linear", 2.0, 32))


def test_bucket_losses_against_a_loop():
    losses = torch.arange(10, dtype=torch.float32)
    b = long_context.bucket_losses(losses, 4)
    assert b["start"] == [0, 4, 8] and b["end"] == [3, 7, 9] and b["count"] == [4, 4, 2]
    assert b["mean_loss"] == pytest.approx([1.5, 5.5, 8.5])


def test_evaluate_scaling_records_each_run():
    model, _ = tiny_llama(max_pos=32)
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

    model, _ = tiny_llama(max_pos=32)
    model.weights = ("folder", {"folder": "/models/tiny"})
    monkeypatch.setattr(script, "load_model", lambda: model)
    monkeypatch.setattr(script, "load_long_text", lambda: "the cat sat on the mat because it was tired . " * 9)
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
    assert res["weights"] == {"source": "folder", "fields": {"folder": "/models/tiny"}}  # the model's own record


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
    for length in files:  # every committed file names its weights by SmolLM2's record, as the model declares it
        assert experiment.experiment_view(length).weights == ("smollm2", {}), length


def test_the_no_scaling_run_is_the_model_as_trained():
    """A model trained with its own scaling (here linear x8 in its config): the 'default' run keeps the model's own
    rotary embedding (its losses are the module's own), not plain RoPE swapped in."""
    model, module = tiny_llama(max_pos=32)
    with torch.no_grad():  # sharper attention, so that positions (and how they are rotated) change the losses
        for layer in module.model.layers:
            layer.self_attn.q_proj.weight.mul_(6.0)
            layer.self_attn.k_proj.weight.mul_(6.0)
    config = copy.deepcopy(module.config)
    config.rope_parameters = {"rope_type": "linear", "factor": 8.0, "rope_theta": 100.0}
    own = LlamaForCausalLM(config).eval()
    own.load_state_dict(module.state_dict())
    trained = HFAttentionModel(own, tiny_models.tokenizer(False), "tiny llama x8", "rope", is_causal=True)
    ids = torch.randint(0, 50, (80,), generator=torch.Generator().manual_seed(5))
    out = long_context.evaluate_scaling(trained, ids, [("default", 1.0)], bucket=1, original_context=32)
    per_token = torch.tensor(out[0]["mean_loss"])  # buckets of one position: the loss of every next token
    expected = losses_of(own, ids)
    assert_close_in_scale(per_token, expected, what="the 'no scaling' run against the model as trained")
    plain = losses_of(module, ids)  # the same weights with plain RoPE: what the old 'default' run computed
    assert float((plain - expected).abs().max()) > 1e-2
