"""core/sdpa_gqa/views.py and viz/sdpa_gqa.py: the bar series and the summary are the benchmark rows regrouped
(checked against the rows themselves), the KV-cache view against the calculator's formula, and log axes carry
major ticks only (dtick on the figure's layout)."""

import pytest

from app import i18n
from core.sdpa_gqa import backends as sb
from core.sdpa_gqa import configs as kvc
from core.sdpa_gqa.views import MIB, backends_view, kv_cache_view, short_labels
from viz.sdpa_gqa import backend_figures, grouped_bars, kv_cache_figure


def t(key, /, **fmt):
    return i18n.text("en", "sdpa_gqa.figure", key, **fmt)


def row(backend, n, ms, peak, causal=False, status="ok", diff=1e-7):
    shape = sb.AttentionShape(1, 8, n, 64, causal=causal)
    return {
        "backend": backend,
        "batch": 1,
        "heads": 8,
        "seq_len": n,
        "head_dim": 64,
        "causal": causal,
        "dtype": "float32",
        "flops": shape.flops,
        "status": status,
        "ms": ms if status == "ok" else None,
        "peak_bytes": peak if status == "ok" else None,
        "memory_method": "rss" if status == "ok" else None,
        "max_abs_diff_vs_naive": None if backend == "naive" or status != "ok" else diff,
    }


ROWS = [
    row("naive", 512, 10.0, 40 * MIB),
    row("flash", 512, 4.0, 0),
    row("efficient", 512, None, None, status="unavailable"),
    row("naive", 1024, 50.0, 160 * MIB),
    row("flash", 1024, 20.0, 2 * MIB, diff=3e-7),
    row("math", 1024, 45.0, 150 * MIB, diff=2e-7),
]


def test_backends_view_regroups_the_rows():
    v = backends_view(ROWS)
    assert v.categories == ["n=512", "n=1024"]
    assert v.ms == {"naive": [10.0, 50.0], "flash": [4.0, 20.0], "math": [None, 45.0]}
    assert v.peak_mib["flash"] == [None, 2.0]  # 0 B: no bar on a log axis
    assert v.peak_bytes["flash"] == [0, 2 * MIB]
    assert v.labels[2] == sb.AttentionShape(1, 8, 512, 64).label()
    assert v.summary == {
        "shape": sb.AttentionShape(1, 8, 1024, 64).label(),
        "best": "flash",
        "best_ms": 20.0,
        "naive_ms": 50.0,
        "speedup": 2.5,
        "words": "backends_result",
        "ratio": 2.5,
        "naive_bytes": 160 * MIB,
        "best_bytes": 2 * MIB,
        "diff": 3e-7,
    }
    assert v.memory_method == "rss"
    assert backends_view([r for r in ROWS if r["backend"] != "naive"]).summary is None
    assert backends_view([ROWS[2]]).shapes == []


def test_the_summary_says_so_when_the_naive_version_was_the_fastest():
    """A live run at a small shape can time the naive version ahead of every fused kernel: the sentence must not
    call it slower ('0.5x slower')."""
    rows = [
        row("naive", 256, 2.0, 1 * MIB),
        row("flash", 256, 3.0, 1 * MIB, diff=1e-7),
        row("math", 256, 5.0, 2 * MIB, diff=1e-7),
    ]
    s = backends_view(rows).summary
    assert (s["best"], s["words"], s["ratio"]) == ("flash", "backends_result_naive_faster", 1.5)
    en = i18n.text("en", "sdpa_gqa", s["words"], **{k: s[k] for k in ("shape", "best", "best_ms", "naive_ms", "diff")},
                   speedup=s["ratio"], naive_mem="1 MiB", best_mem="1 MiB")  # fmt: skip
    assert (
        "naive version is the fastest at 2.0 ms, 1.5× faster than the quickest fused backend, **flash**, at 3.0 ms"
        in en
    )
    assert "slower" not in en


def test_short_labels_name_only_what_differs():
    rows = [ROWS[0], row("naive", 512, 1.0, 1, causal=True)]
    assert list(short_labels(rows).values()) == ["n=512", "causal"]


def test_backend_figures_have_major_log_ticks():
    ms, mem = backend_figures(backends_view(ROWS), t)
    for fig in (ms, mem):
        assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick == 1
    # 4 .. 50 ms: labelled at 1, 10 and 100 only (minor 2, 5 labels confused a reader)
    assert ms.layout.yaxis.dtick == 1 and list(ms.layout.yaxis.range) == [0, 2]
    assert [tr.name for tr in ms.data] == ["naive", "flash", "math"]
    wide = grouped_bars(["a"], {"x": [0.01], "y": [5000.0]}, log_y=True)
    assert wide.layout.yaxis.dtick == 1


def test_committed_results_figures():
    res = sb.load_results()
    if res is None or not isinstance(res.get("cpu"), dict):
        pytest.skip("no committed CPU run")
    v = backends_view(res["cpu"]["rows"])
    ok = [r for r in res["cpu"]["rows"] if r["status"] == "ok"]
    assert sum(x is not None for xs in v.ms.values() for x in xs) == len(ok)
    for fig in backend_figures(v, t):
        assert fig.layout.yaxis.dtick == 1


@pytest.mark.parametrize("cfg", list(kvc.PRESETS))
def test_kv_cache_view_is_the_formula(cfg):
    c = kvc.PRESETS[cfg]
    v = kv_cache_view(c, 32768, 2, "float16")
    assert v.total == 2 * c.layers * c.kv_heads * c.head_dim * 32768 * 2 * 2
    assert v.per_token == 2 * c.layers * c.kv_heads * c.head_dim * 2
    assert [r["bytes"] / 1024**3 for r in v.variants] == v.variant_gib
    if c.sliding_window:
        assert v.window_positions == c.sliding_window and v.windowed == v.total * c.sliding_window / 32768
    else:
        assert v.window_positions is None and v.windowed is None
    assert v.check["max_abs_diff_repeated"] < 1e-6
    fig = kv_cache_figure(v, t)
    assert fig.layout.yaxis.type == "linear"
    assert list(fig.data[0].x)[[r["configured"] for r in v.variants].index(True)].endswith(t("this_model"))
