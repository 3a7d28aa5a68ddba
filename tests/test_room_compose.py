"""compose.yaml's replicas share one PostgreSQL for study rooms (a facilitator on one replica, learners on the
other: the same room), built from Debian's package like the rest of the stack (no registry image needed)."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_replicas_share_one_database_and_wait_for_it():
    services = COMPOSE["services"]
    replicas = [n for n, s in services.items() if "STREAMLIT_SERVER_PORT" in s.get("environment", {})]
    urls = {services[n]["environment"]["DATABASE_URL"] for n in replicas}
    assert len(replicas) == 2 and len(urls) == 1 and next(iter(urls)).startswith("postgresql://lab@127.0.0.1:")
    for n in replicas:
        assert services[n]["depends_on"]["db"]["condition"] == "service_healthy"


def test_the_database_is_debian_postgresql_on_loopback_with_a_volume():
    db = COMPOSE["services"]["db"]
    assert db["build"]["context"] == "deploy/postgres" and db["network_mode"] == "host"
    assert db["build"]["args"]["BASE"] == "${LAB_BASE_IMAGE:-python:3.11-slim}"  # the app image's base
    assert any(v.endswith(":/var/lib/postgresql/data") for v in db["volumes"]) and "rooms" in COMPOSE["volumes"]
    dockerfile = (ROOT / "deploy/postgres/Dockerfile").read_text()
    entrypoint = (ROOT / "deploy/postgres/entrypoint.sh").read_text()
    assert "apt-get install -y --no-install-recommends postgresql" in dockerfile and "USER postgres" in dockerfile
    assert "listen_addresses=127.0.0.1" in entrypoint and "CREATE DATABASE attention_lab OWNER lab" in entrypoint
