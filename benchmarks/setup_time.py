"""How long `bash scripts/dev.sh setup` takes in a fresh clone: uv (the default) against pip
(ATTENTION_LAB_INSTALLER=pip), in turns, so that both see the same hour of this machine.

Each round clones the repository's HEAD into a temporary folder, runs the set-up there with a fresh venv and times
it, then checks what it installed: torch's version (the CPU build this machine keeps on disk, never a CUDA download)
and the installed distributions, which must be the same under both installers (uv itself aside).

    python benchmarks/setup_time.py --rounds 2          # -> results/setup_time.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.results import save_result  # noqa: E402
from core.timing import machine_info  # noqa: E402

INSTALLERS = ("uv", "pip")


def installed(venv_python: Path) -> dict[str, str]:
    """name -> version of every distribution in the venv."""
    out = subprocess.run(
        [str(venv_python), "-c", "import importlib.metadata as m, json; "
         "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return json.loads(out)


def one_setup(installer: str, head: str) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"setup-{installer}-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", head], check=True)
        env = {**os.environ, "ATTENTION_LAB_INSTALLER": installer}
        t0 = time.perf_counter()
        done = subprocess.run(["bash", "scripts/dev.sh", "setup"], cwd=clone, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"{installer}: dev.sh setup failed ({done.returncode}):\n{done.stderr[-2000:]}")
        python = clone / ".venv" / "bin" / "python"
        torch_version = subprocess.run(
            [str(python), "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True, check=True
        ).stdout.strip()
        return {"installer": installer, "seconds": round(seconds, 1), "torch": torch_version,
                "distributions": installed(python)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2, help="each installer this many times, in turns")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "setup_time.json")
    args = ap.parse_args()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    info = machine_info()
    runs = []
    for r in range(args.rounds):
        for installer in INSTALLERS:
            run = one_setup(installer, head)
            print(f"round {r + 1}: {installer} {run['seconds']} s, torch {run['torch']}", flush=True)
            runs.append(run)
    by = {i: [r for r in runs if r["installer"] == i] for i in INSTALLERS}
    # pip and uv themselves aside (the pip path upgrades pip; the uv path adds uv), the same pins
    tools = ("pip", "uv")
    pip_set = {k: v for k, v in by["pip"][0]["distributions"].items() if k not in tools}
    same = all({k: v for k, v in r["distributions"].items() if k not in tools} == pip_set for r in runs)
    summary = {i: {"median_s": statistics.median(r["seconds"] for r in by[i]), "runs_s": [r["seconds"] for r in by[i]]}
               for i in INSTALLERS}  # fmt: skip
    print(f"uv median {summary['uv']['median_s']} s, pip median {summary['pip']['median_s']} s; "
          f"same distributions: {same}")  # fmt: skip
    save_result(args.out, {
        "command": "python benchmarks/setup_time.py " + " ".join(sys.argv[1:]),
        "commit": head[:7],
        "machine": {**info, "loadavg_1min_after": round(os.getloadavg()[0], 2)},
        "what": "bash scripts/dev.sh setup in a fresh clone with a fresh venv, by installer, in turns",
        "summary": summary,
        "same_distributions": same,
        "torch": sorted({r["torch"] for r in runs}),
        "runs": [{k: v for k, v in r.items() if k != "distributions"} for r in runs],
        "distributions": by["pip"][0]["distributions"],
    })  # fmt: skip


if __name__ == "__main__":
    main()
