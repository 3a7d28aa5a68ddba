"""Build the Docker image and run it here as a class would meet it: one container with no network, then two
replicas behind nginx (compose.yaml). Writes results/container.json (command, date, device, figures).

    .venv/bin/python scripts/container_check.py                 # build, single container, compose
    .venv/bin/python scripts/container_check.py --no-build      # reuse attention-lab:latest
    .venv/bin/python scripts/container_check.py --only single   # or --only compose

Single container: `docker run --network none` (only its own loopback) as the image's non-root user; the browser
(Debian's chromium through Playwright) runs inside the container's network namespace (nsenter), so nothing
outside the container is reachable from either side. Measured: image size, seconds from `docker run` to the
health endpoint, to the first page drawn in the browser, and to Docker's HEALTHCHECK reporting healthy; then a
smoke of three pages opened by URL, none may show an exception box.

Compose: the replicas and nginx on the host network, replicas on 127.0.0.1:8601/8602, nginx on :8080 (localhost
only traffic), PostgreSQL on its private network with a fresh password. Shown from nginx's log and its X-Lab-Replica header: one browser's HTTP requests and websocket reach
one replica; fresh browsers spread over both; killing a replica mid-session moves its visitor to the other one
with a fresh session, while the other visitor is untouched; errors and reconnects are counted.

Where no registry can be reached, the base images are local stand-ins built from Debian packages
(deploy/base/build.sh) and torch comes from this machine's wheel, served to the build on 127.0.0.1 as a package
index; the Dockerfile is the ordinary one, only its BASE and TORCH_INDEX_URL build arguments change.
Needs root (debootstrap, nsenter), a running Docker daemon, docker-compose, /usr/bin/chromium-headless-shell and playwright.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import platform
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a file: make `scripts` and `core` importable
    sys.path.insert(0, str(ROOT))

from core.results import save_result  # noqa: E402
from scripts.app_server import CHROMIUM, RUN_FINISHED  # noqa: E402

IMAGE = "attention-lab:latest"
BASE_IMAGE = "attention-lab-base"
NGINX_IMAGE = "attention-lab-nginx"
TORCH_VERSION = "2.13.0"
PROJECT = "attention-lab-check"
PROXY = "http://127.0.0.1:8080"
REPLICAS = {"127.0.0.1:8601": "app1", "127.0.0.1:8602": "app2"}  # as in compose.yaml and deploy/nginx.conf
SMOKE_PATHS = ["/attention", "/sdpa-steps", "/masks"]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
PAGE_MS = 150_000  # a model page's first visit loads weights on a busy 2-core machine
START_S = 300  # from `docker run` to healthy, at most
LOG_LINE = re.compile(
    r"route=(?P<route>\S+) upstream=(?P<upstream>.*?) status=(?P<status>\d+) .*\"(?P<method>\S+) (?P<uri>\S+)\""
)


def sh(*cmd: str, timeout: float = 600, check: bool = True, env: dict | None = None) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr[-2000:]}")
    return out.stdout.strip()


def device() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, CPU only"


def parse_log(text: str) -> list[dict]:
    """nginx `lab` log lines (deploy/nginx.conf) -> [{route, upstreams, status, method, uri}]; a request retried
    on another replica lists both upstreams, the last one answered."""
    rows = []
    for m in LOG_LINE.finditer(text):
        ups = [u.strip() for u in m["upstream"].split(",") if u.strip() not in ("", "-")]
        rows.append({"route": m["route"], "upstreams": ups, "status": int(m["status"]), "uri": m["uri"]})
    return rows


# --- the browser -----------------------------------------------------------------------------------------------


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


class Visitor:
    """One browser (own cookies = own sticky key) with what it saw: replica headers, websockets, errors."""

    def __init__(self, browser, base: str):
        self.base, self.context = base, browser.new_context(viewport={"width": 1280, "height": 860}, locale="en-US")
        self.page = self.context.new_page()
        self.replicas: list[tuple[float, str, str]] = []  # (time, url, X-Lab-Replica)
        self.document_replica: str | None = None  # the replica that served the last page opened by URL
        self.sockets: list[dict] = []
        self.server_errors: list[tuple[str, int]] = []
        self.retried = 0  # responses nginx got only on a second replica
        self.console_errors: list[str] = []
        self.page.on("response", self._response)
        self.page.on("websocket", self._socket)
        self.page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text[:200]))
        self.page.on("pageerror", lambda e: self.console_errors.append(str(e)[:200]))
        self.failed: set[str] = set()  # URLs that failed or answered 4xx/5xx (what the console errors are about)
        self.page.on("requestfailed", lambda req: self.failed.add(f"{req.url[:120]} {req.failure}"))

    def _response(self, r) -> None:
        tried = [u.strip() for u in r.headers.get("x-lab-replica", "").split(",") if u.strip()]
        if tried:  # nginx lists every replica it tried; the last one answered
            replica = tried[-1]
            self.retried += len(tried) > 1
            self.replicas.append((time.time(), r.url, replica))
            if r.request.resource_type == "document":
                self.document_replica = replica
        if r.status >= 400:
            self.failed.add(f"{r.url[:120]} {r.status}")
        if r.status >= 500:
            self.server_errors.append((r.url, r.status))

    def _socket(self, ws) -> None:
        entry = {"opened": time.time(), "closed": None}
        ws.on("close", lambda _ws: entry.update(closed=time.time()))
        self.sockets.append(entry)

    def open(self, path: str) -> dict:
        """Open base+path, wait until the page's script run is over; time it and count exception boxes."""
        start = time.time()
        self.page.goto(self.base + path, wait_until="domcontentloaded", timeout=60_000)
        self.wait_drawn()
        return {"path": path, "seconds": round(time.time() - start, 2), "shown_at": time.time(), **self.health()}

    def wait_drawn(self, timeout_ms: int = PAGE_MS) -> None:
        self.page.wait_for_selector("h1", timeout=timeout_ms)
        self.page.wait_for_function(RUN_FINISHED, timeout=timeout_ms, polling=100)

    def health(self) -> dict:
        boxes = self.page.locator('[data-testid="stException"]')
        return {
            "exceptions": [boxes.nth(i).inner_text()[:300] for i in range(boxes.count())],
            "page_not_found": self.page.get_by_text("Page not found").count() > 0,
            "title": self.page.locator("h1").first.inner_text()[:80],
        }

    def route(self) -> str | None:
        return next((c["value"] for c in self.context.cookies() if c["name"] == "lab_route"), None)


def wait_health(url: str, timeout_s: float) -> float:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return time.time()
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} not healthy within {timeout_s:g} s")


def browse_main(base: str, paths: list[str], wait_s: float) -> None:
    """`browse` subcommand, run inside the container's network namespace: health, then each path in a fresh
    browser context; prints one JSON object."""
    from playwright.sync_api import sync_playwright

    health_at = wait_health(base, wait_s)
    pages = []
    with sync_playwright() as p:
        browser = launch(p)
        for path in paths:
            visitor = Visitor(browser, base)
            pages.append(visitor.open(path))
            visitor.context.close()
        browser.close()
    print(json.dumps({"health_at": health_at, "pages": pages}))


# --- building --------------------------------------------------------------------------------------------------


def serve_torch_index() -> tuple[http.server.ThreadingHTTPServer, str]:
    """torch==TORCH_VERSION and its dependencies as a PEP 503 index on 127.0.0.1 (what the CPU wheel index is
    to the Dockerfile), from this machine's pip (its configured wheels and PyPI)."""
    root = Path(tempfile.mkdtemp(prefix="attention-lab-index-"))
    wheels = root / "wheels"
    sh(sys.executable, "-m", "pip", "download", f"torch=={TORCH_VERSION}", "-d", str(wheels), "-q", timeout=900)
    for wheel in wheels.glob("*.whl"):
        project = root / "simple" / re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
        project.mkdir(parents=True, exist_ok=True)
        shutil.move(str(wheel), project / wheel.name)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/simple"


def build(base_local: bool) -> dict:
    if base_local:
        sh("bash", str(ROOT / "deploy" / "base" / "build.sh"), timeout=1200)
    server, index = serve_torch_index()
    start = time.time()
    try:
        args = ["--build-arg", f"TORCH_INDEX_URL={index}"]
        if base_local:
            args += ["--build-arg", f"BASE={BASE_IMAGE}"]
        sh("docker", "build", "--network", "host", *args, "-t", IMAGE, str(ROOT), timeout=3600)
    finally:
        server.shutdown()
    return {"build_s": round(time.time() - start, 1), "torch_index": "local wheel served on 127.0.0.1"}


def image_sizes(base: str | None) -> dict:
    size = int(sh("docker", "image", "inspect", "-f", "{{.Size}}", IMAGE))
    out = {
        "tag": IMAGE,
        "size_mb": round(size / 1e6),
        "user": sh("docker", "image", "inspect", "-f", "{{.Config.User}}", IMAGE),
    }
    if base:
        base_size = int(sh("docker", "image", "inspect", "-f", "{{.Size}}", base))
        out |= {"base": base, "base_size_mb": round(base_size / 1e6), "above_base_mb": round((size - base_size) / 1e6)}
    return out


def memory_mb(container: str) -> float:
    usage = sh("docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", container).split("/")[0].strip()
    number, unit = re.match(r"([\d.]+)\s*(\w+)", usage).groups()
    return round(float(number) * {"B": 1e-6, "KiB": 1.024e-3, "MiB": 1.048576, "GiB": 1073.741824}[unit], 1)


# --- one container, no network ---------------------------------------------------------------------------------


def single() -> dict:
    name = "attention-lab-check-single"
    sh("docker", "rm", "-f", name, check=False)
    # Created first and timed apart: with the vfs storage driver (this machine) creating a container copies the
    # whole image; overlay2, a user's default, does not. The clock for the cold start starts at `docker start`.
    created = time.time()
    sh("docker", "create", "--name", name, "--network", "none", "--cap-drop", "ALL",
       "--security-opt", "no-new-privileges", IMAGE)  # fmt: skip
    t0 = time.time()
    sh("docker", "start", name)
    try:
        pid = sh("docker", "inspect", "-f", "{{.State.Pid}}", name)
        uid = sh("docker", "exec", name, "id", "-u")
        links = sh(
            "docker", "exec", name, "python", "-c", "import socket; print([n for _, n in socket.if_nameindex()])"
        )
        browse = [sys.executable, str(Path(__file__).resolve()), "browse", "--base", "http://127.0.0.1:8501"]
        netns = ["nsenter", f"--net=/proc/{pid}/ns/net", "--"]
        first = json.loads(sh(*netns, *browse, "--path", "/", "--wait", str(START_S), timeout=START_S + 200))
        healthy_at = None
        while time.time() < t0 + START_S:
            if sh("docker", "inspect", "-f", "{{.State.Health.Status}}", name) == "healthy":
                healthy_at = time.time()
                break
            time.sleep(0.5)
        assert healthy_at is not None, "HEALTHCHECK never reported healthy"
        smoke_paths = [a for p in SMOKE_PATHS for a in ("--path", p)]
        smoke = json.loads(sh(*netns, *browse, *smoke_paths, "--wait", "30", timeout=900))["pages"]
        result = {
            "run": "docker create + start --network none --cap-drop ALL --security-opt no-new-privileges (browser in its netns)",
            "create_s": round(t0 - created, 1),
            "uid": int(uid),
            "interfaces": links,
            "start_to_health_s": round(first["health_at"] - t0, 1),
            "start_to_first_page_s": round(first["pages"][0]["shown_at"] - t0, 1),
            "first_page": first["pages"][0],
            "start_to_docker_healthy_s": round(healthy_at - t0, 1),
            "smoke": smoke,
            "memory_mb_after_smoke": memory_mb(name),
        }
    except Exception:
        print(sh("docker", "logs", "--tail", "60", name, check=False), file=sys.stderr)
        raise
    finally:
        sh("docker", "rm", "-f", name, check=False)
    for page in [result["first_page"], *smoke]:
        assert not page["exceptions"] and not page["page_not_found"], page
    assert result["uid"] != 0 and result["interfaces"] == "['lo']", result
    return result


# --- two replicas behind nginx ---------------------------------------------------------------------------------


def compose_cmd() -> list[str]:
    if shutil.which("docker-compose"):
        return ["docker-compose", "-p", PROJECT, "-f", str(ROOT / "compose.yaml")]
    return ["docker", "compose", "-p", PROJECT, "-f", str(ROOT / "compose.yaml")]


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def proxy_log(compose: list[str], env: dict) -> list[dict]:
    return parse_log(sh(*compose, "logs", "--no-color", "proxy", env=env, check=False))


def compose_run(base_local: bool) -> dict:
    from playwright.sync_api import sync_playwright

    busy = [p for p in (8080, 8601, 8602) if port_in_use(p)]
    assert not busy, f"ports in use on 127.0.0.1: {busy} (compose.yaml needs 8080, 8601, 8602)"
    # docker-compose's default 60 s per API call is shorter than creating a container on vfs (a full image copy)
    env = {**os.environ, "LAB_IMAGE": IMAGE, "APP_THREADS": "1", "COMPOSE_HTTP_TIMEOUT": "900",
           "LAB_DB_PASSWORD": secrets.token_hex(24), "LAB_ROOM_PASSCODE": secrets.token_hex(12)}  # fmt: skip
    if base_local:
        env |= {"LAB_BASE_IMAGE": BASE_IMAGE, "NGINX_IMAGE": NGINX_IMAGE}
    compose = compose_cmd()
    sh(*compose, "down", "--remove-orphans", env=env, check=False)
    t0 = time.time()
    try:
        sh(*compose, "up", "-d", "--no-build", env=env, timeout=START_S + 900)  # returns once both are healthy
        ready_s = round(wait_health(PROXY, 120) - t0, 1)
        container = {svc: sh(*compose, "ps", "-q", svc, env=env) for svc in ("app1", "app2")}
        with sync_playwright() as p:
            browser = launch(p)
            result = {"up_to_proxy_ready_s": ready_s, **replica_tests(browser, compose, env, container)}
            browser.close()
        return result
    except Exception:
        print(sh(*compose, "logs", "--no-color", "--tail", "40", env=env, check=False)[-6000:], file=sys.stderr)
        raise
    finally:
        sh(*compose, "down", "--remove-orphans", env=env, check=False, timeout=300)


def replica_tests(browser, compose: list[str], env: dict, container: dict) -> dict:
    # Sticky: one browser, a page by URL, another by URL, one through the sidebar (over the websocket only).
    a = Visitor(browser, PROXY)
    opened = [a.open("/"), a.open("/masks")]
    a.page.locator('[data-testid="stSidebarNav"] a[href$="/sdpa-steps"]').first.click()
    a.page.wait_for_url(lambda url: "/sdpa-steps" in url, timeout=60_000)
    a.wait_drawn()
    a_route = a.route()
    a_replica = a.replicas[-1][2]
    a_rows = [r for r in proxy_log(compose, env) if r["route"] == a_route]  # websockets closed so far are logged
    sticky = {
        "route_cookie_set": a_route is not None,
        "header_replicas": sorted({rep for _, _, rep in a.replicas}),
        "log_replicas": sorted({u for r in a_rows for u in r["upstreams"]}),
        "http_requests": sum(r["uri"] != "/_stcore/stream" for r in a_rows),
        "websockets_logged": [r["upstreams"] for r in a_rows if r["uri"] == "/_stcore/stream"],
        "pages": opened,
    }
    assert sticky["header_replicas"] == [a_replica] and sticky["log_replicas"] == [a_replica], sticky
    assert sticky["websockets_logged"] and all(w == [a_replica] for w in sticky["websockets_logged"]), sticky

    # Spread: fresh browsers (new cookies) until one lands on the other replica; at most 10.
    landed = {a_replica: 1}
    b = None
    for _ in range(10):
        visitor = Visitor(browser, PROXY)
        visitor.open("/")
        replica = visitor.document_replica
        landed[replica] = landed.get(replica, 0) + 1
        if replica != a_replica and b is None:
            b = visitor
            break
        visitor.context.close()
    spread = {"browsers_per_replica": {REPLICAS.get(k, k): v for k, v in landed.items()}}
    assert b is not None, spread
    b_replica = b.document_replica

    # Failover: kill A's replica mid-session; A must come back on B's replica with a fresh session, B untouched.
    a_sockets, b_sockets = len(a.sockets), len(b.sockets)
    a_errors, b_errors, a_retried = len(a.console_errors), len(b.console_errors), a.retried
    killed = REPLICAS[a_replica]
    t_kill = time.time()
    sh("docker", "kill", container[killed])
    recovered = None
    while time.time() < t_kill + 120:
        a.page.wait_for_timeout(250)
        fresh = [s for s in a.sockets[a_sockets:] if s["closed"] is None]
        if fresh and a.page.evaluate(RUN_FINISHED) and a.page.locator("h1").count() > 0:
            recovered = time.time()
            break
    assert recovered is not None, "the killed replica's visitor did not reconnect within 120 s"
    after_kill = [rep for t, _, rep in a.replicas if t >= t_kill]
    again = a.open("/attention")  # a new page after the move: served by the survivor
    for visitor in (a, b):
        visitor.context.close()  # close the websockets, so nginx logs them
    time.sleep(1)
    rows = proxy_log(compose, env)
    a_after = [r for r in rows if r["route"] == a_route and r["uri"] == "/_stcore/stream"]
    failover = {
        "killed": killed,
        "reconnect_s": round(recovered - t_kill, 1),
        "a_replicas_after_kill": sorted(set(after_kill)),
        "a_websockets_opened_after_kill": len(a.sockets) - a_sockets,
        "a_reconnects": sum(s["opened"] <= recovered for s in a.sockets[a_sockets:]),
        "a_server_errors_5xx": len(a.server_errors),
        "a_requests_retried_by_nginx": a.retried - a_retried,
        "a_console_errors_after_kill": len(a.console_errors) - a_errors,
        "a_console_errors_sample": sorted(set(a.console_errors[a_errors:]))[:6],
        "a_websockets_in_log": [r["upstreams"] for r in a_after],
        "a_page_after_move": again,
        "b_websockets_opened_after_kill": len(b.sockets) - b_sockets,
        "b_console_errors_after_kill": len(b.console_errors) - b_errors,
        "failed_requests_seen": sorted(a.failed | b.failed)[:10],
        "proxy_5xx_total": sum(r["status"] >= 500 for r in rows),
        "proxy_requests_total": len(rows),
    }
    assert failover["a_replicas_after_kill"] == [b_replica], failover
    assert a_after and a_after[-1]["upstreams"][-1] == b_replica, failover
    assert not again["exceptions"] and failover["b_websockets_opened_after_kill"] == 0, failover
    assert failover["a_websockets_opened_after_kill"] <= 5 and failover["a_server_errors_5xx"] <= 2, failover
    assert failover["a_console_errors_after_kill"] <= 20 and failover["b_console_errors_after_kill"] <= 5, failover
    memory = {svc: memory_mb(cid) for svc, cid in container.items() if svc != killed}
    return {"sticky": sticky, "spread": spread, "failover": failover, "memory_mb_survivor": memory}


# --- main ------------------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command")
    browse = sub.add_parser("browse", help="internal: open pages (run inside the container's network namespace)")
    browse.add_argument("--base", required=True)
    browse.add_argument("--path", action="append", required=True)
    browse.add_argument("--wait", type=float, default=START_S)
    parser.add_argument("--no-build", action="store_true", help=f"reuse the image {IMAGE}")
    parser.add_argument("--only", choices=["single", "compose"], help="run one part")
    parser.add_argument(
        "--official-base", action="store_true", help="build on python:3.11-slim and nginx (a registry is reachable)"
    )
    args = parser.parse_args()
    if args.command == "browse":
        browse_main(args.base, args.path, args.wait)
        return 0

    sh("docker", "info", "--format", "{{.ServerVersion}}")  # fails early without a daemon
    base_local = not args.official_base
    result = {
        "command": " ".join(["python", "scripts/container_check.py", *sys.argv[1:]]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "device": device(),
        "docker": sh("docker", "info", "--format", "{{.ServerVersion}}, storage {{.Driver}}"),
    }
    if not args.no_build:
        result["build"] = build(base_local)
    result["image"] = image_sizes(BASE_IMAGE if base_local else None)
    print(json.dumps(result["image"]), flush=True)
    if args.only in (None, "single"):
        result["single"] = single()
        print(json.dumps(result["single"], indent=1), flush=True)
    if args.only in (None, "compose"):
        result["compose"] = compose_run(base_local)
        print(json.dumps(result["compose"], indent=1), flush=True)
    print(f"wrote {save_result('container', result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
