"""Memory of one server process with every model a page can load and the heaviest single runs done (issue 26):
what a Kubernetes replica must be given (deploy/k8s/app.yaml requests and limits, compose.yaml's mem_limit).

    python benchmarks/memory_footprint.py        # -> results/memory_footprint.json (about a minute)

Resident memory (VmRSS) and its peak (VmHWM) of this process after each step, in the order a server meets them:
the libraries a page imports, MiniLM, SmolLM2, its logit lens on a 64-token text (the vocabulary-sized unembedding
is the peak), a 32-token generation, the MoE. One torch thread, as app/serving.py sets for the server.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LENS_TEXT = "The capital of France is Paris. The capital of Japan is Tokyo. The capital of Italy is " * 3


def memory_mib() -> dict:
    status = Path("/proc/self/status").read_text()  # kB (KiB) in /proc
    return {f"{k}_MiB": round(int(re.search(rf"{k}:\s+(\d+)", status).group(1)) / 1024, 1) for k in ("VmRSS", "VmHWM")}


def main() -> int:
    import torch

    torch.set_num_threads(1)
    from core.results import save_result
    from core.timing import machine_info

    steps = []

    def step(name: str, fn) -> None:
        t0 = time.perf_counter()
        error = None
        try:
            fn()
        except Exception as err:  # noqa: BLE001 - a broken step is recorded, the others are still measured
            error = f"{type(err).__name__}: {err}"[:200]
        steps.append({"step": name, "seconds": round(time.perf_counter() - t0, 2), **memory_mib()})
        if error:
            steps[-1]["error"] = error
        print(steps[-1], flush=True)

    loaded = {}
    step(
        "imports (streamlit, transformers, plotly)",
        lambda: [__import__(m) for m in ("streamlit", "plotly", "transformers")],
    )
    from core.models import registry

    step("MiniLM", lambda: loaded.setdefault("minilm", registry.RECORDS["minilm"].load()))
    step("SmolLM2", lambda: loaded.setdefault("smollm2", registry.RECORDS["smollm2"].load()))
    from core import kv_cache
    from core import logit_lens as lens

    step("SmolLM2 logit lens, 64 tokens", lambda: lens.logit_lens(loaded["smollm2"], LENS_TEXT))
    ids, _ = kv_cache.prompt_ids(loaded["smollm2"], "The cat sat on the mat because it was tired. Then it", 512)
    step("SmolLM2 generation, 32 tokens", lambda: kv_cache.generate(loaded["smollm2"], ids, max_new_tokens=32,
                                                                     temperature=0.0, top_k=0, seed=0, window=8,
                                                                     sinks=4))  # fmt: skip
    step("MoE", lambda: loaded.setdefault("moe", registry.RECORDS["moe"].load()))
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    result = {
        "command": "python benchmarks/memory_footprint.py",
        "machine": machine_info("cpu") | {"loadavg": [float(x) for x in load]},
        "steps": steps,
        "peak_mib": max(s["VmHWM_MiB"] for s in steps),
    }
    print("wrote", save_result(ROOT / "results" / "memory_footprint.json", result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
