"""scripts/postgres.sh, the local PostgreSQL of tests and laptops: every connection needs a password
(scram-sha-256, no trust), the app's role is no superuser, and the cluster lives in a private folder. Run on a
cluster of its own (a free port and a fresh folder), so the shared test cluster is left alone."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from core.room.service import rooms_on
from core.room.sql import PostgresStore
from scripts.app_server import free_port

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "postgres.sh"


def script(action: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), action], env=env, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def cluster():
    """(DATABASE_URL, the private folder, the script's environment) of a cluster of this module's own."""
    state = Path(f"/tmp/attention-lab-pg-check-{os.getpid()}")  # made by the script (a folder `postgres` can reach)
    env = dict(os.environ, ATTENTION_LAB_PGPORT=str(free_port()), ATTENTION_LAB_PGDATA=str(state))
    done = script("start", env)
    if done.returncode != 0:
        pytest.fail(f"scripts/postgres.sh start said {done.stderr.strip()}")
    try:
        yield done.stdout.strip().splitlines()[-1], state, env
    finally:
        script("stop", env)
        shutil.rmtree(state, ignore_errors=True)


def connect(url: str, **changes):
    import psycopg

    parts = urlsplit(url)
    params = {"host": parts.hostname, "port": parts.port, "dbname": parts.path.lstrip("/"),
              "user": parts.username, "password": parts.password, "connect_timeout": 5}  # fmt: skip
    params.update(changes)
    return psycopg.connect(**{k: v for k, v in params.items() if v is not None})


def test_the_url_carries_a_password_and_the_role_is_no_superuser(cluster):
    url, _, env = cluster
    parts = urlsplit(url)
    assert parts.username == "lab" and len(parts.password or "") >= 32
    assert script("url", env).stdout.strip() == url  # the same URL again, nothing started
    with connect(url) as conn:
        row = conn.execute("SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls "
                           "FROM pg_roles WHERE rolname = current_user").fetchone()  # fmt: skip
        assert row == (False, False, False, False, False)
        assert conn.execute("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()"
                            ).fetchone() == ("lab",)  # fmt: skip


def test_nobody_gets_in_without_the_password(cluster):
    import psycopg

    url, _, _ = cluster
    refused = ({"password": None}, {"password": "wrong"}, {"user": "postgres", "password": None},
               {"user": "postgres", "password": "postgres"}, {"user": "postgres", "dbname": "postgres"})  # fmt: skip
    for changes in refused:
        with pytest.raises(psycopg.OperationalError, match="password"):
            connect(url, **changes).close()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None, reason="needs root to act as `nobody`")
def test_another_user_of_the_host_cannot_connect_as_superuser(cluster):
    _, _, env = cluster
    psql = sorted(Path("/usr/lib/postgresql").glob("*/bin/psql"))[-1]
    port = env["ATTENTION_LAB_PGPORT"]
    run = subprocess.run(["runuser", "-u", "nobody", "--", str(psql), "-h", "127.0.0.1", "-p", port,
                          "-U", "postgres", "-d", "postgres", "-w", "-tAc", "SELECT rolsuper FROM pg_roles LIMIT 1"],
                         capture_output=True, text=True, timeout=30, cwd="/")  # fmt: skip
    assert run.returncode != 0 and "password" in run.stderr, (run.stdout, run.stderr)


def test_no_trust_and_a_private_folder(cluster):
    _, state, _ = cluster
    hba = [line.split() for line in (state / "cluster" / "pg_hba.conf").read_text().splitlines()]
    methods = {fields[-1] for fields in hba if fields and not fields[0].startswith("#")}
    assert methods == {"scram-sha-256"}, methods
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(state) == (0o711 if os.geteuid() == 0 else 0o700)  # others cannot list it or read in it
    assert mode(state / "cluster") == 0o700
    for secret in ("postgres.password", "lab.password"):
        assert mode(state / secret) == 0o600
    assert not (state / "initdb.password").exists()


def test_a_folder_someone_else_could_have_prepared_is_refused(tmp_path):
    opened = tmp_path / "open"
    opened.mkdir(mode=0o777)
    opened.chmod(0o777)
    linked = tmp_path / "linked"
    linked.symlink_to(opened)
    for folder in (opened, linked):
        env = dict(os.environ, ATTENTION_LAB_PGPORT=str(free_port()), ATTENTION_LAB_PGDATA=str(folder))
        done = script("start", env)
        assert done.returncode != 0 and "refusing" in done.stderr, (folder, done.stderr)
    assert list(opened.iterdir()) == []


def test_the_room_store_works_with_the_printed_url(cluster):
    url, _, _ = cluster
    store = rooms_on(PostgresStore(url))
    try:
        code, _ = store.create("qkv-softmax")
        token = store.join(code, "Ana", "en")
        assert store.learner(code, token).name == "Ana"
    finally:
        store.close()


def test_two_workers_starting_it_at_once_share_one_cluster():
    import concurrent.futures

    state = f"/tmp/attention-lab-pg-twice-{os.getpid()}"
    env = dict(os.environ, ATTENTION_LAB_PGPORT=str(free_port()), ATTENTION_LAB_PGDATA=state)
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            runs = list(pool.map(lambda _: script("start", env), range(2)))
        assert [r.returncode for r in runs] == [0, 0], [r.stderr for r in runs]
        assert runs[0].stdout == runs[1].stdout  # one cluster, one password
    finally:
        script("stop", env)
        shutil.rmtree(state, ignore_errors=True)


def test_a_cluster_started_under_a_lock_does_not_keep_it(tmp_path):
    """`flock FILE bash scripts/postgres.sh start` (a measurement taken under a lock, a CI job's wrapper): the server
    outlives the command and must not hold the files it inherited, or the lock stays taken while the cluster runs."""
    state = f"/tmp/attention-lab-pg-lock-{os.getpid()}"
    env = dict(os.environ, ATTENTION_LAB_PGPORT=str(free_port()), ATTENTION_LAB_PGDATA=state)
    lock = tmp_path / "lock"
    try:
        done = subprocess.run(
            ["flock", str(lock), "bash", str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stderr
        free = subprocess.run(["flock", "-n", str(lock), "true"], timeout=30)
        assert free.returncode == 0, "the cluster kept the caller's lock"
    finally:
        script("stop", env)
        shutil.rmtree(state, ignore_errors=True)
