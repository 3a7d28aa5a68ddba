"""scripts/dev.sh's own logic, run in bash: which pytest arguments make `dev.sh test` install the browser the
browser tests drive (Debian's chromium headless shell) when it is missing. A selection that may hold browser tests
must get it, or they are skipped ("chromium-headless-shell is missing") on a fresh machine."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

DEV_SH = Path(__file__).resolve().parents[1] / "scripts" / "dev.sh"


def selects_browser(*args: str) -> bool:
    """dev.sh's selects_browser, taken out of the script and run by bash on these arguments."""
    function = subprocess.run(
        ["sed", "-n", "/^selects_browser() {/,/^}/p", str(DEV_SH)], capture_output=True, text=True, check=True
    ).stdout
    assert function.startswith("selects_browser() {"), "dev.sh declares no selects_browser"
    done = subprocess.run(["bash", "-c", function + '\nselects_browser "$@"', "dev.sh", *args], check=False)
    return done.returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        (),  # the whole suite: .ci/run
        ("-x",),
        ("--durations=20", "--junitxml=/tmp/run.xml"),  # the whole suite, timed
        ("--durations", "20"),
        ("-k", "masks"),  # may name a browser test: installed to be safe
        ("tests",),
        ("tests/test_browser.py",),
        ("tests/test_browser_room.py::test_facilitator_and_two_learners", "-x"),
        ("-m", "browser"),
    ],
)
def test_a_selection_that_may_hold_browser_tests_gets_the_browser(args):
    assert selects_browser(*args)


@pytest.mark.parametrize(
    "args",
    [
        ("tests/core/test_masks.py", "-x"),
        ("tests/pages",),
        ("tests/core/test_masks.py::test_causal_mask_is_lower_triangular",),
        ("-m", "not browser"),
        ("-m", "not slow and not browser"),
    ],
)
def test_a_selection_without_browser_tests_installs_no_browser(args):
    assert not selects_browser(*args)
