"""Every GPU test and benchmark of this project in one call, within 10 minutes on one GPU.

    python scripts/gpu_check.py                  # on a machine with CUDA: runs everything below
    python scripts/gpu_check.py --dry-run        # anywhere: lists what it would run, runs nothing
    python scripts/gpu_check.py --out results/gpu-h100-2026-12-01 --carried .gpu

It runs, from the repository root with PYTHONPATH set to it, each step with its own time limit (the limits add up
to under 10 minutes; a step that would start after the total budget is left out and reported so):

    tests        the Triton kernels' tests, the SDPA backends' tests (the peak-memory bound on CUDA) and the
                 model-on-the-GPU tests (generation, eviction and the logit lens against the CPU), with pytest
    pooled       benchmarks/bench_pooled.py --device cuda: the exact pooled maps (Triton) against cuDNN at 64k,
                 16k and 128k, causal and not; then its small sweep at 64k and 128k: the default kernel, the
                 one-pass kernels, the fused statistics pass and a few block sizes, each checked, the fastest
                 correct one against the 1.5x / 1.3x targets (bench_pooled.json's "sweep" part; the summary closes pooled.log)
    sdpa         benchmarks/bench_sdpa.py --device cuda: every SDPA backend against the naive version
    material     the same at the study material's shape, B = 4, H = 32, N = 4,096, D = 128, float16 and float32
    linear       benchmarks/bench_linear.py --device cuda: generation tokens/s from 512 to 65,536 tokens of context
    pages        scripts/gpu_pages.py --device cuda: every page headless with SmolLM2 on the GPU, exception boxes,
                 figures against the CPU's, and the model pages' actions (the logit lens, generation, /ablation's
                 and /rope-scaling's live runs, a lesson's answer, /long-maps at 32k) on the GPU beside the CPU

Everything lands in one folder: each step's JSON, one log per step (its stdout and stderr), and gpu_check.json
(device, date, torch, CUDA and Triton versions, each step's command, exit status and seconds). Without a CUDA device
it refuses in one sentence before running anything (exit status 2).

On this project's lent GPU machines (no Streamlit, plotly or weight packages there; nothing can be fetched; one call
carries 64 MiB, this checkout's ~19 MB included; the machine stays warm 30 s after a call; 15 minutes of device time a
session, its start of 1-2 minutes included). Here, first:

    python scripts/gpu_carry.py prepare        # .gpu/ (git-ignored): the packages, the models' files, SmolLM2's
                                               # GGUF in 3 parts; prints what each call sends against 64 MiB

then the one call that measures everything (timeout_s=600; about 7.5 minutes expected of its 9.5: tests ~25 s,
pooled ~150 s, sdpa and material ~40 s, linear ~60 s, pages ~155 s: /ablation's and /rope-scaling's live runs and a
lesson's answer added ~25 s to a CPU process here, on 2 cores). The pooled step's estimate from the H200's
figures (Triton 423 / 223 ms a forward at 64k, 734 at 128k causal; an H100 taken as 1.3x slower, each new kernel
variant ~2.5 s to compile): ~50 s for the main rows, ~100 s for the sweep (18 configs and each case's default,
the one-pass kernels first in each case), whose configs stop starting at 150 s so that its JSON is written within
the step's 175 s (those left out are listed as such). The torch path (36x cuDNN, 4 s a call) is left out of the call.

    run(carry=[".gpu/site.tar.xz", ".gpu/models"], timeout_s=600,
        command="export PYTHONUNBUFFERED=1; python3 scripts/gpu_check.py --carried .gpu --out results/gpu-check
                 2>&1 | tee $OUT/gpu_check.log; tar czf $OUT/gpu-check.tgz -C results gpu-check")

Alone, it gives SmolLM2 (and MiniLM, never carried) random weights in their own shapes: every page still runs the
model's code at its size, so exception boxes, CPU-against-GPU figures and timings are measured alike, and
gpu_pages.json says which weights ran. SmolLM2's real weights take two calls before it, each within 30 s of the
last, that only bring a part of its GGUF file (what they leave stays on the warm machine; about 1.5 minutes more):

    run(carry=[".gpu/gguf-1"], timeout_s=60, command="ls -l .gpu")
    run(carry=[".gpu/gguf-2"], timeout_s=60, command="ls -l .gpu")
    run(carry=[".gpu/site.tar.xz", ".gpu/models", ".gpu/gguf-3", ".gpu/gguf.sha256"], timeout_s=600, command=as above)

A reply whose `warm` is false came from a fresh machine: the parts before it are gone, and the main call then runs
with random weights (said in the JSON). Unpack gpu-check.tgz into results/gpu-<kind>-<date>/ here. Then set the
fastest correct config of the sweep as core/long_maps/triton_kernels.default_config where it beats the default. A
session with the GPU to itself: `python3 benchmarks/bench_pooled.py --device cuda --parts sweep --sweep-grid full`
(78 configs, about 12 minutes).
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
if str(ROOT) not in sys.path:  # run as a file: the repository's packages
    sys.path.insert(0, str(ROOT))

from scripts import gpu_carry  # noqa: E402

BUDGET_S = 570  # the whole call, under the 10 minutes a device command may take
PY = "python"  # shown in the commands; the run uses this interpreter (sys.executable)

GPU_TESTS = (
    "tests/core/test_long_maps_pooled.py",
    "tests/core/test_sdpa_gqa_backends.py",
    "tests/core/test_models_device.py",
)
LINEAR_CONTEXTS = (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
PAGES_BUDGET_S = 175
POOLED_SWEEP_DEADLINE_S = 150  # the sweep's last config (128k non-causal, ~8 s) and the JSON within the step's 175 s


@dataclass(frozen=True)
class Step:
    name: str
    args: tuple[str, ...]  # after the interpreter
    timeout_s: int
    writes: str | None  # the JSON it writes in the output folder

    def command(self, out: Path, carried: Path = Path(".gpu")) -> list[str]:
        return [PY, *(a.replace("{out}", str(out)).replace("{carried}", str(carried)) for a in self.args)]


STEPS = (
    Step("tests", ("-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *GPU_TESTS), 45, None),
    Step(
        "pooled",
        (
            "benchmarks/bench_pooled.py",
            "--device",
            "cuda",
            "--parts",
            "target",
            "sizes",
            "sweep",
            "--sizes",
            "16384",
            "131072",
            "--both-masks",
            "--triton-only",  # the torch path: 36x cuDNN on the H200, 25 s of the step
            "--sweep-reps",
            "1",  # the H200's timed calls of one row differed by under 0.5 %
            "--deadline-s",
            str(POOLED_SWEEP_DEADLINE_S),
            "--out",
            "{out}/bench_pooled.json",
        ),
        175,
        "bench_pooled.json",
    ),
    Step(
        "sdpa",
        ("benchmarks/bench_sdpa.py", "--device", "cuda", "--out", "{out}/bench_sdpa.json"),
        50,  # 15 s on the H200 (09:45:24-09:45:39 on 2026-11-27)
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
        30,
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
            "50",
            "--out",
            "{out}/bench_linear.json",
        ),
        75,
        "bench_linear.json",
    ),
    Step(
        "pages",
        (
            "scripts/gpu_pages.py",
            "--device",
            "cuda",
            "--carried",
            "{carried}",
            "--budget-s",
            str(PAGES_BUDGET_S),
            "--out",
            "{out}/gpu_pages.json",
        ),
        PAGES_BUDGET_S + 20,  # the last process's own deadline, then its figures compared and written
        "gpu_pages.json",
    ),  # fmt: skip
)
assert sum(s.timeout_s for s in STEPS) <= BUDGET_S


def default_out() -> Path:
    return ROOT / "results" / f"gpu-check-{dt.date.today().isoformat()}"


def plan(out: Path, carried: Path = Path(".gpu")) -> list[str]:
    """One line per step: name, time limit, command."""
    return [f"{s.name:<9} {s.timeout_s:>4} s  {' '.join(s.command(out, carried))}" for s in STEPS]


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


def run_step(step: Step, out: Path, carried: Path, site: Path | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": gpu_carry.python_path(ROOT, site), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}  # fmt: skip
    command = step.command(out, carried)
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
    ap.add_argument(
        "--carried",
        type=Path,
        default=Path(".gpu"),
        help="scripts/gpu_carry.py's folder: the packages and weights a bare GPU machine lacks",
    )
    args = ap.parse_args(argv)
    out = (args.out or default_out()).resolve()
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    if args.dry_run:
        print(f"would run, within {BUDGET_S} s in all, writing to {shown}/:")
        print("\n".join(plan(shown, args.carried)))
        return 0
    import torch

    if not torch.cuda.is_available():
        print("No CUDA device here: nothing was run. `python scripts/gpu_check.py --dry-run` lists what would run.")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    site = gpu_carry.stage_site(ROOT / args.carried)  # the tests' conftest and the pages import Streamlit
    summary = {**versions(), "budget_s": BUDGET_S, "carried_site": site is not None, "steps": []}
    start = time.monotonic()
    for step in STEPS:
        if time.monotonic() - start + step.timeout_s > BUDGET_S:
            summary["steps"].append({"name": step.name, "rc": "left out: the total budget would be exceeded"})
            continue
        result = run_step(step, out, args.carried, site)
        summary["steps"].append(result)
        print(f"{step.name:<9} rc {result['rc']}  {result['seconds']:.0f} s  -> {shown}/{result['log']}", flush=True)
    summary["seconds"] = round(time.monotonic() - start, 1)
    (out / "gpu_check.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {shown}/gpu_check.json ({summary['seconds']:.0f} s)")
    return 0 if all(s.get("rc") == 0 for s in summary["steps"]) else 1


if __name__ == "__main__":
    sys.exit(main())
