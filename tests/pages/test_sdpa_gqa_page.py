"""/sdpa-gqa through AppTest: it renders from the committed results (and without them), the live button runs with a
tiny size, what the page states is the computed figure, and bad links are ignored."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app import i18n
from core.kv_cache import memory
from core.results import GPU_RUNS_DIR
from core.sdpa_gqa import backends as sb
from core.sdpa_gqa import configs as kvc
from tests.apptest_helpers import count_builds, figure_bytes, open_view
from tests.apptest_helpers import shown_text as shown

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it

MAX_VIEW_BYTES = 1_000_000
PAGE = "sdpa_gqa.py"
ROOT = Path(__file__).resolve().parents[2]


def open_page(file: str, params: dict | None = None, lang: str = "en") -> AppTest:
    return open_view(file, params, state={"lang": lang}, timeout=120)


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
    # the reasons are sentences: a static table wraps them (st.dataframe cut them at its edge)
    tables = " ".join(str(df.value.to_dict()) for df in at.table)
    assert "CUDA only" in tables
    assert figure_bytes(at) < MAX_VIEW_BYTES


def test_two_visitors_share_the_committed_runs_figures(monkeypatch):
    """The committed runs' bars are built once per process for every visitor (app/shared.py): building them again
    at every page run cost 35-45 ms a device."""
    from app.views.sdpa_gqa import backends as part

    built = count_builds(monkeypatch, part, "backend_figures")
    runs = [r for r in (sb.load_results() or {}).values() if not isinstance(r, str)]
    first, second = open_page(PAGE), open_page(PAGE)
    assert len(built) == len(runs) >= 1  # the second visitor's page drew the first one's figures
    specs = [[c.proto.spec for c in at.get("plotly_chart")] for at in (first, second)]
    assert specs[0] == specs[1] and len(specs[0]) >= 2 * len(runs)


def test_sdpa_page_shows_the_committed_gpu_run_beside_the_cpu():
    """The H200 run's numbers, read here from its JSON by hand: its table, its summary and the sentence beside the
    CPU's (a changed number in the file changes what the page must show)."""
    gpu = json.loads((ROOT / "results" / GPU_RUNS_DIR / "bench_sdpa.json").read_text())["cuda"]
    at = open_page("sdpa_gqa.py")
    text = shown(at)
    assert gpu["command"] in text and f"CUDA {gpu['cuda_version']}" in text
    table = next(df.value for df in at.dataframe if "B=2 H=16 n=16384 d=128 float16" in df.value.iloc[:, 0].tolist())
    big = [r for r in gpu["rows"] if (r["seq_len"], r["head_dim"], r["dtype"]) == (16384, 128, "float16")]
    ms = {r["backend"]: r["ms"] for r in big}
    shown_ms = table[table["shape"] == "B=2 H=16 n=16384 d=128 float16"].set_index("backend")["ms"]
    assert {b: shown_ms[b] for b in ms} == {b: f"{v:,.2f}" for b, v in ms.items()}
    assert (round(ms["cudnn"], 2), round(ms["flash"], 2), round(ms["naive"], 2)) == (6.85, 13.05, 33.88)  # as filed
    best = min((b for b in ms if b != "naive"), key=ms.get)
    assert f"by **{ms['naive'] / ms[best]:,.1f}×** on the GPU ({best}, B=2 H=16 n=16384 d=128 float16)" in text
    assert "on the NVIDIA H200, 4 (flash, efficient, cudnn, math)" in text
    assert "has no CPU implementation" in text


def test_sdpa_page_without_results(monkeypatch, tmp_path):
    monkeypatch.setattr(sb, "RESULT_NAME", tmp_path / "none.json")
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
    total = memory.kv_cache_bytes(c.layers, c.kv_heads, c.head_dim, 32768, 2, 2)
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
    assert f"= **{memory.kv_cache_bytes(2, 1, 8, 10, 0.5):,.0f} bytes" in shown(at)


def test_sdpa_page_bad_links_are_ignored():
    at = open_page("sdpa_gqa.py", {"cfg": "gpt-5", "ctx": "-1", "dtype": "float128", "sd_n": "1e9"})
    assert "Ignored link parameters" in shown(at)


# --- languages ----------------------------------------------------------------------------------------------------


# Every key's format fields in every language: tests/app/test_i18n.py (all sections at once).


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_page_renders_in_japanese_and_korean(lang):
    at = open_page(PAGE, {"causal": "1", "cfg": "mistral-7b"}, lang=lang)
    title = i18n.text(lang, PAGE.removesuffix(".py"), "title")
    assert title in [t.value for t in at.title]


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_the_backends_status_is_in_the_readers_words(lang):
    """The status column read 'ok' and 'unavailable' on the Japanese and Korean pages (the run's own codes)."""
    if sb.load_results() is None:
        pytest.skip("no results/bench_sdpa.json")
    at = open_page("sdpa_gqa.py", lang=lang)
    column = i18n.text(lang, "sdpa_gqa", "col_status")
    shown_statuses = {v for df in at.dataframe if column in df.value.columns for v in df.value[column]}
    words = {i18n.text(lang, "sdpa_gqa", f"status_{k}") for k in ("ok", "unavailable", "out_of_memory", "failed")}
    assert shown_statuses and shown_statuses <= words, shown_statuses


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_how_the_peak_was_measured_is_in_the_readers_words(lang):
    """The committed run's caption named its memory method in English on the Japanese and Korean pages ('process
    peak RSS delta (VmHWM after reset via /proc/self/clear_refs)')."""
    if sb.load_results() is None:
        pytest.skip("no results/bench_sdpa.json")
    text = shown(open_page("sdpa_gqa.py", lang=lang))
    assert "process peak RSS delta" not in text and "max_memory_allocated delta" not in text
    assert i18n.text(lang, "sdpa_gqa", "memory_rss") in text


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_the_reason_the_page_states_itself_is_in_the_readers_words(lang):
    """Why efficient and cudnn cannot run on a CPU is the page's own sentence (sb.CPU_ONLY_REASON), not PyTorch's
    message: it stood in English on the Japanese and Korean pages."""
    if sb.load_results() is None:
        pytest.skip("no results/bench_sdpa.json")
    at = open_page("sdpa_gqa.py", lang=lang)
    column = i18n.text(lang, "sdpa_gqa", "col_reason")
    reasons = {v for df in at.table if column in df.value.columns for v in df.value[column] if v}
    assert i18n.text(lang, "sdpa_gqa", "reason_cpu_only") in reasons and sb.CPU_ONLY_REASON not in reasons, reasons
