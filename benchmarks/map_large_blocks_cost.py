"""What mapping every large block on its own costs a model's pass (core/timing.py map_large_blocks, which the server
sets so a run's resident peak is its tensors' and what it held goes back to the system when it ends).

Each mode runs in its own fresh process (the setting is per process), alternated `--rounds` times; the figure is
the median of 7 timed passes after 2 warm-up passes, one torch thread, SmolLM2 and MiniLM at 128 and 512 tokens.

    python benchmarks/map_large_blocks_cost.py [--rounds 2] [--out results/map_large_blocks_cost.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = (("smollm2", 128), ("smollm2", 512), ("minilm", 128), ("minilm", 512))
TEXT = "The cat sat on the mat because it was tired, and the dog watched it from the door. " * 40


def one_process(mode: str) -> dict[str, float]:
    import torch

    from core import timing
    from core.models import registry

    if mode == "mapped":
        timing.map_large_blocks()
    torch.set_num_threads(1)
    out = {}
    for key, n in CASES:
        model = registry.shared(key)
        batch = model.tokenize([TEXT], max_tokens=n)
        for _ in range(2):
            model.run(batch)
        times = []
        for _ in range(7):
            start = time.perf_counter()
            model.run(batch)
            times.append(time.perf_counter() - start)
        out[f"{key}@{n}"] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "results" / "map_large_blocks_cost.json"))
    parser.add_argument("--mode", choices=("default", "mapped"), help=argparse.SUPPRESS)  # the child's side
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(one_process(args.mode)))
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, float]]] = {"default": [], "mapped": []}
    for _ in range(args.rounds):
        for mode in runs:
            done = subprocess.run(
                [sys.executable, __file__, "--mode", mode], env=env, capture_output=True, text=True, check=True
            )
            runs[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    cases = {}
    for key in runs["default"][0]:
        plain = statistics.median(r[key] for r in runs["default"])
        mapped = statistics.median(r[key] for r in runs["mapped"])
        cases[key] = {"default_s": round(plain, 4), "mapped_s": round(mapped, 4), "ratio": round(mapped / plain, 3)}
    result = {
        "command": " ".join(["python benchmarks/map_large_blocks_cost.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "rounds": args.rounds,
        "cases": cases,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    for key, row in cases.items():
        print(f"{key:14s} default {row['default_s']:.3f} s  mapped {row['mapped_s']:.3f} s  x{row['ratio']}")


if __name__ == "__main__":
    main()
