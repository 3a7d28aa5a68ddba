"""/linear-attention through AppTest: it renders from the committed results (and without them), the live buttons run
with tiny sizes, what the page states is the computed figure (costs, entropies, the three slope readings, the exp
kernel's convergence), and bad links are ignored."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app import i18n
from core.linear_attention import associativity_costs, measure
from core.linear_attention import views as lviews
from core.linear_attention.exp_kernel import exp_kernel_view
from core.results import GPU_RUNS_DIR
from tests.apptest_helpers import figure_bytes, figure_titles, open_view
from tests.apptest_helpers import shown_text as shown

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it

MAX_VIEW_BYTES = 1_000_000
PAGE = "linear_attention.py"


def open_page(file: str, params: dict | None = None, lang: str = "en") -> AppTest:
    return open_view(file, params, state={"lang": lang}, timeout=120)


# --- linear attention ----------------------------------------------------------------------------------------


def test_linear_page_states_the_counted_costs():
    at = open_page("linear_attention.py", {"n": "16384", "d": "128"})
    c = associativity_costs(16384, 128)
    text = shown(at)
    assert f"takes {c['quadratic']['multiply_adds']:,} multiply-adds" in text
    quad, lin = c["quadratic"]["multiply_adds"], c["linear"]["multiply_adds"]
    assert f"{lin:,} and holds {c['linear']['intermediate_numbers']:,}: {quad / lin:,.1f}× fewer operations" in text
    assert f"from n = {lviews.associativity_crossover(128):,} on" in text
    assert figure_bytes(at) < MAX_VIEW_BYTES
    assert not at.warning, [w.value for w in at.warning]


def test_linear_page_says_which_order_is_cheaper_below_the_crossover():
    """At n = 16 and d = 256 (both offered) the d x d order takes 16x the multiply-adds of the n x n one: the page
    says the n x n order is the cheaper there, never '0.1x fewer'."""
    c = associativity_costs(16, 256)
    quad, lin = c["quadratic"]["multiply_adds"], c["linear"]["multiply_adds"]
    assert lin > 10 * quad
    text = shown(open_page("linear_attention.py", {"n": "16", "d": "256"}))
    assert f"here the n × n order takes {lin / quad:,.1f}× fewer operations" in text
    assert f"{quad / lin:,.1f}× fewer" not in text


@pytest.mark.parametrize(
    "params",
    [
        {"im_n": "48", "spread": "4.0", "causal": "1", "seed": "9999", "im_d": "64"},
        {"im_n": "2", "spread": "0.25", "im_d": "4"},
    ],
    ids=["big", "small"],
)
def test_linear_page_implied_matrices(params):
    at = open_page("linear_attention.py", params)
    r = lviews.implied_matrices(
        int(params["im_n"]),
        int(params["im_d"]),
        float(params["spread"]),
        params.get("causal") == "1",
        int(params.get("seed", 0)),
    )
    assert f"softmax {r['entropy_softmax']:.3f} nats, linear {r['entropy_linear']:.3f} nats" in shown(at)
    assert figure_bytes(at) < MAX_VIEW_BYTES


def test_linear_page_shows_committed_slopes():
    res = measure.load_results()
    if res is None:
        pytest.skip("no results/bench_linear.json")
    at = open_page("linear_attention.py")
    s = res["scaling"]["slopes"]
    text = shown(at)
    assert f"softmax grows with slope {s['softmax']:.2f}, linear with slope {s['linear']:.2f}" in text
    assert res["command"] in text
    view = lviews.timing_view(res["scaling"]["rows"], s)
    big, step = view.large, view.steepest
    assert (
        f"(n ≥ {big['fit_from']:,}, the dashed lines): softmax {big['softmax']:.2f}, linear {big['linear']:.2f}" in text
    )
    assert (
        f"from n = {step['n0']:,} to {step['n1']:,} ({step['size_ratio']:,.0f}× n, local slope {step['slope']:.2f})"
        in text
    )
    local = next(df.value for df in at.dataframe if "linear slope from previous n" in df.value.columns)  # timing table
    assert list(local["linear slope from previous n"]) == [
        "" if v is None else f"{v:.2f}" for v in view.local["linear"]
    ]


def test_linear_page_says_where_the_gpu_changes_the_conclusion():
    """The H200's generation run beside the CPU's, numbers read here from both JSON files by hand: on the CPU the RNN
    form beats the KV cache at every context, on the GPU the KV cache wins at every one, and the page says so."""
    results = Path(__file__).resolve().parents[2] / "results"
    gpu = {
        r["context"]: r
        for r in json.loads((results / GPU_RUNS_DIR / "bench_linear.json").read_text())["generation"]["rows"]
    }
    cpu = {r["context"]: r for r in json.loads((results / "bench_linear.json").read_text())["generation"]["rows"]}
    at8k, cpu8k = gpu[8192], cpu[8192]
    assert (round(at8k["kv_cache_tok_s"]), round(at8k["rnn_tok_s"]), round(at8k["no_cache_tok_s"])) == (3873, 2161, 70)
    assert all(r["kv_cache_tok_s"] > r["rnn_tok_s"] for r in gpu.values())  # as filed: 512 to 8,192
    assert all(r["rnn_tok_s"] > r["kv_cache_tok_s"] for r in cpu.values())
    at = open_page("linear_attention.py")
    text = shown(at)
    assert "Committed results measured on a GPU (NVIDIA H200)" in text
    assert (
        f"at 5 of the 5 contexts measured (512 to 8,192; at 8,192: {cpu8k['rnn_tok_s']:,.0f} against "
        f"{cpu8k['kv_cache_tok_s']:,.0f}). On the NVIDIA H200 it did at 0 of them: there the KV cache was faster "
        f"(at 8,192: {at8k['kv_cache_tok_s']:,.0f} against {at8k['rnn_tok_s']:,.0f} tokens/s)" in text
    )
    # each run's last context compared the right way round: the cache slower on the CPU, faster on the GPU
    assert f"({cpu8k['rnn_tok_s'] / cpu8k['kv_cache_tok_s']:,.2f}× slower than the RNN form)" in text
    assert f"({at8k['kv_cache_tok_s'] / at8k['rnn_tok_s']:,.2f}× faster than the RNN form)" in text
    assert text.count("slower than the RNN form") == 1
    rnn = [r["rnn_tok_s"] for r in gpu.values()]
    assert f"RNN form stayed between {min(rnn):,.0f} and {max(rnn):,.0f} tokens/s" in text
    gpu_table = [df.value for df in at.dataframe if "RNN form (linear)" in df.value.columns][1]  # after the CPU's
    assert gpu_table["softmax + KV cache"].tolist() == [f"{gpu[c]['kv_cache_tok_s']:,.2f}" for c in sorted(gpu)]
    assert gpu_table["RNN form (linear)"].tolist() == [f"{gpu[c]['rnn_tok_s']:,.2f}" for c in sorted(gpu)]


@pytest.mark.parametrize("params", [{}, {"ek_d": "16", "ek_spread": "1.5"}], ids=["default", "large-scores"])
def test_linear_page_says_exp_factors_through_infinite_features(params):
    at = open_page("linear_attention.py", params)
    text = shown(at)
    assert "exp does not factor" not in text
    assert "only through a feature map with infinitely many coordinates" in text
    v = exp_kernel_view(int(params.get("ek_d", 4)), float(params.get("ek_spread", 1.0)))
    assert f"scores q·k/√d up to {v.largest_score:.2f} in size" in text
    if v.order_needed is not None:
        count = v.taylor_counts[v.order_needed]
        assert f"within {v.target:g} from order {v.order_needed} on, with {count:,} coordinates" in text
    assert f"{v.random_counts[-1]:,} random features are still {v.random_error[-1]:.2g} off" in text


def test_linear_page_without_results(monkeypatch, tmp_path):
    monkeypatch.setattr(measure, "RESULT_NAME", tmp_path / "none.json")
    at = open_page("linear_attention.py")
    assert "No results file yet" in shown(at)


def test_linear_page_live_runs_tiny():
    at = open_page("linear_attention.py", {"max_n": "512", "max_ctx": "256"})
    at.button(key="run-timing").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.button(key="run-gen").click().run()
    assert not at.exception, [e.value for e in at.exception]
    titles = figure_titles(at)
    assert sum("Attention time against n" in t for t in titles) >= 1
    assert sum("Generation speed" in t for t in titles) >= 1
    assert "Measured just now" in shown(at)
    assert figure_bytes(at) < MAX_VIEW_BYTES


def test_linear_page_marks_a_generation_mode_skipped_for_time(monkeypatch):
    """A mode the deadline rule did not start shows as skipped in the live table, not as a number or a gap."""

    def table(contexts, **kwargs):
        return [
            {
                "context": 256,
                "skipped": False,
                "rnn_tok_s": 900.0,
                "rnn_steps": 16,
                "rnn_skipped": False,
                "kv_cache_tok_s": 300.0,
                "kv_cache_steps": 16,
                "kv_cache_skipped": False,
                "no_cache_tok_s": None,
                "no_cache_steps": 0,
                "no_cache_skipped": True,
                "rnn_over_kv_cache": 3.0,
                "kv_cache_over_no_cache": None,
            }
        ]

    monkeypatch.setattr(measure, "generation_table", table)
    at = open_page("linear_attention.py", {"max_ctx": "256"})
    at.button(key="run-gen").click().run()
    assert not at.exception, [e.value for e in at.exception]
    # the live generation table (the page shows other tables after it, e.g. the copy-task quality runs)
    live = next(d.value for d in at.dataframe if "900.00" in d.value.astype(str).to_numpy())
    assert list(live.iloc[0, 1:4]) == ["900.00", "300.00", "skipped (time limit)"]


def test_linear_page_bad_links_are_ignored():
    at = open_page(
        "linear_attention.py",
        {
            "n": "3",
            "max_n": "999999",
            "spread": "nan",
            "im_n": "1000",
            "causal": "yes",
            "max_ctx": "<b>x</b>",
            "ek_d": "3",
            "ek_spread": "1e9",
        },
    )
    assert "Ignored link parameters" in shown(at)


# --- languages ----------------------------------------------------------------------------------------------------


# Every key's format fields in every language: tests/test_i18n.py (all sections at once).


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_page_renders_in_japanese_and_korean(lang):
    at = open_page(PAGE, {"causal": "1", "cfg": "mistral-7b"}, lang=lang)
    title = i18n.text(lang, PAGE.removesuffix(".py"), "title")
    assert title in [t.value for t in at.title]


def test_bigbird_and_the_kernel_tricks_forward_use_are_named_with_their_numbers():
    from core.linear_attention.sparse import bigbird_scores

    text = shown(open_view("linear_attention", {"n": "4096"}, timeout=240))
    c = bigbird_scores(4096)
    assert "BigBird (Zaheer et al. 2020)" in text and f"{c.scores:,} of the {c.full:,} scores ({c.share:.1%})" in text
    assert "computes K(q, k) directly instead of φ(q)·φ(k)" in text
