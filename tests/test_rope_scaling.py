"""Scaled RoPE: our wrappers return exactly what transformers computes, the methods have the properties their
papers state, the plotted curves equal a direct evaluation, and the loss-per-position experiment equals
transformers' own loss."""

import json
import math

import numpy as np
import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from core import long_context, rope
from core import rope_scaling as rs

L0, D, THETA = 8192, 64, 100000.0


def hf_config(params: dict, max_pos: int) -> LlamaConfig:
    return LlamaConfig(
        hidden_size=D,
        num_attention_heads=1,
        head_dim=D,
        num_hidden_layers=1,
        intermediate_size=8,
        vocab_size=8,
        max_position_embeddings=max_pos,
        rope_parameters=dict(params),
    )


def default_inv():
    return rs.scaled_inv_freq("default")[0]


@pytest.mark.parametrize("factor", [2.0, 4.0, 8.0])
def test_wrappers_equal_transformers_functions(factor):
    base = {"rope_theta": THETA, "factor": factor}
    cases = {
        "linear": ({**base, "rope_type": "linear"}, L0, None),
        "dynamic": ({**base, "rope_type": "dynamic"}, L0, 3 * L0),
        "yarn": ({**base, "rope_type": "yarn", "original_max_position_embeddings": L0}, int(L0 * factor), None),
        "llama3": (
            {
                **base,
                "rope_type": "llama3",
                "original_max_position_embeddings": L0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
            },
            int(L0 * factor),
            None,
        ),
    }
    for method, (params, max_pos, seq_len) in cases.items():
        ref_inv, ref_att = ROPE_INIT_FUNCTIONS[method](hf_config(params, max_pos), None, seq_len=seq_len)
        inv, att = rs.scaled_inv_freq(method, factor, seq_len=seq_len)
        torch.testing.assert_close(inv.float(), ref_inv)
        assert att == pytest.approx(ref_att)


def test_default_equals_llama_rotary_and_our_rope():
    inv, att = rs.scaled_inv_freq("default")
    rotary = LlamaRotaryEmbedding(hf_config({"rope_type": "default", "rope_theta": THETA}, L0))
    torch.testing.assert_close(inv.float(), rotary.inv_freq)
    torch.testing.assert_close(inv, rope.rope_inv_freq(D, THETA), rtol=1e-6, atol=0)
    assert att == 1.0


def test_linear_is_positions_divided_by_factor():
    inv, _ = rs.scaled_inv_freq("linear", 4.0)
    x = torch.randn(3, 5, D, dtype=torch.float64)
    positions = torch.tensor([0, 4, 40, 400, 40000])
    torch.testing.assert_close(
        rope.apply_rope_rotate_half(x, positions, inv),
        rope.apply_rope_rotate_half(x, positions / 4.0, default_inv()),
        rtol=1e-6,
        atol=1e-6,
    )


@pytest.mark.parametrize("factor", [2.0, 4.0, 16.0])
def test_yarn_attention_factor_and_ramp(factor):
    inv, att = rs.scaled_inv_freq("yarn", factor)
    assert att == pytest.approx(0.1 * math.log(factor) + 1)
    ratio = rs.interpolation_ratio(inv, default_inv())
    wl = rs.wavelengths(default_inv())
    # beta_fast = 32: pairs turning more than 32 times within L0 are untouched; beta_slow = 1: pairs turning less
    # than once are fully interpolated (transformers rounds the ramp ends to whole dimensions, hence the margin)
    np.testing.assert_allclose(ratio[L0 / wl > 40], 1.0, rtol=1e-6)
    np.testing.assert_allclose(ratio[L0 / wl < 0.7], factor, rtol=1e-6)
    assert np.all(np.diff(ratio) >= -1e-9)


def test_dynamic_is_plain_rope_within_training_context():
    for seq_len in (None, 100, L0):
        inv, _ = rs.scaled_inv_freq("dynamic", 4.0, seq_len=seq_len)
        torch.testing.assert_close(inv, default_inv(), rtol=1e-6, atol=0)
    longer, _ = rs.scaled_inv_freq("dynamic", 4.0, seq_len=4 * L0)
    assert longer[0] == pytest.approx(1.0) and longer[-1] < default_inv()[-1] / 4  # base raised


def test_llama3_bands():
    inv, att = rs.scaled_inv_freq("llama3", 8.0)
    ratio, wl = rs.interpolation_ratio(inv, default_inv()), rs.wavelengths(default_inv())
    np.testing.assert_allclose(ratio[wl < L0 / 4], 1.0, rtol=1e-6)
    np.testing.assert_allclose(ratio[wl > L0], 8.0, rtol=1e-6)
    assert att == 1.0


def test_longrope_uses_long_factors_beyond_context():
    inv_long, att = rs.scaled_inv_freq("longrope", 4.0, seq_len=2 * L0)
    inv_short, _ = rs.scaled_inv_freq("longrope", 4.0, seq_len=L0)
    factors = torch.tensor(rs.longrope_factors(4.0, D, THETA, L0), dtype=torch.float64)
    torch.testing.assert_close(inv_long, default_inv() / factors, rtol=1e-5, atol=0)
    torch.testing.assert_close(inv_short, default_inv(), rtol=1e-6, atol=0)
    assert att == pytest.approx(math.sqrt(1 + math.log(4.0) / math.log(L0)))


def test_bad_method_and_factor_rejected():
    with pytest.raises(ValueError):
        rs.rope_parameters("ntk-by-magic", 2.0)
    with pytest.raises(ValueError):
        rs.rope_parameters("linear", 0.5)
    with pytest.raises(ValueError):
        rs.rope_parameters("linear", float("nan"))


def test_qk_by_distance_equals_rotated_all_ones_and_expectation():
    inv, att = rs.scaled_inv_freq("yarn", 4.0)
    ones = torch.ones(1, D, dtype=torch.float64)
    for dist in (0, 1, 17, 9000):
        qm = rope.apply_rope_rotate_half(ones, [dist], inv, att)
        k0 = rope.apply_rope_rotate_half(ones, [0], inv, att)
        assert rs.qk_by_distance(inv, att, [dist])[0] == pytest.approx(float(qm @ k0.T) / D)
    # expectation over random content x (same at both positions): trace(R) / d
    g = torch.Generator().manual_seed(0)
    x = torch.randn(20000, D, generator=g, dtype=torch.float64)
    dist = 5
    est = (
        (
            rope.apply_rope_rotate_half(x, torch.full((20000,), dist), inv)
            * rope.apply_rope_rotate_half(x, torch.zeros(20000), inv)
        ).sum(-1)
        / D
    ).mean()
    assert float(est) == pytest.approx(rs.qk_by_distance(inv, 1.0, [dist])[0], abs=0.02)


def test_decay_envelope_bins_hold_every_distance():
    inv, att = rs.scaled_inv_freq("default")
    env = rs.qk_decay_envelope(inv, att, 131072, n_bins=500)
    assert len(env["mean"]) <= 500
    assert env["start"][0] == 0 and env["end"][-1] == 131072
    np.testing.assert_array_equal(env["start"][1:], env["end"][:-1] + 1)  # contiguous, nothing skipped
    full = rs.qk_by_distance(inv, att, np.arange(131073))
    for b in (0, 10, len(env["mean"]) // 2, len(env["mean"]) - 1):
        chunk = full[env["start"][b] : env["end"][b] + 1]
        assert env["mean"][b] == pytest.approx(chunk.mean())
        assert env["min"][b] == pytest.approx(chunk.min()) and env["max"][b] == pytest.approx(chunk.max())


def test_neighbour_angle():
    inv = default_inv()
    r = rs.neighbour_angle(inv)
    x = torch.ones(1, D, dtype=torch.float64)
    a, b = rope.apply_rope_adjacent(x, [10], inv)[0], rope.apply_rope_adjacent(x, [11], inv)[0]
    assert r["vector"] == pytest.approx(math.acos(float(a @ b / (a.norm() * b.norm()))))
    assert r["fastest_pair"] == pytest.approx(1.0)
    assert rs.neighbour_angle(rs.scaled_inv_freq("linear", 8.0)[0])["fastest_pair"] == pytest.approx(1 / 8)


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


def test_pair_classes_and_method_table():
    assert rs.pair_classes(np.array([1.0, 1.005, 2.0, 4.0, 4.02, 13.0]), 4.0) == {
        "kept": 2,
        "interpolated": 3,
        "between": 1,
    }
    rows = {r["method"]: r for r in rs.method_table(8.0, 8 * L0)}
    assert rows["default"]["kept"] == 32
    assert rows["linear"]["interpolated"] == 32
    for r in rows.values():
        assert r["kept"] + r["interpolated"] + r["between"] == 32
        np.testing.assert_allclose(r["wavelength"], 2 * np.pi / r["inv_freq"].numpy())


def test_resolution_by_factor():
    res = rs.resolution_by_factor([1.0, 2.0, 8.0])
    # linear divides every theta by s: every step shrinks by s
    assert res["linear"]["fastest_pair"] == pytest.approx([1.0, 0.5, 0.125])
    slow = rs.neighbour_angle(default_inv())["slowest_pair"]
    assert res["linear"]["slowest_pair"] == pytest.approx([slow, slow / 2, slow / 8])
    # YaRN keeps the fast pairs, so the finest step stays; its slowest pair is interpolated like linear's
    assert res["yarn"]["fastest_pair"] == pytest.approx([1.0, 1.0, 1.0])
    assert res["yarn"]["slowest_pair"][2] == pytest.approx(slow / 8)


def _experiment_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "long_context_experiment.py"
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
    for n, res in long_context.results_by_length().items():
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


def test_resolution_figure_plots_the_computed_angles_on_power_of_two_ticks():
    from app import rope_figures

    res = rope_figures.resolution()
    fig = rope_figures.resolution_figure(res, "fastest_pair", lambda key, **kw: key)
    for trace in fig.data:
        np.testing.assert_allclose(trace.y, np.asarray(res[trace.name]["fastest_pair"], dtype=np.float32))
        np.testing.assert_allclose(trace.x, rope_figures.RES_FACTORS)
    ticks = list(fig.layout.xaxis.tickvals)
    assert ticks[0] == rope_figures.RES_FACTORS[0] and ticks[-1] == pytest.approx(rope_figures.RES_FACTORS[-1])
    assert all(b == 2 * a for a, b in zip(ticks, ticks[1:]))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.dtick == "D2"
