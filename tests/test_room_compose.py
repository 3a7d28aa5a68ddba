"""compose.yaml's replicas share one PostgreSQL for study rooms (a facilitator on one replica, learners on the
other: the same room), built from Debian's package like the rest of the stack (no registry image needed), on a
private network, with a password and a role that is no superuser. The entrypoint runs here for real (no Docker
needed: it is a shell script around initdb and postgres)."""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from scripts.app_server import free_port

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
ENTRYPOINT = ROOT / "deploy" / "postgres" / "entrypoint.sh"
PASSWORD = "${LAB_DB_PASSWORD:?"  # compose refuses to start without it


def test_replicas_share_one_database_with_a_password_and_wait_for_it():
    services = COMPOSE["services"]
    replicas = [n for n, s in services.items() if "STREAMLIT_SERVER_PORT" in s.get("environment", {})]
    urls = {services[n]["environment"]["DATABASE_URL"] for n in replicas}
    assert len(replicas) == 2 and len(urls) == 1
    url = next(iter(urls))
    assert url.startswith(f"postgresql://lab:{PASSWORD}") and "@127.0.0.1:${DB_PORT:-5432}/attention_lab" in url
    for n in replicas:
        assert services[n]["depends_on"]["db"]["condition"] == "service_healthy"


def test_both_replicas_ask_for_the_one_passcode_the_operator_must_set():
    """A class's replicas are never open for anyone to fill with rooms: compose refuses to start without
    LAB_ROOM_PASSCODE, and both replicas ask for it (a room opened on either is opened with the same one)."""
    services = COMPOSE["services"]
    replicas = [n for n, s in services.items() if "STREAMLIT_SERVER_PORT" in s.get("environment", {})]
    passcodes = {services[n]["environment"].get("ATTENTION_LAB_ROOM_PASSCODE") for n in replicas}
    assert len(passcodes) == 1 and next(iter(passcodes)).startswith("${LAB_ROOM_PASSCODE:?"), passcodes
    readme = (ROOT / "README.md").read_text()
    assert 'echo "LAB_ROOM_PASSCODE=' in readme and ">> .env" in readme


def test_the_database_is_debian_postgresql_on_a_private_network_with_a_volume():
    db = COMPOSE["services"]["db"]
    assert db["build"]["context"] == "deploy/postgres" and "network_mode" not in db  # not the host's network
    assert db["networks"] == ["rooms"] and "rooms" in COMPOSE["networks"]
    assert all(p.startswith("127.0.0.1:") for p in db["ports"])  # published on the host's loopback only
    assert db["environment"]["LAB_DB_PASSWORD"].startswith(PASSWORD)
    assert db["build"]["args"]["BASE"] == "${LAB_BASE_IMAGE:-python:3.11-slim}"  # the app image's base
    assert any(v.endswith(":/var/lib/postgresql/data") for v in db["volumes"]) and "rooms" in COMPOSE["volumes"]
    dockerfile = (ROOT / "deploy/postgres/Dockerfile").read_text()
    assert "apt-get install -y --no-install-recommends postgresql" in dockerfile and "USER postgres" in dockerfile
    code = [line.split("#")[0] for line in ENTRYPOINT.read_text().splitlines()]
    assert not any("trust" in line for line in code)


def bin_dir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"))
    if not found:  # scripts/postgres.sh installs it; dev.sh test runs that first
        subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "url"], capture_output=True)
        pytest.fail("PostgreSQL is not installed (bash scripts/postgres.sh start installs it)")
    return found[-1].parent


@pytest.fixture
def entrypoint_db():
    """deploy/postgres/entrypoint.sh run as the image runs it (as `postgres` when this is root), on 127.0.0.1."""
    data = Path(f"/tmp/attention-lab-entrypoint-{os.getpid()}")
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(mode=0o700)
    port = free_port()
    env = dict(os.environ, PGDATA=str(data / "pgdata"), PGPORT=str(port), PGLISTEN="127.0.0.1",
               PGSOCKET=str(data), LAB_DB_PASSWORD="s3cret-Pass_word")  # fmt: skip
    command = ["bash", str(ENTRYPOINT)]
    if os.geteuid() == 0:
        shutil.chown(data, user="postgres")
        command = ["runuser", "-u", "postgres", "--", "env", *(f"{k}={env[k]}" for k in
                   ("PGDATA", "PGPORT", "PGLISTEN", "PGSOCKET", "LAB_DB_PASSWORD")), *command]  # fmt: skip
    proc = subprocess.Popen(command, env=env, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while subprocess.run([str(bin_dir() / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-q"]).returncode:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read().decode()[-2000:]
            time.sleep(0.3)
        yield port, data
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(30)
        shutil.rmtree(data, ignore_errors=True)


def test_the_entrypoint_asks_lab_for_its_password_and_lab_is_no_superuser(entrypoint_db):
    import psycopg

    port, data = entrypoint_db
    with psycopg.connect(host="127.0.0.1", port=port, user="lab", password="s3cret-Pass_word",
                         dbname="attention_lab", connect_timeout=5) as conn:  # fmt: skip
        assert conn.execute("SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user"
                            ).fetchone() == (False, False, False)  # fmt: skip
    for user, password, db in (("lab", None, "attention_lab"), ("lab", "wrong", "attention_lab"),
                               ("postgres", None, "postgres"), ("postgres", "postgres", "postgres"),
                               ("lab", "s3cret-Pass_word", "postgres")):  # fmt: skip
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(host="127.0.0.1", port=port, user=user, password=password or "", dbname=db,
                            connect_timeout=5).close()  # fmt: skip
    hba = (data / "pgdata" / "pg_hba.conf").read_text()
    assert "trust" not in hba and "scram-sha-256" in hba


def test_the_entrypoint_refuses_a_first_start_without_a_password_or_with_a_short_or_unsafe_one(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "LAB_DB_PASSWORD"}
    done = subprocess.run(["bash", str(ENTRYPOINT)], env={**env, "PGDATA": str(tmp_path / "pgdata")},
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0 and "LAB_DB_PASSWORD" in done.stderr
    done = subprocess.run(["bash", str(ENTRYPOINT)], env={**env, "PGDATA": str(tmp_path / "pgdata"),
                          "LAB_DB_PASSWORD": "x'; DROP"}, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0 and "letters, digits" in done.stderr
    done = subprocess.run(["bash", str(ENTRYPOINT)], env={**env, "PGDATA": str(tmp_path / "pgdata"),
                          "LAB_DB_PASSWORD": "lab-2026"}, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0 and "at least 16 characters" in done.stderr
    assert not (tmp_path / "pgdata").exists()


def test_the_password_file_compose_reads_is_never_committed_nor_copied_into_the_image():
    # README: `echo "LAB_DB_PASSWORD=..." > .env` beside compose.yaml; compose reads it, git and the image must not
    assert subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=ROOT).returncode == 0
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    assert ".env" in ignored  # the Dockerfile copies the whole folder (COPY . .)
    assert 'LAB_DB_PASSWORD=$(openssl rand -hex 24)" > .env' in (ROOT / "README.md").read_text()
