"""A per-user folder for things we derive once from installed files (e.g. SmolLM2 de-quantised from GGUF).

Location: $ATTENTION_LAB_CACHE, else $XDG_CACHE_HOME/attention-lab, else ~/.cache/attention-lab.

A cached folder is only ever seen complete: it is built in a temporary sibling folder, its marker file
(recording what it was built from) is written last, and the folder is renamed into place in one step. A
crash mid-build leaves at most a stray temporary folder (removed on the next build), never a broken cache.
A folder whose marker does not match what we would build now (the source file changed, or our format did)
is rebuilt.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MARKER = "attention-lab-cache.json"
TMP_PREFIX = ".tmp-"


def cache_root() -> Path:
    if os.environ.get("ATTENTION_LAB_CACHE"):
        return Path(os.environ["ATTENTION_LAB_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "attention-lab"


def file_fingerprint(path: Path) -> dict:
    """What identifies a source file cheaply: its name, size and modification time (ns)."""
    st = path.stat()
    return {"file": path.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def read_marker(folder: Path) -> dict | None:
    try:
        return json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_valid(folder: Path, fingerprint: dict) -> bool:
    return read_marker(folder) == fingerprint


def ensure_cached(folder: Path, fingerprint: dict, build: Callable[[Path], None]) -> Path:
    """`folder`, built by `build(tmp_folder)` unless it already holds a build with this fingerprint.

    `fingerprint` must be JSON-serialisable and say everything the build depends on. Raises OSError when the
    cache cannot be written (the caller can then build without caching) and whatever `build` raises (after
    removing its temporary folder)."""
    if is_valid(folder, fingerprint):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(folder)
    tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{folder.name}-", dir=folder.parent))
    try:
        build(tmp)
        (tmp / MARKER).write_text(json.dumps(fingerprint, sort_keys=True), encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache is as readable as any other
        if folder.exists():  # stale: move it out of the way first (rename cannot replace a folder)
            old = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{folder.name}-old-", dir=folder.parent))
            os.replace(folder, old / "stale")
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.replace(tmp, folder)
        except OSError:
            # Another process put a folder there meanwhile: use it if it is good.
            if not is_valid(folder, fingerprint):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _remove_stale_tmp(folder: Path) -> None:
    """Temporary folders of crashed builds of `folder` (older than an hour, so a build running in another
    process right now is left alone)."""
    for p in folder.parent.glob(f"{TMP_PREFIX}{folder.name}-*"):
        try:
            if time.time() - p.stat().st_mtime > 3600:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass


def remove(folder: Path) -> None:
    """Drop a cached folder (e.g. it failed to load)."""
    shutil.rmtree(folder, ignore_errors=True)
