"""Loading the committed measurements in results/ (benchmarks and experiment scripts write them; pages read them).

One reader for every results file: a page shows a missing, unreadable or wrongly shaped file as "not measured
yet", never as an exception, so each caller states the shape it needs with `required` and gets None otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"


def results_path(name: str) -> Path:
    """results/<name>.json (name without the extension)."""
    return RESULTS_DIR / f"{name}.json"


def load_result(name_or_path: str | Path, required: Callable[[Any], bool] | None = None) -> dict | None:
    """The parsed JSON of results/<name>.json (or of a path), or None when it is missing, unreadable, not a JSON
    object, or `required(data)` is false or raises KeyError/TypeError/IndexError (a file of another shape)."""
    path = (
        Path(name_or_path)
        if isinstance(name_or_path, Path) or str(name_or_path).endswith(".json")
        else results_path(str(name_or_path))
    )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    if required is not None:
        try:
            if not required(data):
                return None
        except (KeyError, TypeError, IndexError):
            return None
    return data


def save_result(name_or_path: str | Path, data: dict) -> Path:
    """Write a results file (UTF-8, indented, keys in insertion order, newline at the end); returns its path."""
    path = (
        Path(name_or_path)
        if isinstance(name_or_path, Path) or str(name_or_path).endswith(".json")
        else results_path(str(name_or_path))
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
