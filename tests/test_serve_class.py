"""scripts/serve_class.py (`bash scripts/dev.sh serve`): one server per core behind nginx, sticky by cookie."""

from __future__ import annotations

import asyncio
import shutil
import urllib.request
from pathlib import Path

import pytest

from scripts import serve_class as sc
from scripts.app_server import free_port

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def test_the_config_is_compose_nginx_with_one_server_per_process(tmp_path):
    text = sc.nginx_config(sc.NGINX_CONF.read_text(), [9001, 9002, 9003], 9100, tmp_path)
    servers = [line.split()[1] for line in text.splitlines() if line.strip().startswith("server 127.0.0.1:")]
    assert servers == ["127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003"]
    assert "listen 9100;" in text and "listen 8080;" not in text
    directives = [line.split("#")[0] for line in text.splitlines()]
    assert any("hash $lab_route consistent;" in d for d in directives)  # the browser's cookie,
    assert not any("ip_hash" in d or "remote_addr" in d for d in directives)  # never the classroom's address
    for name in sc.TEMP_DIRS:
        assert f"{name}_temp_path {tmp_path / name};" in text
    assert text.startswith(f"pid {tmp_path / 'nginx.pid'};")


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx-light)")
def test_nginx_accepts_the_config(tmp_path):
    import subprocess

    for name in sc.TEMP_DIRS:
        (tmp_path / name).mkdir()
    conf = tmp_path / "nginx.conf"
    conf.write_text(sc.nginx_config(sc.NGINX_CONF.read_text(), [9001, 9002], 9100, tmp_path))
    out = subprocess.run([NGINX, "-e", "stderr", "-t", "-p", str(tmp_path), "-c", str(conf)], capture_output=True,
                         text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr


def get(port: int, cookie: str | None = None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/")
    if cookie:
        req.add_header("Cookie", cookie)
    with DIRECT.open(req, timeout=30) as r:
        r.read()
        return r.headers.get("X-Lab-Replica"), r.headers.get("Set-Cookie")


@pytest.mark.slow
@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx-light)")
def test_two_servers_start_and_each_browser_sticks_to_one(tmp_path):
    from scripts.load_test import StreamlitSession

    ports = [free_port(), free_port()]
    lab = sc.Class(ports, free_port(), tmp_path / "run", tmp_path / "logs")
    lab.start()
    try:
        seen = set()
        for _ in range(16):  # fresh browsers: each gets a cookie and keeps its replica
            replica, cookie = get(lab.listen)
            assert cookie and cookie.startswith("lab_route=")
            key = cookie.split(";")[0]
            for _ in range(3):
                again, new_cookie = get(lab.listen, key)
                assert again == replica and new_cookie is None
            seen.add(replica)
        assert seen == {f"127.0.0.1:{p}" for p in ports}  # 16 browsers all on one of two: p = 2 / 2**16

        async def page() -> int:  # a whole page through the proxy: HTML, websocket, script run
            s = StreamlitSession(lab.listen, 120)
            try:
                result = await s.open("")
                return len(result.exceptions)
            finally:
                await s.close()

        assert asyncio.run(page()) == 0
    finally:
        lab.stop()
    assert all(p.poll() is not None for p in lab.procs)
