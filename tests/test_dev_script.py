"""scripts/dev.sh's own logic: which pytest arguments make `dev.sh test` install the browser the browser tests drive
(Debian's chromium headless shell) when it is missing (a selection that may hold browser tests must get it, or they
are skipped, "chromium-headless-shell is missing", on a fresh machine); that it writes pytest's rewritten test files
once, before its workers start."""

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


def test_the_test_files_are_rewritten_once_before_the_workers_start(tmp_path):
    """pytest rewrites each test file's asserts; with PYTHONDONTWRITEBYTECODE (CI's) every worker did it again. dev.sh
    test writes the rewritten bytecode first, where pytest's loader looks for it, and the code it holds reports the
    values an assert compared."""
    import sys

    from scripts import compile_test_files

    script = DEV_SH.read_text()
    test_command = script[script.index("\n  test)") : script.index("\n  quick)")]
    assert "scripts/compile_test_files.py tests" in script and "test_bytecode" in test_command, (
        "dev.sh test leaves each worker to rewrite the test files"
    )
    (tmp_path / "pages").mkdir()
    sample = tmp_path / "pages" / "test_sample.py"
    sample.write_text("def test_sum():\n    total = 1 + 1\n    assert total == 3\n")
    (tmp_path / "helpers.py").write_text("VALUE = 1\n")
    (tmp_path / "conftest.py").write_text("")
    assert compile_test_files.test_files([tmp_path]) == [tmp_path / "conftest.py", sample]

    assert compile_test_files.compile_one(sample)
    cached = (
        sample.parent / "__pycache__" / f"test_sample.{sys.implementation.cache_tag}-pytest-{pytest.__version__}.pyc"
    )
    from _pytest.assertion.rewrite import _read_pyc

    code = _read_pyc(sample, cached)
    assert code is not None, "no rewritten bytecode where pytest's loader looks"
    namespace: dict = {}
    exec(code, namespace)
    with pytest.raises(AssertionError, match=r"assert 2 == 3"):
        namespace["test_sum"]()
    sample.write_text("def test_sum():\n    assert 2 == 2\n")
    assert _read_pyc(sample, cached) is None, "a changed file's old bytecode is used"
