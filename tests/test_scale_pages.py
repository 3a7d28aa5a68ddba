"""The two "speed and scale" pages through AppTest: they render from the committed results (and without them), the
live buttons run with tiny sizes, what the pages state is the computed figure, and bad links are ignored."""

import json
import string
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app import i18n
from core import kv_cache as kvc
from core import linear_scaling as ls
from core import sdpa_backends as sb
from core.linear_attention import associativity_costs
from tests.apptest_helpers import figure_bytes, open_view
from tests.apptest_helpers import shown_text as shown

MAX_VIEW_BYTES = 1_000_000


ROOT = Path(__file__).resolve().parents[1]
PAGES = ["linear_attention.py", "sdpa_gqa.py"]


def open_page(file: str, params: dict | None = None, lang: str = "en") -> AppTest:
    return open_view(file, params, state={"lang": lang}, timeout=120)


def figure_titles(at: AppTest) -> list[str]:
    return [json.loads(e.proto.spec)["layout"].get("title", {}).get("text", "") for e in at.get("plotly_chart")]


# --- linear attention ----------------------------------------------------------------------------------------


def test_linear_page_states_the_counted_costs():
    at = open_page("linear_attention.py", {"n": "16384", "d": "128"})
    c = associativity_costs(16384, 128)
    text = shown(at)
    assert f"takes {c['quadratic']['multiply_adds']:,} multiply-adds" in text
    assert f"from n = {ls.associativity_crossover(128):,} on" in text
    assert figure_bytes(at) < MAX_VIEW_BYTES
    assert not at.warning, [w.value for w in at.warning]


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
    r = ls.implied_matrices(
        int(params["im_n"]),
        int(params["im_d"]),
        float(params["spread"]),
        params.get("causal") == "1",
        int(params.get("seed", 0)),
    )
    assert f"softmax {r['entropy_softmax']:.3f} nats, linear {r['entropy_linear']:.3f} nats" in shown(at)
    assert figure_bytes(at) < MAX_VIEW_BYTES


def test_linear_page_shows_committed_slopes():
    res = ls.load_results()
    if res is None:
        pytest.skip("no results/bench_linear.json")
    at = open_page("linear_attention.py")
    s = res["scaling"]["slopes"]
    text = shown(at)
    assert f"softmax grows with slope {s['softmax']:.2f}, linear with slope {s['linear']:.2f}" in text
    assert res["command"] in text


def test_linear_page_without_results(monkeypatch, tmp_path):
    monkeypatch.setattr(ls, "RESULTS_PATH", tmp_path / "none.json")
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

    monkeypatch.setattr(ls, "generation_table", table)
    at = open_page("linear_attention.py", {"max_ctx": "256"})
    at.button(key="run-gen").click().run()
    assert not at.exception, [e.value for e in at.exception]
    live = at.dataframe[-1].value
    assert list(live.iloc[0, 1:4]) == ["900.00", "300.00", "skipped (time limit)"]


def test_linear_page_bad_links_are_ignored():
    at = open_page(
        "linear_attention.py",
        {"n": "3", "max_n": "999999", "spread": "nan", "im_n": "1000", "causal": "yes", "max_ctx": "<b>x</b>"},
    )
    assert "Ignored link parameters" in shown(at)


# --- SDPA backends and GQA -------------------------------------------------------------------------------------


def test_sdpa_page_shows_committed_results_and_cuda_note():
    res = sb.load_results()
    if res is None:
        pytest.skip("no results/bench_sdpa.json")
    at = open_page("sdpa_gqa.py")
    text = shown(at)
    assert res["cpu"]["command"] in text
    if isinstance(res.get("cuda"), str):
        assert res["cuda"] in text
    tables = " ".join(str(df.value.to_dict()) for df in at.dataframe)
    assert "CUDA only" in tables
    assert figure_bytes(at) < MAX_VIEW_BYTES


def test_sdpa_page_without_results(monkeypatch, tmp_path):
    monkeypatch.setattr(sb, "RESULTS_PATH", tmp_path / "none.json")
    at = open_page("sdpa_gqa.py")
    assert "No results file yet" in shown(at)


def test_sdpa_page_live_run_tiny():
    at = open_page("sdpa_gqa.py", {"sd_n": "128", "sd_causal": "1"})
    at.button(key="run-sdpa").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Measured just now" in shown(at)
    live = [df.value for df in at.dataframe if "max |out − naive|" in df.value.columns]
    assert any((df["status"] == "ok").sum() >= 3 for df in live)  # naive, flash, math on CPU


@pytest.mark.parametrize("cfg", list(kvc.PRESETS))
def test_kv_calculator_states_the_formula(cfg):
    at = open_page("sdpa_gqa.py", {"cfg": cfg, "ctx": "32768", "batch": "2", "dtype": "float16"})
    c = kvc.PRESETS[cfg]
    total = kvc.kv_cache_bytes(c.layers, c.kv_heads, c.head_dim, 32768, 2, 2)
    text = shown(at)
    assert f"= **{total:,.0f} bytes" in text
    assert c.source in text
    assert "GQA is MHA with repeated K/V" in text
    if c.sliding_window:
        assert "sliding_window = 4,096" in text


def test_kv_calculator_custom_and_bad_heads():
    at = open_page("sdpa_gqa.py", {"cfg": "custom", "layers": "2", "heads": "6", "kv": "4", "hd": "8"})
    assert "must be a multiple" in shown(at)
    at = open_page(
        "sdpa_gqa.py",
        {"cfg": "custom", "layers": "2", "heads": "6", "kv": "1", "hd": "8", "ctx": "10", "dtype": "int4"},
    )
    assert f"= **{kvc.kv_cache_bytes(2, 1, 8, 10, 0.5):,.0f} bytes" in shown(at)


def test_sdpa_page_bad_links_are_ignored():
    at = open_page("sdpa_gqa.py", {"cfg": "gpt-5", "ctx": "-1", "dtype": "float128", "sd_n": "1e9"})
    assert "Ignored link parameters" in shown(at)


# --- languages ----------------------------------------------------------------------------------------------------


def page_text(file: str) -> dict:
    """{key: {lang: text}} of the page's catalog section."""
    topic = file.removesuffix(".py")
    return {
        key: {lang: i18n.text(lang, topic, key) for lang in i18n.languages()}
        for key in i18n.section("en", topic)
        if i18n.has(topic, key)
    }


@pytest.mark.parametrize("file", PAGES)
def test_every_language_fills_the_same_numbers(file):
    """A translation that drops or renames a {placeholder} would hide a number or crash the page in that language."""
    for key, entry in page_text(file).items():
        fields = {lang: {f[1] for f in string.Formatter().parse(s) if f[1]} for lang, s in entry.items()}
        assert fields["ja"] == fields["en"] == fields["ko"], (key, fields)


@pytest.mark.parametrize("lang", ["ja", "ko"])
@pytest.mark.parametrize("file", PAGES)
def test_pages_render_in_japanese_and_korean(file, lang):
    at = open_page(file, {"causal": "1", "cfg": "mistral-7b"}, lang=lang)
    title = page_text(file)["title"][lang]
    assert title in [t.value for t in at.title]
