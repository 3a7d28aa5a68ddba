"""core.linear_attention.measure and .views: counted costs against hand-worked numbers, the implied matrices against references written
here, slope fitting on synthetic power laws, and the timing / generation sweeps on tiny sizes (what they report,
how the time limits cut them). Speed itself is measured by benchmarks/bench_linear.py, not asserted here."""

import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.linear_attention import measure as ls
from core.linear_attention import views


def test_cost_curves_and_crossover_hand_worked():
    # d = d_v = 64. n = 64: (n x n) order 64*64*(64+64+1) = 528,384; (d x d) order 2*64*64*64 + 2*64*64 = 532,480
    # -> the n x n order is still cheaper. n = 65: 545,025 against 540,800 -> the d x d order wins from n = 65.
    curves = views.cost_curves([64, 65], 64)
    assert curves == {"quadratic": [528_384, 545_025], "linear": [532_480, 540_800]}
    assert views.associativity_crossover(64) == 65
    for d in (1, 2, 7, 16, 128):
        n = views.associativity_crossover(d)
        c = views.cost_curves([n - 1, n], d)
        assert c["linear"][1] < c["quadratic"][1] and (n == 1 or c["linear"][0] >= c["quadratic"][0])


def numpy_softmax(q, k, causal):
    s = q @ k.T / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones_like(s, dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def numpy_linear(q, k, causal):
    phi = lambda x: np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0)))  # noqa: E731  elu(x) + 1
    kernel = phi(q) @ phi(k).T
    if causal:
        kernel = np.tril(kernel)
    return kernel / kernel.sum(-1, keepdims=True)


@pytest.mark.parametrize("causal", [False, True])
def test_implied_matrices_match_references(causal):
    n, d, spread, seed = 9, 8, 1.5, 4
    r = views.implied_matrices(n, d, spread, causal, seed)
    g = torch.Generator().manual_seed(seed)  # the same draw as core: q, k, v from one generator
    q, k, _ = (torch.randn(n, d, generator=g, dtype=torch.float64).numpy() * spread for _ in range(3))
    np.testing.assert_allclose(r["softmax"], numpy_softmax(q, k, causal), atol=1e-12)
    np.testing.assert_allclose(r["linear"], numpy_linear(q, k, causal), atol=1e-6)  # core adds eps=1e-6
    assert r["check_softmax"] < 1e-12 and r["check_linear"] < 1e-12
    if causal:
        assert r["mask"].sum() == n * (n - 1) // 2 and (r["linear"][r["mask"]] == 0).all()
    else:
        assert r["mask"] is None and (r["linear"] > 0).all()
    for m, kind in ((r["softmax"], "softmax"), (r["linear"], "linear")):
        p = np.where(m > 0, m, 1.0)
        assert r[f"entropy_{kind}"] == pytest.approx(float(-(m * np.log(p)).sum(-1).mean()), abs=1e-9)
        assert r[f"row_max_{kind}"] == pytest.approx(float(m.max(-1).mean()))


@pytest.mark.parametrize("causal", [False, True])
def test_implied_matrices_checks_read_each_methods_own_output(monkeypatch, causal):
    """The page's two checks (weights shown @ V against each method's own output: torch's SDPA for softmax, the
    kernel form for linear) must compare with those outputs, not with the weights again: they agree to 1e-12, so
    only moving an output can tell. SDPA moved by 2^-10 and the linear output by 2^-11 must read as those."""
    real_sdpa, real_lin, real_causal = (
        F.scaled_dot_product_attention,
        views.linear_attention,
        views.causal_linear_attention,
    )
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **kw: real_sdpa(*a, **kw) + 2.0**-10)
    monkeypatch.setattr(views, "linear_attention", lambda *a, **kw: real_lin(*a, **kw) + 2.0**-11)
    monkeypatch.setattr(views, "causal_linear_attention", lambda *a, **kw: real_causal(*a, **kw) + 2.0**-11)
    r = views.implied_matrices(9, 8, 1.5, causal, 4)
    assert r["check_softmax"] == pytest.approx(2.0**-10, rel=1e-6)
    assert r["check_linear"] == pytest.approx(2.0**-11, rel=1e-6)


def test_large_spread_sharpens_softmax_more_than_linear():
    calm, sharp = views.implied_matrices(32, 16, 0.25), views.implied_matrices(32, 16, 4.0)
    assert sharp["entropy_softmax"] < calm["entropy_softmax"] - 1.0
    assert sharp["entropy_softmax"] < sharp["entropy_linear"]


def test_power_of_two_sizes():
    assert ls.power_of_two_sizes(256, 2048) == [256, 512, 1024, 2048]
    assert ls.power_of_two_sizes(256, 3000) == [256, 512, 1024, 2048]
    assert ls.power_of_two_sizes(5, 5) == [5]
    with pytest.raises(ValueError):
        ls.power_of_two_sizes(8, 4)


def test_fit_slopes_on_exact_power_laws():
    rows = [
        {"n": n, "softmax_ms": 3e-6 * n**2, "linear_ms": 0.01 + 1e-3 * n, "skipped": False}
        for n in (64, 128, 256, 512, 1024, 2048)
    ]
    s = ls.fit_slopes(rows)
    assert s["fit_from"] == 256
    assert s["softmax"] == pytest.approx(2.0) and math.exp(s["softmax_intercept"]) == pytest.approx(3e-6)
    assert 0.95 < s["linear"] < 1.0  # the constant still bends it slightly
    assert ls.fit_slopes(rows, fit_from=64)["linear"] < s["linear"]  # small sizes pull the slope down
    rows.append({"n": 4096, "softmax_ms": None, "linear_ms": None, "skipped": True})
    assert ls.fit_slopes(rows)["fit_from"] == 256  # skipped sizes neither fitted nor setting the range
    assert ls.fit_slopes(rows[:1])["softmax"] is None


def test_time_scaling_tiny_and_deadline():
    seen = []
    rows = ls.time_scaling([16, 32], head_dim=8, reps=1, progress=lambda f, label: seen.append(label))
    assert [r["n"] for r in rows] == [16, 32]
    assert all(r["softmax_ms"] > 0 and r["linear_ms"] > 0 and not r["skipped"] for r in rows)
    assert seen[-1] == "done" and "softmax n=16" in seen
    causal = ls.time_scaling([16], head_dim=8, reps=1, causal=True)
    assert causal[0]["linear_ms"] > 0
    skipped = ls.time_scaling([16, 32], head_dim=8, reps=1, deadline_s=-1)
    assert all(r["skipped"] and r["softmax_ms"] is None for r in skipped)


def test_attention_calls_compute_the_right_thing():
    q, k, v = (torch.randn(1, 2, 10, 4, dtype=torch.float64) for _ in range(3))
    from core.linear_attention import causal_linear_attention, linear_attention

    torch.testing.assert_close(ls.attention_call("linear", q, k, v, False)(), linear_attention(q, k, v))
    torch.testing.assert_close(ls.attention_call("linear", q, k, v, True)(), causal_linear_attention(q, k, v))
    soft = (
        torch.softmax(
            torch.tril(q @ k.transpose(-1, -2) / 2).masked_fill(
                ~torch.ones(10, 10, dtype=torch.bool).tril(), float("-inf")
            ),
            -1,
        )
        @ v
    )
    torch.testing.assert_close(ls.attention_call("softmax", q, k, v, True)(), soft)
    with pytest.raises(ValueError):
        ls.attention_call("cosine", q, k, v, False)


def test_generation_table_tiny():
    rows = ls.generation_table([8, 16], d_model=16, n_heads=2, steps=2)
    assert [r["context"] for r in rows] == [8, 16]
    for r in rows:
        assert r["rnn_steps"] == r["kv_cache_steps"] == r["no_cache_steps"] == 2
        assert r["rnn_over_kv_cache"] == pytest.approx(r["rnn_tok_s"] / r["kv_cache_tok_s"])
        assert r["kv_cache_over_no_cache"] == pytest.approx(r["kv_cache_tok_s"] / r["no_cache_tok_s"])
    cut = ls.generation_table([8], d_model=16, n_heads=2, steps=2, deadline_s=-1)
    assert cut[0]["skipped"] and cut[0]["rnn_tok_s"] is None and cut[0]["rnn_over_kv_cache"] is None


def test_generation_table_does_not_start_what_would_overrun_the_deadline(monkeypatch):
    """On a fake clock where a measurement costs context^power seconds (CALL_COST_POWER's own model, exactly),
    the 8k no-cache call (64 s after 16 s at 4k) would end past a 60 s deadline: it is skipped, not started,
    while the cheaper modes at 8k still run and the table ends before the deadline."""
    clock = [0.0]
    cost = {"rnn": 1e-3, "kv_cache": 1e-7, "no_cache": 1e-6}  # seconds per context^power
    calls = []

    def fake_tokens_per_second(layer, context, mode, steps=16, budget_s=None):
        calls.append((mode, context))
        clock[0] += cost[mode] * context ** ls.CALL_COST_POWER[mode]
        return {"mode": mode, "context": context, "steps": steps, "seconds": 1.0, "tokens_per_s": float(steps)}

    monkeypatch.setattr(ls.decoding, "tokens_per_second", fake_tokens_per_second)
    monkeypatch.setattr(ls.time, "perf_counter", lambda: clock[0])
    rows = ls.generation_table([2048, 4096, 8192], d_model=16, n_heads=2, deadline_s=60)
    assert ("no_cache", 4096) in calls and ("no_cache", 8192) not in calls
    last = rows[-1]
    assert last["no_cache_skipped"] and last["no_cache_tok_s"] is None and last["kv_cache_over_no_cache"] is None
    assert not last["rnn_skipped"] and not last["kv_cache_skipped"] and not last["skipped"]
    assert last["rnn_over_kv_cache"] == pytest.approx(1.0)
    assert clock[0] <= 60
    unbounded = ls.generation_table([2048, 4096, 8192], d_model=16, n_heads=2)
    assert unbounded[-1]["no_cache_tok_s"] is not None and not unbounded[-1]["no_cache_skipped"]


def test_load_results(tmp_path):
    assert ls.load_results(tmp_path / "none.json") is None
    (tmp_path / "bad.json").write_text("[1, 2")
    assert ls.load_results(tmp_path / "bad.json") is None
    (tmp_path / "odd.json").write_text(json.dumps({"scaling": {"rows": []}, "command": "x"}))
    assert ls.load_results(tmp_path / "odd.json") is None
    good = {"command": "c", "scaling": {"rows": [], "slopes": {}}, "generation": {"rows": []}}
    (tmp_path / "good.json").write_text(json.dumps(good))
    assert ls.load_results(tmp_path / "good.json") == good


def test_committed_results_file():
    res = ls.load_results()
    if res is None:
        pytest.skip("no results/bench_linear.json")
    assert res["command"].startswith("python benchmarks/bench_linear.py")
    rows = [r for r in res["scaling"]["rows"] if not r["skipped"]]
    assert max(r["n"] for r in rows) >= 16384
    refit = ls.fit_slopes(res["scaling"]["rows"])
    assert refit["softmax"] == pytest.approx(res["scaling"]["slopes"]["softmax"])
    assert max(r["context"] for r in res["generation"]["rows"]) >= 8192


# --- slopes over the large-n part and between neighbours ---------------------------------------------------------


def power_law_rows(sizes, p, fixed_at=None, scale_ms=1000.0):
    """linear: t = a + b n^p, with b so that the work at the largest size takes scale_ms and a fixed per-call cost a
    equal to the work at n = fixed_at (0 when None); softmax the same with exponent 2."""
    top = max(sizes)
    rows = []
    for n in sizes:
        row = {"n": n, "skipped": False}
        for kind, q in (("softmax", 2.0), ("linear", p)):
            fixed = 0.0 if fixed_at is None else scale_ms * (fixed_at / top) ** q
            row[f"{kind}_ms"] = fixed + scale_ms * (n / top) ** q
        rows.append(row)
    return rows


def test_upper_half_from():
    assert ls.upper_half_from([256 * 2**k for k in range(7)]) == 4096  # 7 sizes: the largest 3
    assert ls.upper_half_from([1, 2, 3, 4]) == 3
    assert ls.upper_half_from([5, 1]) == 1  # two sizes: both
    assert ls.upper_half_from([2, 1, 1]) == 1  # distinct sizes count
    assert ls.upper_half_from([7]) is None and ls.upper_half_from([]) is None


@pytest.mark.parametrize("p", [0.8, 1.0, 1.5, 2.0])
def test_large_n_slope_recovers_a_known_exponent(p):
    """Exact power law: the upper-half fit is p exactly. With a fixed per-call cost equal to the work at n = 256
    (4^p times the work at the smallest size, 64), the fit over all sizes is pulled below p, the upper-half fit
    stays within 0.02 of p, and it is the closer of the two."""
    sizes = [2**k for k in range(6, 19)]  # 64 .. 262,144
    exact = ls.large_n_slopes(power_law_rows(sizes, p))
    assert exact["fit_from"] == 2**13
    assert exact["linear"] == pytest.approx(p, abs=1e-9) and exact["softmax"] == pytest.approx(2.0, abs=1e-9)
    assert math.exp(exact["linear_intercept"]) * (2**18) ** p == pytest.approx(1000.0)
    rows = power_law_rows(sizes, p, fixed_at=256)
    overall = ls.fit_slopes(rows, fit_from=64)["linear"]
    large = ls.large_n_slopes(rows)["linear"]
    assert p - 0.02 < large < p  # a fixed cost only ever flattens the curve
    assert overall < large
    assert p - overall > 5 * (p - large)


def test_large_n_slopes_with_too_few_sizes():
    rows = power_law_rows([64], 1.0)
    assert ls.large_n_slopes(rows) == {
        "fit_from": None,
        "softmax": None,
        "softmax_intercept": None,
        "linear": None,
        "linear_intercept": None,
    }
    rows = power_law_rows([64, 128], 1.0) + [{"n": 256, "softmax_ms": None, "linear_ms": None, "skipped": True}]
    assert ls.large_n_slopes(rows)["linear"] == pytest.approx(1.0)


def test_local_slopes_find_a_step():
    """A power law of exponent p with every time from n = 1,024 on doubled: the slope between neighbours is p except
    at the step, p + 1 there (2x n, 2^(p+1)x time); the view reports that pair as the steepest."""
    p, sizes = 1.0, [2**k for k in range(7, 14)]
    rows = power_law_rows(sizes, p)
    for r in rows:
        if r["n"] >= 1024:
            r["linear_ms"] *= 2
    rows.append({"n": 2**14, "softmax_ms": None, "linear_ms": None, "skipped": True})
    local = ls.local_slopes(rows, "linear")
    assert local[0] is None and local[-1] is None
    for r, s in zip(rows[1:-1], local[1:-1]):
        assert s == pytest.approx(p + 1 if r["n"] == 1024 else p)
    view = views.timing_view(rows)
    assert view.steepest == pytest.approx({"n0": 512, "n1": 1024, "slope": p + 1, "time_ratio": 4.0, "size_ratio": 2.0})
    assert view.skipped[-1] and view.ms["linear"][-1] is None and view.ratio[-1] is None
    assert view.last["n"] == 2**13
    assert view.slopes == ls.fit_slopes(rows)  # recomputed when no committed fit is given


def test_committed_timing_view_against_numpy():
    """The page's three readings of the committed times, against numpy's own least squares and log ratios."""
    res = ls.load_results()
    if res is None:
        pytest.skip("no results/bench_linear.json")
    rows = res["scaling"]["rows"]
    view = views.timing_view(rows, res["scaling"]["slopes"])
    done = [r for r in rows if not r["skipped"]]
    upper = done[-(len(done) // 2) :]
    for kind in ("softmax", "linear"):
        n = np.array([r["n"] for r in upper], dtype=float)
        t = np.array([r[f"{kind}_ms"] for r in upper])
        assert view.large[kind] == pytest.approx(np.polyfit(np.log(n), np.log(t), 1)[0])
        expected = [
            math.log(b[f"{kind}_ms"] / a[f"{kind}_ms"]) / math.log(b["n"] / a["n"]) for a, b in zip(done, done[1:])
        ]
        assert view.local[kind][1 : len(done)] == pytest.approx(expected)
    assert view.slopes == res["scaling"]["slopes"]


def test_generation_on_devices_says_where_the_rnn_form_wins_on_each():
    def run(name, rows):
        keys = ("context", "rnn_tok_s", "kv_cache_tok_s")
        return {"device_name": name, "generation": {"rows": [dict(zip(keys, r)) for r in rows]}}

    cpu = run("cpu", [(512, 20.0, 10.0), (1024, 20.0, 5.0), (4096, 20.0, 1.0)])
    gpu = run("gpu", [(512, 5.0, 9.0), (1024, 12.0, 10.0), (2048, 1.0, 2.0)])
    both = views.generation_on_devices(cpu, gpu)
    assert both.contexts == [512, 1024] and both.cpu_rnn_faster == [512, 1024] and both.gpu_rnn_faster == [1024]
    assert both.conclusion_changes and both.gpu["context"] == 1024 and both.gpu_rnn_range == (5.0, 12.0)
    assert both.context_growth == 2.0  # 512 to 1024: the context grew 2-fold
    assert not views.generation_on_devices(cpu, cpu).conclusion_changes
    assert views.generation_on_devices(cpu, None) is None and views.generation_on_devices(cpu, run("g", [])) is None


def test_the_paper_lengths_ratios_and_their_ranges_by_hand():
    rows = [
        {"context": 784, "rnn_tok_s": 1000.0, "kv_cache_tok_s": 200.0, "no_cache_tok_s": 10.0},  # 5x, 100x
        {"context": 3072, "rnn_tok_s": 900.0, "kv_cache_tok_s": 100.0, "no_cache_tok_s": 3.0},  # 9x, 300x
        {"context": 512, "rnn_tok_s": 1.0, "kv_cache_tok_s": 1.0, "no_cache_tok_s": 1.0},  # not a paper length
    ]
    view = views.paper_lengths(rows)
    assert [(r.context, r.paper) for r in view.rows] == [(784, 317), (3072, 4462)]
    assert (view.kv_lo, view.kv_hi, view.none_lo, view.none_hi) == (5.0, 9.0, 100.0, 300.0)
    assert views.paper_lengths(rows[2:]) is None  # no paper length measured: the page leaves the part out
