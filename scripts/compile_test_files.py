"""Writes pytest's bytecode of the test files (their asserts rewritten) once, before the test workers start.

pytest imports each test file and conftest.py through its own loader, which rewrites the asserts (so a failure shows
the values compared) and caches the result in __pycache__ under a name of its own (test_x.cpython-311-pytest-9.2.0.pyc).
With PYTHONDONTWRITEBYTECODE set, as in CI, it writes no cache: each worker rewrote and compiled every test file
again, about 11 s of CPU per worker. The cache is read even where writing is off, so written once here, both
workers load it. pytest checks each cached file against its source's hash, so a stale one is only rewritten again.
The rewriting is pytest's own (the functions its loader calls): a pytest without them leaves the files as they were,
to be rewritten by each worker as before.

    python scripts/compile_test_files.py [FOLDER ...]    (default: tests)
"""

from __future__ import annotations

import fnmatch
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import SimpleNamespace

# pytest's python_files default, which pyproject.toml keeps; conftest.py files are rewritten too.
TEST_FILE_PATTERNS = ("test_*.py", "*_test.py", "conftest.py")


def test_files(folders: list[Path]) -> list[Path]:
    return sorted(
        path
        for folder in folders
        for path in folder.rglob("*.py")
        if "__pycache__" not in path.parts and any(fnmatch.fnmatch(path.name, p) for p in TEST_FILE_PATTERNS)
    )


def cached_path(source: Path) -> Path:
    """Where pytest's loader looks for the rewritten bytecode of `source`."""
    from _pytest.assertion import rewrite

    return rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)


def compile_one(source: Path) -> bool:
    from _pytest.assertion import rewrite

    source = source.resolve()
    pyc = cached_path(source)
    if rewrite._read_pyc(source, pyc) is not None:
        return True
    if not rewrite.try_makedirs(pyc.parent):
        return False
    source_hash, code = rewrite._rewrite_test(source, None)
    quiet = SimpleNamespace(trace=lambda message: None)  # _write_pyc reads only the state's trace
    return rewrite._write_pyc(quiet, code, source_hash, pyc)


def main(argv: list[str]) -> int:
    files = test_files([Path(a) for a in argv] or [Path("tests")])
    try:
        with ProcessPoolExecutor() as pool:
            written = sum(pool.map(compile_one, files, chunksize=8))
    except (ImportError, AttributeError, TypeError) as error:  # another pytest: each worker rewrites, as before
        print(f"test files not compiled ({error!r}): each test worker rewrites them", file=sys.stderr)
        return 0
    if written < len(files):
        print(f"{len(files) - written} of {len(files)} test files not compiled (read-only folder?)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
