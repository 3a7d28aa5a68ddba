"""One hostile client against one hosted server: does the server stay bounded, and do the others still get served?

One `streamlit run` of the app (hosted, from the repository root so .streamlit/config.toml applies: a browser's
message at most 1 MB, text boxes of at most 20,000 characters, at most ATTENTION_LAB_MAX_SESSIONS visitors), and
the load client of scripts/load_test.py (Streamlit's own websocket protocol, 127.0.0.1 only):

  before   a few normal visitors do the /attention loop (paste a sentence, open a head, pick another head);
  during   --hostile sessions from this one client (one cookie jar, as a browser's tabs; --cookies own: one jar
           each, which a server cannot tell from a class of browsers behind one address) arrive over --ramp seconds, each opening /attention and sending
           the largest text the server accepts (a message just under the 1 MB limit, every session's text a new
           one so no cache can share them; sentences by default, the costliest run, or --value filler), then
           staying connected; the normal visitors carry on;
  left     the hostile sessions close; the server keeps a closed session for server.disconnectedSessionTTL
           (120 s) in case its browser reconnects, then frees it: the script waits that long, then
  after    the normal visitors' loop once more.

Measured: the server's resident memory (its process tree, /proc) before, at its peak during, and after; the normal
visitors' p50/p95 per stage (target: p95 <= 1.5 s); what the hostile sessions got (accepted, refused as too large,
told the server is full); /proc/loadavg (the machine is shared). The memory limit a replica runs under is 3 GiB
(compose.yaml, deploy/k8s/app.yaml).

    python scripts/hostile_sessions.py                    # 50 hostile sessions, 5 normal -> results/hostile_sessions.json
    python scripts/hostile_sessions.py --value filler --out results/hostile_sessions_filler.json
    python scripts/hostile_sessions.py --cookies own --out results/hostile_sessions_own_cookies.json
    python scripts/hostile_sessions.py --hostile 10 --during 20 --wait-after 130 --out /tmp/h.json    # a quick one
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import random
import sys
import time
from pathlib import Path

from scripts import load_test as lt
from scripts.app_server import free_port, start_server, stop_server

ROOT = Path(__file__).resolve().parents[1]
LIMIT_MIB = 3 * 1024  # compose.yaml mem_limit 3g, deploy/k8s/app.yaml limits.memory 3Gi
TARGET_P95_MS = 1500
# The largest value the server accepts: one rerun's message under server.maxWidgetStateSize (1 MB), less room for
# the rest of the message (page hash, query string, context); a bigger one closes the connection.
LARGEST_VALUE_CHARS = 990_000


WORDS = "The trophy did not fit in the suitcase because it was too big, said the cat on the mat. "


def hostile_text(i: int, value: str = "words") -> str:
    """A new text per session (nothing shared through a cache): its number, then up to the largest size either
    sentences ("words": the box keeps 20,000 characters, which the page runs as 512 tokens, its costliest run) or
    one letter repeated ("filler": as many bytes, one unknown word, a cheap run)."""
    head = f"hostile session {i}: "
    fill = WORDS if value == "words" else "x"
    return head + (fill * (LARGEST_VALUE_CHARS // len(fill) + 1))[: LARGEST_VALUE_CHARS - len(head)]


async def hostile(i: int, port: int, args, outcome: dict, leave: asyncio.Event, jar) -> None:
    """Open /attention, send the largest text once, stay connected until told to leave. `jar`: the one cookie jar
    every hostile session keeps (one client, as a browser's tabs or a script with one jar are), or None (each
    session its own: a client indistinguishable from a class of browsers behind one address)."""
    await asyncio.sleep(args.ramp * i / max(1, args.hostile))
    s = lt.StreamlitSession(port, args.timeout, cookies=jar)
    try:
        try:
            await s.open("attention")
            wid, _ = s.widget("text")
        except lt.ProtocolError:  # no text box: the page said the server is full
            outcome["refused_full"] += 1
            await leave.wait()
            return
        try:
            await s.set_widget(lt.WidgetState(id=wid, string_value=hostile_text(i, args.value)))
            outcome["accepted"] += 1
        except lt.websockets.ConnectionClosed:
            outcome["closed_by_server"] += 1
            return
        await leave.wait()
    except (TimeoutError, OSError, lt.websockets.ConnectionClosed) as err:
        outcome["errors"].append(f"{type(err).__name__}: {err}"[:200])
    finally:
        await s.close()


async def normal_visitors(port: int, args, rec: lt.Recorder, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    await asyncio.gather(
        *(
            lt.visitor(1000 + i, port, lt.ATTENTION_LOOP, rec, deadline, args, arrive_after_s=i * 0.5)
            for i in range(args.normal)
        )
    )


def stage_summary(rec: lt.Recorder, split_s: float | None = None) -> dict:
    """Percentiles of the normal visitors' actions; with split_s, also of those started before and after it (the
    hostile sessions arriving, each running the page on its text once, and then holding their sessions)."""
    after_first = [t for t in rec.timings if t["kind"] != "open"]
    parts = {}
    if split_s is not None:
        parts = {
            "normal_while_hostile_arrive": lt.percentiles([t["ms"] for t in after_first if t["t"] < split_s]),
            "normal_while_hostile_hold": lt.percentiles([t["ms"] for t in after_first if t["t"] >= split_s]),
        }
    return {
        "actions": len(rec.timings),
        "normal_visitors_after_first_page": lt.percentiles([t["ms"] for t in after_first]),
        **parts,
        "normal_visitors_first_page": lt.percentiles([t["ms"] for t in rec.timings if t["kind"] == "open"]),
        "errors": len(rec.errors),
        "error_samples": rec.errors[:3],
        "exception_boxes": len(rec.exception_boxes),
    }


async def measure(args, server, port: int) -> dict:
    pid = server.pid
    out: dict = {"loadavg": {"start": lt.loadavg()}}
    await lt.warm_up(port, lt.ATTENTION_LOOP, args)  # MiniLM loads, the page's modules import (and the heap freezes)
    await asyncio.sleep(3)
    out["rss_mb"] = {"before": lt.rss_mb(pid)}

    rec = lt.Recorder(time.monotonic())
    await normal_visitors(port, args, rec, args.before)
    out["before"] = stage_summary(rec)
    out["loadavg"]["before"] = lt.loadavg()

    series: list = []
    stop = asyncio.Event()
    t0 = time.monotonic()
    sampler = asyncio.create_task(lt.sample_memory(pid, t0, series, stop, args.memory_every))
    outcome = {"accepted": 0, "closed_by_server": 0, "refused_full": 0, "errors": []}
    leave = asyncio.Event()
    rec = lt.Recorder(time.monotonic())
    jar = lt.http.cookiejar.CookieJar() if args.cookies == "shared" else None
    hostiles = [asyncio.create_task(hostile(i, port, args, outcome, leave, jar)) for i in range(args.hostile)]
    await normal_visitors(port, args, rec, args.ramp + args.during)
    out["during"] = stage_summary(rec, args.ramp + args.settle)
    out["rss_mb"]["during_end"] = lt.rss_mb(pid)
    leave.set()
    await asyncio.gather(*hostiles)
    out["hostile"] = outcome | {"errors": outcome["errors"][:5], "n_errors": len(outcome["errors"])}
    if jar is not None:  # what the one client was known by: Streamlit's per-browser XSRF cookie
        out["hostile"]["cookies_kept"] = sorted(c.name for c in jar)
    out["loadavg"]["during"] = lt.loadavg()

    await asyncio.sleep(args.wait_after)  # closed sessions are kept server.disconnectedSessionTTL (120 s)
    out["rss_mb"]["after_leaving"] = lt.rss_mb(pid)
    rec = lt.Recorder(time.monotonic())
    await normal_visitors(port, args, rec, args.after)
    out["after"] = stage_summary(rec)
    out["rss_mb"]["after"] = lt.rss_mb(pid)
    stop.set()
    await sampler
    out["rss_mb"]["peak"] = max(m for _, m in series) if series else None
    out["rss_series_mb"] = series
    out["loadavg"]["end"] = lt.loadavg()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hostile", type=int, default=50, help="sessions from the one hostile client")
    parser.add_argument("--value", choices=["words", "filler"], default="words", help="what fills the text")
    parser.add_argument(
        "--cookies",
        choices=["shared", "own"],
        default="shared",
        help="the hostile sessions keep one cookie jar (one client) or one each (as many browsers)",
    )
    parser.add_argument("--normal", type=int, default=5, help="normal visitors doing the /attention loop")
    parser.add_argument("--ramp", type=float, default=10.0, help="the hostile sessions arrive over this, s")
    parser.add_argument("--before", type=float, default=30.0, help="s of normal visitors alone")
    parser.add_argument("--during", type=float, default=60.0, help="s the hostile sessions stay, after the ramp")
    parser.add_argument("--settle", type=float, default=10.0, help="s after the ramp still counted as arriving")
    parser.add_argument("--wait-after", type=float, default=150.0, help="s after they leave (the 120 s TTL)")
    parser.add_argument("--after", type=float, default=30.0, help="s of normal visitors alone again")
    parser.add_argument("--think", type=float, nargs=2, default=[1.0, 3.0], metavar=("MIN", "MAX"))
    parser.add_argument("--timeout", type=float, default=120, help="per action")
    parser.add_argument("--memory-every", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server-log", default="/tmp/attention-lab-hostile-server.log")
    parser.add_argument("--out", default=str(ROOT / "results" / "hostile_sessions.json"))
    args = parser.parse_args(argv)
    random.seed(args.seed)

    from core.results import save_result
    from core.timing import machine_info

    result: dict = {
        "command": " ".join(["python", "scripts/hostile_sessions.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git": lt.git_version(),
        "machine": machine_info("cpu"),
        "config": {
            k: getattr(args, k)
            for k in ("hostile", "normal", "ramp", "settle", "before", "during", "wait_after", "after")
        }
        | {
            "hostile_value": args.value,
            "hostile_cookies": args.cookies,
            "hostile_value_chars": LARGEST_VALUE_CHARS,
            "think": args.think,
            "server": "hosted, .streamlit/config.toml",
        },
        "limits": {"memory_mib": LIMIT_MIB, "normal_p95_ms": TARGET_P95_MS},
    }
    port = free_port()
    os.environ["ATTENTION_LAB_HOSTED"] = "1"  # the server runs hosted, as every server deployment does
    with open(args.server_log, "w") as log:
        server = start_server(port, log)
        try:
            result |= asyncio.run(measure(args, server, port))
        finally:
            stop_server(server)
    rss = result["rss_mb"]
    p95 = {s: result[s]["normal_visitors_after_first_page"].get("p95_ms") for s in ("before", "during", "after")}
    for part in ("normal_while_hostile_arrive", "normal_while_hostile_hold"):
        p95[part] = result["during"][part].get("p95_ms")
    result["verdict"] = {
        "peak_under_limit": rss["peak"] is not None and rss["peak"] < LIMIT_MIB,
        "normal_p95_within_target": all(v is not None and v <= TARGET_P95_MS for v in p95.values()),
        "memory_back_mb": round(rss["after"] - rss["before"], 1),
    }
    path = save_result(Path(args.out), result)
    print(
        f"RSS before {rss['before']} MB, peak {rss['peak']} MB (limit {LIMIT_MIB}), after leaving "
        f"{rss['after_leaving']} MB, after {rss['after']} MB; normal p95 before/during/after {p95} ms; "
        f"hostile {result['hostile']['accepted']} accepted, {result['hostile']['closed_by_server']} closed, "
        f"{result['hostile']['refused_full']} told full; load {result['loadavg']}"
    )
    print(f"wrote {path}")
    return 0 if all(v for k, v in result["verdict"].items() if k != "memory_back_mb") else 1


if __name__ == "__main__":
    sys.exit(main())
