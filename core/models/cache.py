"""A per-user folder for things we derive once from installed files (e.g. SmolLM2 de-quantised from GGUF).

Location: $ATTENTION_LAB_CACHE, else $XDG_CACHE_HOME/attention-lab, else ~/.cache/attention-lab.

A cached folder is only ever used complete and intact:
- it is built in a temporary sibling folder, its marker file (what it was built from, and the size of every
  file the build wrote) is written last, and the folder is renamed into place in one step, so a crash
  mid-build leaves at most a stray temporary folder (removed on the next build), never a broken cache;
- a folder whose marker does not match what we would build now (the source's content changed, or our
  format did), or whose files are missing or not the size the build wrote (truncated by a full disk, say),
  is rebuilt, never loaded;
- processes that find no valid folder at once build it one at a time under a lock file beside it: the
  first builds, the others wait and then use its folder (a class's server processes, or CI's test workers,
  starting together convert once, not once each).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent builds still end in one valid folder
    fcntl = None

MARKER = "attention-lab-cache.json"
TMP_PREFIX = ".tmp-"
LOCK_SUFFIX = ".lock"


def cache_root() -> Path:
    if os.environ.get("ATTENTION_LAB_CACHE"):
        return Path(os.environ["ATTENTION_LAB_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "attention-lab"


def file_identity(path: Path, sha256: str | None = None) -> dict:
    """What identifies a source file's content: its name, size and sha256. Pass `sha256` when it is known
    already (a package's RECORD); else the file is hashed, once per process while its size and modification
    time stay the same. The modification time itself is no part of it: every fresh install of the same
    package gives the file a new one."""
    st = path.stat()
    digest = sha256 or _sha256(path.resolve(), st.st_size, st.st_mtime_ns)
    return {"file": path.name, "size": st.st_size, "sha256": digest}


@functools.lru_cache(maxsize=16)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:  # size, mtime: the cache key only
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_marker(folder: Path) -> dict | None:
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def is_valid(folder: Path, fingerprint: dict) -> bool:
    """Whether `folder` holds a complete build from `fingerprint`: its marker says so, and every file the
    build wrote is there at the size it was written (a stat per file; nothing is read)."""
    marker = read_marker(folder)
    if not marker or marker.get("source") != fingerprint or not isinstance(marker.get("files"), dict):
        return False
    try:
        return all((folder / name).stat().st_size == size for name, size in marker["files"].items())
    except OSError:
        return False


def ensure_cached(folder: Path, fingerprint: dict, build: Callable[[Path], None]) -> Path:
    """`folder`, built by `build(tmp_folder)` unless it already holds an intact build with this fingerprint.

    `fingerprint` must be JSON-serialisable and say everything the build depends on. Raises OSError when the
    cache cannot be written (the caller can then build without caching) and whatever `build` raises (after
    removing its temporary folder)."""
    if is_valid(folder, fingerprint):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _build_lock(folder):
        if is_valid(folder, fingerprint):  # another process built it while we waited
            return folder
        _remove_stale_tmp(folder)
        tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{folder.name}-", dir=folder.parent))
        try:
            build(tmp)
            files = {str(p.relative_to(tmp)): p.stat().st_size for p in sorted(tmp.rglob("*")) if p.is_file()}
            marker = {"source": fingerprint, "files": files}
            (tmp / MARKER).write_text(json.dumps(marker, sort_keys=True), encoding="utf-8")
            os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache is as readable as any other
            _move_aside(folder)  # stale or damaged (rename cannot replace a folder)
            try:
                os.replace(tmp, folder)
            except OSError:
                # Another process without the lock (no fcntl) put a folder there meanwhile: use it if good.
                if not is_valid(folder, fingerprint):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


@contextlib.contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """Held while `folder` is built or removed: an advisory lock on a file beside it (released by the
    kernel if the process dies, so a crashed build never blocks the next)."""
    if fcntl is None:
        yield
        return
    with open(folder.parent / f".{folder.name}{LOCK_SUFFIX}", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _move_aside(folder: Path) -> None:
    if folder.exists():
        old = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{folder.name}-old-", dir=folder.parent))
        os.replace(folder, old / "stale")
        shutil.rmtree(old, ignore_errors=True)


def _remove_stale_tmp(folder: Path) -> None:
    """Temporary folders of crashed builds of `folder` (older than an hour: belt and braces, as the lock
    already keeps out any build running in another process right now)."""
    for p in folder.parent.glob(f"{TMP_PREFIX}{folder.name}-*"):
        try:
            if time.time() - p.stat().st_mtime > 3600:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass


def remove(folder: Path) -> None:
    """Drop a cached folder (e.g. it failed to load); waits for a build of it in another process to end."""
    try:
        with _build_lock(folder):
            _move_aside(folder)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
