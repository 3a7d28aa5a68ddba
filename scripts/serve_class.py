"""Serve a class from one host with every core busy: one `streamlit run` per core behind nginx.

    bash scripts/dev.sh serve                      # one server per core, nginx on http://<host>:8080
    bash scripts/dev.sh serve --processes 2 --port 8080 --first-port 8601

A Streamlit server is one Python process: its visitors share one interpreter lock, so a second core idles
(results/load_test*.json). This starts N servers on 127.0.0.1:first-port.. (OMP_NUM_THREADS=1 each: torch's own
threads would fight over the cores) and nginx in front with the same configuration compose.yaml uses
(deploy/nginx.conf: a random `lab_route` cookie per browser, hashed to one server, so a page's requests and its
websocket stay together while browsers spread; never the client's address, which a classroom shares). nginx
needs no root here: its pid file and temporary folders go to a run folder. Debian: `apt-get install nginx-light`.
Ctrl-C (or SIGTERM) stops everything it started.

Rooms: every server keeps them in the same store. On one machine that is one SQLite file (ATTENTION_LAB_ROOMS, else
~/.cache/attention-lab/rooms.sqlite3), passed to every server by its absolute path: its writers take the write lock
before they read and retry briefly (core/room/sql.py), so the processes share it without losing a click. Several
machines (or replicas that do not share a disk) need PostgreSQL: set DATABASE_URL and every server uses it.

Opening a room asks for one passcode on every server (core/room PASSCODE_ENV): the operator's
ATTENTION_LAB_ROOM_PASSCODE when set, else one made with `secrets` at start and printed once here, so a class's
server is never open for anyone to fill with rooms. Give it to the facilitators; learners need none. It reaches the
servers through their environment, never a command line (which `ps` shows) or a URL.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a file (dev.sh serve): the project's own `app` for the room file's place
    sys.path.insert(0, str(ROOT))
NGINX_CONF = ROOT / "deploy" / "nginx.conf"
TEMP_DIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def nginx_config(template: str, ports: list[int], listen: int, run_dir: Path) -> str:
    """deploy/nginx.conf with one `server` line per port, nginx listening on `listen`, and its pid file and
    temporary folders under run_dir (so no root is needed)."""
    lines = template.split("\n")
    server = [i for i, line in enumerate(lines) if re.match(r"\s+server 127\.0\.0\.1:\d+ ", line)]
    if not server:
        raise ValueError("no `server 127.0.0.1:PORT ...` line in the nginx template")
    first = lines[server[0]]
    indent, rest = re.match(r"(\s+)server 127\.0\.0\.1:\d+(.*)$", first).groups()
    upstream = [f"{indent}server 127.0.0.1:{p}{rest}" for p in ports]
    lines = lines[: server[0]] + upstream + [line for i, line in enumerate(lines) if i > server[0] and i not in server]
    text = "\n".join(lines)
    text, n = re.subn(r"(\n\s+)listen \d+;", rf"\1listen {listen};", text)
    if n != 1:
        raise ValueError("expected one `listen PORT;` line in the nginx template")
    temps = "".join(f"\n    {name}_temp_path {run_dir / name};" for name in TEMP_DIRS)
    return f"pid {run_dir / 'nginx.pid'};\n" + text.replace("http {", "http {" + temps, 1)


def start_nginx(ports: list[int], listen: int, run_dir: Path, log_dir: Path) -> subprocess.Popen:
    """nginx in the foreground with deploy/nginx.conf made for these ports (its own process group), logging to
    log_dir/nginx.log; the caller waits for it to answer and stops it."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        raise SystemExit("nginx is not installed (Debian: apt-get install nginx-light)")
    run_dir.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    for name in TEMP_DIRS:
        (run_dir / name).mkdir(exist_ok=True)
        if os.geteuid() == 0:  # nginx's workers run as nobody when its master is root
            shutil.chown(run_dir / name, user="nobody")
    conf = run_dir / "nginx.conf"
    conf.write_text(nginx_config(NGINX_CONF.read_text(), ports, listen, run_dir))
    log = open(log_dir / "nginx.log", "w")  # noqa: SIM115 - open while it runs
    return subprocess.Popen(
        [nginx, "-e", "stderr", "-p", str(run_dir), "-c", str(conf), "-g", "daemon off;"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip


def streamlit_command(port: int, script: str = "app/main.py") -> list[str]:
    return [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port),
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", "--client.toolbarMode", "viewer",
    ]  # fmt: skip


def rooms_file() -> Path:
    """The SQLite room file every server of this machine opens (core/room/sql.py's default), absolute."""
    from core.room.sql import default_path

    return default_path().expanduser().resolve()


def class_passcode() -> tuple[str, bool]:
    """(the passcode every server of this class asks for to open a room, whether it was made here): the operator's
    $ATTENTION_LAB_ROOM_PASSCODE, else a new one (core.room.new_passcode)."""
    from core.room import new_passcode, room_passcode

    chosen = room_passcode()
    return (chosen, False) if chosen else (new_passcode(), True)


def healthy(port: int) -> bool:
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


class Class:
    """The running servers and nginx; stop() ends every process it started (each in its own group)."""

    def __init__(self, ports: list[int], listen: int, run_dir: Path, log_dir: Path, script: str = "app/main.py"):
        self.ports, self.listen, self.run_dir, self.log_dir = ports, listen, run_dir, log_dir
        self.script = script  # what each server runs (scripts/load_pages.py also serves its one-line app)
        self.procs: list[subprocess.Popen] = []
        self.passcode, self.passcode_made = class_passcode()  # one for every server, for as long as they run

    def start(self, timeout_s: float = 180) -> None:
        if not Path(shutil.which("nginx") or "/usr/sbin/nginx").exists():
            raise SystemExit("nginx is not installed (Debian: apt-get install nginx-light)")
        env = self.server_env()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for port in self.ports:
            log = open(self.log_dir / f"streamlit-{port}.log", "w")  # noqa: SIM115 - open while it runs
            self.procs.append(
                subprocess.Popen(
                    streamlit_command(port, self.script),
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
            )
        deadline = time.monotonic() + timeout_s
        waiting = set(self.ports)
        while waiting:
            for proc in self.procs:
                if proc.poll() is not None:
                    self.stop()
                    raise SystemExit(f"a server exited ({proc.returncode}); see {self.log_dir}")
            waiting = {p for p in waiting if not healthy(p)}
            if waiting and time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"servers on {sorted(waiting)} not healthy within {timeout_s:g} s")
            time.sleep(0.3)
        self.procs.append(start_nginx(self.ports, self.listen, self.run_dir, self.log_dir))
        while not healthy(self.listen):
            if self.procs[-1].poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"nginx did not start; see {self.log_dir / 'nginx.log'}")
            time.sleep(0.2)

    def server_env(self) -> dict[str, str]:
        """Every server's environment: one torch thread, hosted mode, the one room store they share and the one
        passcode that opens a room on any of them."""
        from core.room import PASSCODE_ENV

        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        env.setdefault("OMP_NUM_THREADS", "1")
        env["ATTENTION_LAB_HOSTED"] = "1"  # a class's server: the operator's models only (app/serving.py hosted)
        env[PASSCODE_ENV] = self.passcode
        if not env.get("DATABASE_URL", "").strip():
            env["ATTENTION_LAB_ROOMS"] = str(rooms_file())
        return env

    def rooms(self) -> str:
        """Where this class's rooms live, in words for the operator."""
        if os.environ.get("DATABASE_URL", "").strip():
            return "rooms in PostgreSQL (DATABASE_URL)"
        return f"rooms in one SQLite file shared by the servers: {rooms_file()}"

    def passcode_words(self) -> str:
        """How rooms open, in words for the operator: a passcode made here is shown (this is its one showing), the
        operator's own is not."""
        if self.passcode_made:
            return (f"rooms open with the passcode {self.passcode} (made for this run: give it to facilitators; "
                    "set ATTENTION_LAB_ROOM_PASSCODE to choose one)")  # fmt: skip
        return "rooms open with your passcode (ATTENTION_LAB_ROOM_PASSCODE)"

    def server_pids(self) -> list[int]:
        """The Streamlit servers' pids (nginx, started last, left out)."""
        return [p.pid for p in self.procs[: len(self.ports)]]

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="default: one per core")
    parser.add_argument("--port", type=int, default=8080, help="where visitors connect (nginx)")
    parser.add_argument("--first-port", type=int, default=8601, help="servers on 127.0.0.1:first-port, +1, ...")
    parser.add_argument("--run-dir", default=None, help="nginx's pid, config and temporary files (default: a temp dir)")
    parser.add_argument("--log-dir", default=None, help="one log per server and nginx's (default: RUN_DIR/logs)")
    args = parser.parse_args(argv)
    run_dir = Path(args.run_dir or tempfile.mkdtemp(prefix="attention-lab-serve-"))
    log_dir = Path(args.log_dir) if args.log_dir else run_dir / "logs"
    ports = [args.first_port + i for i in range(max(1, args.processes))]
    lab = Class(ports, args.port, run_dir, log_dir)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        lab.start()
        print(f"{len(ports)} servers ({', '.join(map(str, ports))}) behind nginx: http://localhost:{args.port}")
        print(lab.rooms())
        print(lab.passcode_words())
        print(f"logs in {log_dir}; Ctrl-C stops all", flush=True)
        while all(p.poll() is None for p in lab.procs):
            time.sleep(1)
        print("a process exited; stopping the others", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        lab.stop()


if __name__ == "__main__":
    sys.exit(main())
