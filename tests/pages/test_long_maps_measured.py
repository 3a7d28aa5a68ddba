"""/long-maps' measured part: the exact maps' committed timings beside one SDPA forward, on this machine's CPU and on
the H200, numbers read here from the JSON files by hand (a changed number in a file changes what the page must show),
and the GPU targets' verdicts."""

import json
from pathlib import Path

from core.results import GPU_RUNS_DIR
from tests.apptest_helpers import assert_no_exception, run_view, shown_text

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _rows(run: dict) -> dict[tuple, dict]:
    return {(r["path"], r["seq_len"], r["causal"]): r for part in ("target", "sizes") for r in run[part]["rows"]}


def test_the_exact_maps_timings_on_the_gpu_beside_the_cpu():
    gpu = _rows(json.loads((RESULTS / GPU_RUNS_DIR / "bench_pooled.json").read_text())["cuda"])
    cpu = _rows(json.loads((RESULTS / "bench_pooled.json").read_text())["cpu"])
    filed = {  # the figures: (Triton ms, cuDNN ms) by (n, causal)
        (65_536, False): (422.8, 113.8),
        (65_536, True): (223.1, 58.6),
        (131_072, True): (734.0, 246.5),
        (16_384, True): (18.3, 3.4),
    }
    for (n, causal), (triton, cudnn) in filed.items():
        assert round(gpu["pooled/triton", n, causal]["ms"], 1) == triton
        assert round(gpu["sdpa/cudnn", n, causal]["ms"], 1) == cudnn
    at = run_view("long-maps", params={"src": "random"})
    assert_no_exception(at)
    text = shown_text(at)
    for n, causal, target in ((65_536, False, 1.5), (65_536, True, 1.5), (131_072, True, 1.3)):
        t, c = gpu["pooled/triton", n, causal], gpu["sdpa/cudnn", n, causal]
        case = f"at {n:,}{' causal' if causal else ''}, {t['ms']:,.1f} ms against cuDNN's {c['ms']:,.1f} ms"
        assert f"{case}, **{t['ms'] / c['ms']:.2f}×** (target {target:g}×, not met)" in text
    most = max(r["peak_bytes"] for k, r in gpu.items() if k[0] == "pooled/triton")
    assert f"at most {most / 2**20:.2f} MiB (target 256.00 MiB, met)" in text
    # static tables, their cells and headers wrapped to the page's width (st.dataframe scrolled sideways in ja, ko)
    tables = [df.value for df in at.table if "maps ÷ SDPA" in df.value.columns]
    assert len(tables) == 2  # the CPU's, then the GPU's
    on_gpu = tables[1].set_index(["exact maps", "shape (B = 1)"])
    short = on_gpu.loc[("pooled/triton", "H=32 n=16,384 d=128 bfloat16 causal")]
    r16 = gpu["pooled/triton", 16_384, True]
    ratio = r16["ms"] / gpu["sdpa/cudnn", 16_384, True]["ms"]
    assert (short["ms"], short["maps ÷ SDPA"]) == (f"{r16['ms']:,.1f}", f"{ratio:,.2f}×")
    on_cpu = tables[0].set_index(["exact maps", "shape (B = 1)"])
    r8 = cpu["pooled/torch", 8192, False]
    assert on_cpu.loc[("pooled/torch", "H=8 n=8,192 d=64 float32"), "ms"] == f"{r8['ms']:,.1f}"
    assert "NVIDIA H200" in text and f"results/{GPU_RUNS_DIR}/README.md" in text
