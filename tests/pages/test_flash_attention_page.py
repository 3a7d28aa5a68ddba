"""The /flash-attention page headless: block sizes larger than n and uneven, fully masked rows, the check against
SDPA shown, and the traffic table for an extreme on-chip memory."""

from core import flash_attention as fa
from tests.apptest_helpers import figure_bytes, open_view, shown_text

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it


def test_default_view_says_the_tiles_equal_sdpa():
    at = open_view("flash_attention")
    text = shown_text(at)
    assert "Equal up to float64 rounding" in text
    assert "does not divide n = 10" in text  # Br = 4 and Bc = 3 leave short last tiles
    assert len(at.get("plotly_chart")) == 4 and figure_bytes(at) < 1_000_000


def test_blocks_larger_than_n_and_fully_masked_rows_are_explained():
    at = open_view("flash_attention", {"n": "6", "br": "40", "bc": "64", "causal": "1", "pad": "2"})
    text = shown_text(at)
    assert "Br = 40 is larger than n = 6" in text and "Bc = 64 is larger than n = 6" in text
    assert "Queries 0, 1 see no key at all" in text and "zeros" in text
    assert "Equal up to float64 rounding" in text


def test_traffic_numbers_on_the_page_are_the_counts():
    at = open_view("flash_attention", {"tn": "4096", "td": "64", "sram": "192", "bytes": "2"})
    view = fa.traffic_view(4096, 64, 192 * 1024 // 2)
    table = at.dataframe[1].value
    assert f"{view.naive.total:,}" in table.iloc[0].tolist() and f"{view.flash1.total:,}" in table.iloc[1].tolist()
    ratio = f"{view.naive.total / view.flash1.total:,.1f}"
    assert f"**{ratio}×**" in shown_text(at)


def test_theorem_2_bound_is_not_printed_outside_its_range():
    at = open_view("flash_attention", {"tn": "16", "td": "64", "sram": "4096", "bytes": "2"})
    text = shown_text(at)
    assert "Theorem 2 is stated for d ≤ M ≤ nd" in text and "nd = 1,024" in text
    assert at.dataframe[1].value.iloc[1].tolist()[-1] == "— (outside d ≤ M ≤ nd)"
    inside = open_view("flash_attention", {"tn": "4096", "td": "64", "sram": "192", "bytes": "2"})
    assert "Theorem 2 is stated" not in shown_text(inside)


def test_the_papers_claim_stands_beside_the_committed_h200_figures():
    from core import flash_attention_measured as fm

    at = open_view("flash_attention")
    text = shown_text(at)
    like = next(r for r in fm.measured_speedups(fm.committed_gpu_run()) if (r.seq_len, r.head_dim) == (4096, 128))
    assert "FlashAttention **2–4× faster**" in text and "B = 4, H = 32, N = 4,096, D = 128" in text
    assert f"flash {like.flash_ms:.2f} ms against {like.naive_ms:.2f} ms, **{like.flash_speedup:.1f}×**, within" in text
    assert "In float32 (N = 4,096, D = 64)" in text and "NVIDIA H200" in text
    table = next(d for d in at.dataframe if "flash speed-up" in d.value.columns).value
    assert "cannot run" in table["flash ms"].tolist()


def test_a_gpu_run_where_standard_attention_ran_out_of_memory_says_so(tmp_path, monkeypatch):
    from core import flash_attention_measured as fm
    from core import results
    from tests.core.test_flash_attention_measured import without_standard

    committed = fm.committed_gpu_run()
    flash = next(
        r["ms"] for r in committed["rows"] if (r["backend"], r["seq_len"], r["dtype"]) == ("flash", 16384, "float16")
    )
    monkeypatch.setattr(results, "RESULTS_DIR", tmp_path)
    words = {  # the sentence, and the standard column's cell for each status
        "en": ("Standard attention has no time at 3 of the 9 shapes", "out of memory", "no time recorded"),
        "ja": ("9 個の形のうち 3 個", "メモリ不足", "時間の記録なし"),
        "ko": ("9개의 형태 중 3개", "메모리 부족", "기록된 시간 없음"),
    }
    for status, cell in (("out of memory", 1), ("budget spent", 2)):  # one status the benchmark writes, one it may not
        results.save_result(tmp_path / f"{fm.GPU_RESULT}.json", {"cuda": without_standard(committed, 8192, status)})
        for lang, said in words.items():
            at = open_view("flash_attention", {"lang": lang})
            text = shown_text(at)
            assert said[0] in text and "NVIDIA H200" in text
            table = at.dataframe[-1].value  # shape, type, standard, flash, its speed-up, efficient, its speed-up
            long = table[table.iloc[:, 0].str.contains("N=16,384")]
            assert len(table) == 9 and len(long) == 3  # the shapes without a standard time stay, with their kernels
            assert set(long.iloc[:, 2]) == {said[cell]}
            assert lang == "en" or status not in table.to_string() + text  # never the run's English in ja, ko
            assert f"{flash:.2f}" in long.iloc[:, 3].tolist() and set(long.iloc[:, 4]) == set(long.iloc[:, 6]) == {"–"}
            assert "–" not in long.iloc[:, 5].tolist()  # the memory-efficient kernel's own time
