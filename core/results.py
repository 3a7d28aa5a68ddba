"""Loading the committed measurements in results/ (benchmarks and experiment scripts write them; pages read them).

One reader for every results file: a page shows a missing, unreadable or wrongly shaped file as "not measured
yet", never as an exception, so each caller states the shape it needs with `required` and gets None otherwise.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
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


def add_run(path: Path, label: str, command: str, measured: dict) -> None:
    """Add a measuring script's run to a results file that holds a list of runs (before and after a change): what it
    measured (`label`), its command, date and the commit measured, then `measured`."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    record = {"label": label, "command": command, "date": date, "commit": commit, **measured}
    kept = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    path.write_text(json.dumps([*kept, record], indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


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


# --- the machine a run was measured on ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Device:
    """The machine a results file was measured on, as fields a page puts in the reader's words."""

    kind: str  # "cpu" or "cuda"
    name: str | None  # the processor's or the GPU's name
    cores: int | None  # the machine's cores (a CPU run)
    threads: int | None  # torch's threads
    torch: str | None  # torch's version


DEVICE_FIELDS = ("device", "device_name", "cpu_count", "torch_threads", "torch")  # core.timing.machine_info's names
KINDS = ("cpu", "cuda")
# The one-line descriptions measuring scripts wrote before they wrote fields (results/antecedents.json,
# results/long_context*.json are kept as measured): read back into the same fields.
WRITTEN_DEVICE = (
    re.compile(r"(?i:cpu): (?P<name>.+), (?P<cores>\d+) cores, torch (?P<torch>\S+) \((?P<threads>\d+) threads\)"),
    re.compile(r"(?i:cpu): (?P<name>.+), (?P<threads>\d+) threads"),
    re.compile(r"(?i:cuda): (?P<name>.+)"),
)


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _word(value) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def device_of(res: dict) -> Device | None:
    """The machine of a results file (or run): its fields (DEVICE_FIELDS) where it has them, else the line an older
    script wrote in "device" read back; None when it names no device that either form describes."""
    written = res.get("device")
    if written in KINDS:
        return Device(
            written,
            _word(res.get("device_name")),
            _count(res.get("cpu_count")) if written == "cpu" else None,
            _count(res.get("torch_threads")),
            _word(res.get("torch")),
        )
    if not isinstance(written, str):
        return None
    for pattern in WRITTEN_DEVICE:
        found = pattern.fullmatch(written.strip())
        if found:
            parts = found.groupdict()
            return Device(
                "cuda" if pattern is WRITTEN_DEVICE[-1] else "cpu",
                parts["name"].strip(),
                int(parts["cores"]) if parts.get("cores") else None,
                int(parts["threads"]) if parts.get("threads") else None,
                parts.get("torch") or _word(res.get("torch")),
            )
    return None


# --- runs measured on a GPU ----------------------------------------------------------------------------------------

# results/<this>/: the benchmarks' GPU runs, committed with a README giving device, date, versions and commands
# (this machine has no GPU). A benchmark's own results/<name>.json holds this machine's runs.
GPU_RUNS_DIR = "gpu-h200-2026-11-27"


def gpu_result_name(name: str) -> str:
    """results/<GPU_RUNS_DIR>/<name>.json, the GPU run of the benchmark that writes results/<name>.json."""
    return f"{GPU_RUNS_DIR}/{name}"


def load_device_runs(
    name: str, is_run: Callable[[dict], bool], path: str | Path | None = None
) -> dict[str, dict | str] | None:
    """{device: run, or a sentence saying why it was not measured} of a benchmark that keys its runs by device.

    results/<name>.json holds this machine's runs (its "cuda" entry a sentence: no GPU here); a run of the same
    benchmark in results/<GPU_RUNS_DIR>/<name>.json takes that entry's place. An entry counts when it is a string
    or `is_run(entry)` holds; None when neither file has one. With `path`, that file alone."""

    def runs(data: dict) -> dict:
        out = {}
        for device, run in data.items():
            try:
                if isinstance(run, str) or (isinstance(run, dict) and is_run(run)):
                    out[device] = run
            except (KeyError, TypeError, IndexError):
                pass
        return out

    def read(source: str | Path) -> dict:
        data = load_result(source, required=lambda d: bool(runs(d)))
        return {} if data is None else runs(data)

    if path is not None:
        return read(path) or None
    merged = read(name)
    for device, run in read(gpu_result_name(name)).items():
        if not isinstance(run, str):
            merged[device] = run
    return merged or None
