"""Seconds from starting a server to its first page: a fresh `streamlit run app/main.py` (scripts/app_server.py,
as the tests and `dev.sh run` start it) per page and try, timed from the process's start to /_stcore/health and
to the end of the first page's script run over the websocket (scripts/load_test.py's client, what a browser that
opens a link waits for). The first run of a process imports every page's module (the navigation) and what the
page itself needs: a model page also loads its model.

    python scripts/cold_start.py              # landing, /masks, /room, /logit-lens, /encoder-decoder; 3 tries
    python scripts/cold_start.py --pages masks --repeat 5 --out results/cold_start.json

Also times `python -X importtime -c "import app.main"` (app.main's cumulative import, which runs the script once
in bare mode) and says whether transformers was imported by it. Run it under the measure lock
(`flock /tmp/attention-lab-measure.lock ...`): the figures move with the machine's load, which is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.app_server import ROOT, free_port, start_server, stop_server
from scripts.load_test import StreamlitSession

PAGES = ("", "masks", "room", "logit-lens", "encoder-decoder")  # "" is the landing page; /logit-lens loads SmolLM2,
# /encoder-decoder the shipped encoder-decoder (through transformers)
HEAVY = ("transformers", "torch._dynamo", "sklearn", "scipy", "sympy")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def import_figures() -> dict:
    """app.main's cumulative import time (microseconds -> s) and which heavy packages it left in sys.modules."""
    code = f"import sys, app.main; print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules])"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    wall = time.monotonic() - start
    cumulative = re.search(r"import time:\s*\d+ \|\s*(\d+) \| app\.main$", done.stderr, re.M)
    heavy = re.search(r"^HEAVY (.*)$", done.stdout, re.M)
    return {
        "process_wall_s": round(wall, 2),
        "app_main_import_s": round(int(cumulative.group(1)) / 1e6, 2) if cumulative else None,
        "heavy_modules_imported": heavy.group(1) if heavy else done.stderr[-500:],
    }


async def first_page(port: int, page: str, timeout_s: float) -> dict:
    session = StreamlitSession(port, timeout_s)
    try:
        result = await session.open(page)
    finally:
        await session.close()
    return {"exceptions": result.exceptions, "page_not_found": result.page_not_found}


def one_start(page: str, timeout_s: float) -> dict:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="attention-lab-cold-") as tmp, open(Path(tmp) / "server.log", "w+") as log:
        os.environ["ATTENTION_LAB_ROOMS"] = str(Path(tmp) / "rooms.sqlite3")  # a fresh room store, as CI's
        start = time.monotonic()
        proc = start_server(port, log, timeout_s)
        healthy = time.monotonic() - start
        try:
            outcome = asyncio.run(first_page(port, page, timeout_s))
            first = time.monotonic() - start
        finally:
            stop_server(proc)
    return {"page": "/" + page, "health_s": round(healthy, 2), "first_page_s": round(first, 2), **outcome}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated URL paths ('' is the landing page)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh servers per page (the median is reported)")
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    pages = args.pages.split(",")
    report: dict = {
        "command": "python scripts/cold_start.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "load_at_start": load(),
        "root": str(ROOT),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip(),
        "import": import_figures(),
        "runs": [],
    }
    print(f"import app.main: {report['import']}", flush=True)
    for _ in range(args.repeat):
        for page in pages:
            run = one_start(page, args.timeout)
            report["runs"].append(run)
            print(json.dumps(run, ensure_ascii=False), flush=True)
    report["median_first_page_s"] = {
        "/" + p: statistics.median(r["first_page_s"] for r in report["runs"] if r["page"] == "/" + p) for p in pages
    }
    report["median_health_s"] = statistics.median(r["health_s"] for r in report["runs"])
    report["load_at_end"] = load()
    print(
        json.dumps({k: report[k] for k in ("median_first_page_s", "median_health_s", "load_at_start", "load_at_end")})
    )
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    bad = [r for r in report["runs"] if r["exceptions"] or r["page_not_found"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
