"""A short run of the room fault script (scripts/fault_room.py): two servers behind nginx on a PostgreSQL of its
own; one server killed mid-question, everything restarted mid-question, the database away for a few seconds. The
learners stay the same learners, every answer is kept once, each session says the database is away in words and
comes back, and no session shows an exception box. results/fault_room.json holds the full run's figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scripts import fault_room

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)


@pytest.mark.slow
@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx-light)")
def test_a_room_survives_a_killed_server_a_restart_and_the_database_away(tmp_path):
    out = tmp_path / "fault.json"
    code = fault_room.main(["--learners", "2", "--db-away-s", "5", "--timeout", "60", "--out", str(out)])
    result = json.loads(out.read_text())
    kill, restart, away = result["kill"], result["restart"], result["db_away"]
    assert kill["sessions_moved"] >= 1 and kill["all_back"], kill  # the killed server's sessions, on the other
    assert kill["after"] == {"learners": 2, "answers": 2} and kill["histogram_shows_all"], kill
    assert restart["answers_kept_over_restart"] and restart["after"] == {"learners": 2, "answers": 2}, restart
    assert away["sessions_told"] == "4/4" and away["click_while_away_kept_nothing"], away
    assert away["stop_to_sentence"]["max_ms"] <= 6500 and away["facilitator_page_redrawn"], away
    assert not result["exception_boxes"] and not result["something_went_wrong"]
    assert code == 0 and result["ok"]
    assert {"command", "date", "machine", "loadavg_before", "loadavg_after"} <= set(result)
