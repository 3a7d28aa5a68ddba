"""Every GPU test and benchmark of this project in one call, within 10 minutes on one GPU.

    python scripts/gpu_check.py                  # on a machine with CUDA: runs everything below
    python scripts/gpu_check.py --dry-run        # anywhere: lists what it would run, runs nothing
    python scripts/gpu_check.py --out results/gpu-h100-2026-12-01

It runs, from the repository root with PYTHONPATH set to it, each step with its own time limit (the limits add up
to under 10 minutes; a step that would start after the total budget is left out and reported so):

    tests        the Triton kernels' tests, the SDPA backends' tests (the peak-memory bound on CUDA) and the
                 model-on-the-GPU test, with pytest
    pooled       benchmarks/bench_pooled.py --device cuda: the exact pooled maps against cuDNN at 16k, 64k, 128k
    sdpa         benchmarks/bench_sdpa.py --device cuda: every SDPA backend against the naive version
    material     the same at the study material's shape, B = 4, H = 32, N = 4,096, D = 128, float16 and float32
    linear       benchmarks/bench_linear.py --device cuda: generation tokens/s from 512 to 65,536 tokens of context

Everything lands in one folder: each benchmark's JSON, one log per step (its stdout and stderr), and gpu_check.json
(device, date, torch, CUDA and Triton versions, each step's command, exit status and seconds). Without a CUDA device
it refuses in one sentence before running anything (exit status 2).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 570  # the whole call, under the 10 minutes a device command may take
PY = "python"  # shown in the commands; the run uses this interpreter (sys.executable)

GPU_TESTS = (
    "tests/core/test_long_maps_pooled.py",
    "tests/core/test_sdpa_gqa_backends.py",
    "tests/core/test_models_device.py",
)
LINEAR_CONTEXTS = (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)


@dataclass(frozen=True)
class Step:
    name: str
    args: tuple[str, ...]  # after the interpreter
    timeout_s: int
    writes: str | None  # the JSON it writes in the output folder

    def command(self, out: Path) -> list[str]:
        return [PY, *(a.replace("{out}", str(out)) for a in self.args)]


STEPS = (
    Step("tests", ("-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *GPU_TESTS), 120, None),
    Step(
        "pooled",
        (
            "benchmarks/bench_pooled.py",
            "--device",
            "cuda",
            "--parts",
            "target",
            "sizes",
            "--out",
            "{out}/bench_pooled.json",
        ),
        170,
        "bench_pooled.json",
    ),
    Step(
        "sdpa",
        ("benchmarks/bench_sdpa.py", "--device", "cuda", "--out", "{out}/bench_sdpa.json"),
        90,
        "bench_sdpa.json",
    ),
    Step(
        "material",
        (
            "benchmarks/bench_sdpa.py",
            "--device",
            "cuda",
            "--shapes",
            "material",
            "--out",
            "{out}/bench_sdpa_material.json",
        ),
        60,
        "bench_sdpa_material.json",
    ),
    Step(
        "linear",
        (
            "benchmarks/bench_linear.py",
            "--device",
            "cuda",
            "--contexts",
            *map(str, LINEAR_CONTEXTS),
            "--deadline-s",
            "90",
            "--out",
            "{out}/bench_linear.json",
        ),
        130,
        "bench_linear.json",
    ),
)
assert sum(s.timeout_s for s in STEPS) <= BUDGET_S


def default_out() -> Path:
    return ROOT / "results" / f"gpu-check-{dt.date.today().isoformat()}"


def plan(out: Path) -> list[str]:
    """One line per step: name, time limit, command."""
    return [f"{s.name:<9} {s.timeout_s:>4} s  {' '.join(s.command(out))}" for s in STEPS]


def versions() -> dict:
    import torch

    triton = importlib.util.find_spec("triton")
    info = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": None,
        "device_name": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "cpu_count": os.cpu_count(),
    }
    if triton is not None:
        import triton as triton_module

        info["triton"] = triton_module.__version__
    return info


def run_step(step: Step, out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = step.command(out)
    log = out / f"{step.name}.log"
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as f:
        f.write("$ " + " ".join(command) + "\n")
        f.flush()
        try:
            rc = subprocess.run(
                [sys.executable, *command[1:]], cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT,
                timeout=step.timeout_s,
            ).returncode  # fmt: skip
        except subprocess.TimeoutExpired:
            rc = "timed out"
    return {"name": step.name, "command": " ".join(command), "rc": rc, "seconds": round(time.monotonic() - start, 1),
            "log": log.name, "writes": step.writes}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="the results folder (default results/gpu-check-<date>)")
    ap.add_argument("--dry-run", action="store_true", help="list the steps and their limits; run nothing")
    args = ap.parse_args(argv)
    out = (args.out or default_out()).resolve()
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    if args.dry_run:
        print(f"would run, within {BUDGET_S} s in all, writing to {shown}/:")
        print("\n".join(plan(shown)))
        return 0
    import torch

    if not torch.cuda.is_available():
        print("No CUDA device here: nothing was run. `python scripts/gpu_check.py --dry-run` lists what would run.")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    summary = {**versions(), "budget_s": BUDGET_S, "steps": []}
    start = time.monotonic()
    for step in STEPS:
        if time.monotonic() - start + step.timeout_s > BUDGET_S:
            summary["steps"].append({"name": step.name, "rc": "left out: the total budget would be exceeded"})
            continue
        result = run_step(step, out)
        summary["steps"].append(result)
        print(f"{step.name:<9} rc {result['rc']}  {result['seconds']:.0f} s  -> {shown}/{result['log']}", flush=True)
    summary["seconds"] = round(time.monotonic() - start, 1)
    (out / "gpu_check.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {shown}/gpu_check.json ({summary['seconds']:.0f} s)")
    return 0 if all(s.get("rc") == 0 for s in summary["steps"]) else 1


if __name__ == "__main__":
    sys.exit(main())
