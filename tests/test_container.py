"""The container and the replicas: the files agree with each other (always run, no Docker needed), and the
image, built here, passes scripts/container_check.py (marked `container`, excluded by default in pyproject's
addopts; skipped unless a Docker daemon answers and attention-lab:latest exists).

    .venv/bin/python -m pytest -q -p no:cacheprovider -m container tests/test_container.py
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scripts import container_check

ROOT = Path(__file__).resolve().parents[1]
NGINX_CONF = (ROOT / "deploy" / "nginx.conf").read_text()
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def replica_ports() -> dict[str, int]:
    return {
        name: int(svc["environment"]["STREAMLIT_SERVER_PORT"])
        for name, svc in COMPOSE["services"].items()
        if "STREAMLIT_SERVER_PORT" in svc.get("environment", {})
    }


def test_nginx_upstreams_are_the_compose_replicas():
    upstreams = sorted(int(p) for p in re.findall(r"^\s*server 127\.0\.0\.1:(\d+)", NGINX_CONF, re.M))
    assert upstreams == sorted(replica_ports().values()) == [8601, 8602]
    assert {f"127.0.0.1:{port}": name for name, port in replica_ports().items()} == container_check.REPLICAS
    assert re.search(r"^\s*listen 8080;", NGINX_CONF, re.M) and container_check.PROXY.endswith(":8080")


def test_replicas_and_proxy_are_on_the_host_network_and_replicas_listen_on_loopback_only():
    for name, svc in COMPOSE["services"].items():  # the database is on a private network (tests/test_room_compose.py)
        assert svc.get("network_mode") == ("host" if name != "db" else None), name
    for name in replica_ports():
        assert COMPOSE["services"][name]["environment"]["STREAMLIT_SERVER_ADDRESS"] == "127.0.0.1", name
    proxy_waits_for = COMPOSE["services"]["proxy"]["depends_on"]
    assert {n: c["condition"] for n, c in proxy_waits_for.items()} == dict.fromkeys(replica_ports(), "service_healthy")


def test_sticky_key_is_a_cookie_hashed_consistently():
    assert "hash $lab_route consistent;" in NGINX_CONF
    assert "ip_hash" not in NGINX_CONF.split("#")[0]  # a class behind one address would all land on one replica
    assert re.search(r'""\s+"lab_route=\$request_id;', NGINX_CONF)
    assert "proxy_set_header Upgrade $http_upgrade;" in NGINX_CONF


def test_dockerfile_is_the_ordinary_one_with_a_swappable_base_and_a_non_root_user():
    lines = [ln.strip() for ln in DOCKERFILE.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines[0] == "ARG BASE=python:3.11-slim" and lines[1] == "FROM ${BASE}"
    users = [ln for ln in lines if ln.startswith("USER ")]
    assert users and users[-1] == "USER lab"
    assert lines.index(users[-1]) < next(i for i, ln in enumerate(lines) if ln.startswith("CMD "))
    assert "STREAMLIT_SERVER_PORT" in next(ln for ln in lines if ln.startswith('CMD ["python", "-c"'))


def test_parse_log_reads_routes_replicas_and_retries():
    text = (
        '2026-11-23T20:00:00+00:00 route=abc upstream=127.0.0.1:8601 status=200 upstream_status=200 "GET /" rt=0.010\n'
        "2026-11-23T20:00:01+00:00 route=abc upstream=127.0.0.1:8601, 127.0.0.1:8602 status=101 "
        'upstream_status=502, 101 "GET /_stcore/stream" rt=9.000\n'
        '2026-11-23T20:00:02+00:00 route=xyz upstream=- status=499 upstream_status=- "GET /x" rt=0.000\n'
    )
    rows = container_check.parse_log(text)
    assert [r["route"] for r in rows] == ["abc", "abc", "xyz"]
    assert rows[0]["upstreams"] == ["127.0.0.1:8601"] and rows[0]["uri"] == "/"
    assert rows[1]["upstreams"] == ["127.0.0.1:8601", "127.0.0.1:8602"] and rows[1]["status"] == 101
    assert rows[2]["upstreams"] == [] and rows[2]["status"] == 499


def docker_ready() -> str | None:
    """None when a daemon answers and the image exists, else why not."""
    if shutil.which("docker") is None:
        return "no docker client"
    info = subprocess.run(["docker", "image", "inspect", container_check.IMAGE], capture_output=True, timeout=30)
    return None if info.returncode == 0 else "no Docker daemon, or attention-lab:latest not built"


@pytest.mark.container
@pytest.mark.slow
def test_container_check_single_and_compose(tmp_path):
    """The whole check on the built image (about 5 minutes on 2 cores): no-network run, healthcheck, smoke,
    sticky / spread / failover behind nginx. The script asserts; its exit code is the verdict."""
    reason = docker_ready()
    if reason:
        pytest.skip(reason)
    script = ROOT / "scripts" / "container_check.py"
    run = subprocess.run([sys.executable, str(script), "--no-build"], capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
