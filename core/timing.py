"""Timing and memory helpers shared by the benchmark scripts and the pages' live runs.

Wall-clock timings on a shared machine are noisy: every helper reports the median of several repetitions after
a warm-up call, and `machine_info` records the load average next to the figures so a reader can judge them.

Peak memory:
- CUDA: `torch.cuda.max_memory_allocated` after resetting the peak, minus what was allocated before: exactly the
  extra memory the call needed from torch's allocator.
- CPU: torch's CPU allocations go through malloc, so Python's tracemalloc never sees them. We use the kernel's
  own high-water mark of the process's resident memory instead: writing "5" to /proc/self/clear_refs resets
  VmHWM to the current resident size (Linux >= 4.0), so VmHWM after the call minus VmRSS before it is the peak
  extra resident memory of the call (it includes allocator overhead and fragmentation, which is memory the
  machine really had to provide). Where /proc is not available the figure is reported as None, never guessed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import datetime as dt
import math
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from .results import DEVICE_FIELDS


def synchronize(device: torch.device | str | None) -> None:
    """Wait for queued GPU work, so a timer measures the work and not just its launch."""
    if device is not None and torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def time_ms(
    fn: Callable[[], object], reps: int = 5, warmup: int = 1, device=None, budget_s: float | None = None
) -> float:
    """Median wall time of fn() in milliseconds over `reps` calls after `warmup` untimed ones. With budget_s,
    stops repeating once that much time was spent (at least one timed call): live page runs stay bounded."""
    for _ in range(warmup):
        fn()
    synchronize(device)
    times: list[float] = []
    spent = 0.0
    for _ in range(max(1, reps)):
        t0 = time.perf_counter()
        fn()
        synchronize(device)
        dt_s = time.perf_counter() - t0
        times.append(dt_s * 1e3)
        spent += dt_s
        if budget_s is not None and spent >= budget_s:
            break
    return statistics.median(times)


def fit_loglog_slope(sizes, times, min_size: float | None = None) -> tuple[float, float]:
    """Least-squares line through (log n, log t): returns (slope, intercept), t ~ exp(intercept) * n**slope.
    A slope of 1 means time grows linearly with n, 2 quadratically. Small sizes are dominated by fixed
    per-call overhead (flat), so `min_size` drops them from the fit. Needs at least two points."""
    n = np.asarray(sizes, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64)
    keep = np.isfinite(t) & (t > 0) & (n > 0)
    if min_size is not None:
        keep &= n >= min_size
    if keep.sum() < 2:
        raise ValueError("a slope needs at least two timed sizes")
    slope, intercept = np.polyfit(np.log(n[keep]), np.log(t[keep]), 1)
    return float(slope), float(intercept)


# --- memory --------------------------------------------------------------------------------------------------


def _status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _load_libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


_LIBC = _load_libc()


def release_free_heap() -> None:
    """Hand memory the allocator keeps after free() back to the kernel (glibc's malloc_trim; a no-op elsewhere).

    Why: glibc keeps freed blocks below its (self-raising) mmap threshold resident, so a call that reuses an
    earlier call's freed buffers (say, the naive version's score matrix) would show almost no extra resident
    memory. After a trim, every page the measured call touches is counted."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


# glibc's mallopt parameter and the size from which a block is mapped on its own and unmapped when freed.
M_MMAP_THRESHOLD = -3
MAPPED_FROM_BYTES = 1 << 20


def map_large_blocks(threshold: int = MAPPED_FROM_BYTES) -> bool:
    """Give every block of `threshold` bytes or more its own mapping, returned to the kernel when freed (glibc's
    mallopt(M_MMAP_THRESHOLD); False where there is no glibc). Once per process that runs models.

    Why: by default glibc raises its mmap threshold to the size of each mapped block freed, so a layer's (H, n, n)
    scores land in the heap from the second layer on, where a freed block is reused only by one no larger and the
    next tensors go beside it: the resident peak of one and the same run varied from 11 to 35 MiB with the heap's
    history (a tiny Gemma 2 at 512 tokens, 10.7 MiB of tensors held at once) and a page's estimate could not be
    honest. With a fixed threshold the resident peak stays within 10 % of the tensors held at once
    (benchmarks/run_estimate.py), and what a visitor's run held is handed back after it."""
    if _LIBC is None or not hasattr(_LIBC, "mallopt"):
        return False
    done = bool(_LIBC.mallopt(M_MMAP_THRESHOLD, int(threshold)))
    _LIBC.malloc_trim(0)  # what the heap holds free now would otherwise take the next large blocks
    return done


def peak_rss_delta(fn: Callable[[], object]) -> tuple[object, int | None]:
    """(fn(), peak extra resident bytes during the call) on Linux; (fn(), None) where that cannot be measured."""
    release_free_heap()
    ok = _reset_peak_rss()
    before = _status_kb("VmRSS") if ok else None
    result = fn()
    peak = _status_kb("VmHWM") if ok else None
    if before is None or peak is None:
        return result, None
    return result, max(0, peak - before) * 1024


def torch_live_peak(fn) -> int:
    """The most bytes of tensors torch's CPU allocator held at once during fn() (its profiler's allocation and
    free events, summed in order; what fn returns stays allocated): the tensors alone, without what glibc's heap
    keeps beside them, which the resident peak includes."""
    from torch.profiler import ProfilerActivity, profile  # imported when asked: most callers never need it

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        kept = fn()
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events() if e.name() == "[memory]")
    live = peak = 0
    for _, nbytes in events:
        live += nbytes
        peak = max(peak, live)
    del kept
    return peak


def cuda_peak_delta(fn: Callable[[], object], device=None) -> tuple[object, int]:
    """(fn(), peak extra bytes torch's CUDA allocator handed out during the call)."""
    synchronize(device or "cuda")
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    result = fn()
    synchronize(device or "cuda")
    return result, max(0, torch.cuda.max_memory_allocated(device) - before)


# How a peak was measured, as the committed results name it, and the words a page uses for it (a locale key)
CUDA_PEAK_METHOD = "torch.cuda.max_memory_allocated delta"
RSS_PEAK_METHOD = "process peak RSS delta (VmHWM after reset via /proc/self/clear_refs)"
PEAK_METHOD_KEYS = {CUDA_PEAK_METHOD: "memory_cuda", RSS_PEAK_METHOD: "memory_rss"}


def peak_memory_delta(fn: Callable[[], object], device) -> tuple[object, int | None, str]:
    """(fn(), peak extra bytes or None, how it was measured) for the device the call runs on."""
    if torch.device(device).type == "cuda":
        result, peak = cuda_peak_delta(fn, device)
        return result, peak, CUDA_PEAK_METHOD
    result, peak = peak_rss_delta(fn)
    return result, peak, RSS_PEAK_METHOD


# --- what the figures were measured on -------------------------------------------------------------------------


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(device: torch.device | str = "cpu") -> dict:
    """Device, versions, date and load: stored with every benchmark result."""
    device = torch.device(device)
    info = {
        "device": device.type,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
    }
    try:
        info["loadavg_1min"] = round(os.getloadavg()[0], 2)
    except OSError:
        info["loadavg_1min"] = None
    return info


def device_record(device: torch.device | str = "cpu") -> dict:
    """The machine's fields a results file keeps (core.results.DEVICE_FIELDS: kind, name, cores, torch's threads and
    version), which a page says in the reader's words (core.results.device_of)."""
    info = machine_info(device)
    return {k: info[k] for k in DEVICE_FIELDS}


class MeasuredRun:
    """The header every committed training or measurement result carries: the command that redoes it, the
    machine and its load before and after, wall and CPU seconds.

        run = MeasuredRun("nice -n 5 python scripts/x.py", sys.argv[1:])
        ... work ...
        out = {**run.header(), ...}
    """

    def __init__(self, command: str, args: list[str] | None = None):
        self.command = " ".join([command, *(args or [])])
        self.before = machine_info("cpu")
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()

    def header(self) -> dict:
        after = machine_info("cpu")
        return {
            "command": self.command,
            "date": self.before["date"],
            "device": "cpu",
            "device_name": self.before["device_name"],
            "torch": self.before["torch"],
            "torch_threads": torch.get_num_threads(),
            "cpu_count": self.before["cpu_count"],
            "loadavg_1min_before": self.before["loadavg_1min"],
            "loadavg_1min_after": after["loadavg_1min"],
            "seconds_wall": round(time.perf_counter() - self.wall0, 1),
            "seconds_cpu": round(time.process_time() - self.cpu0, 1),
        }


def human_bytes(n: float | None) -> str:
    if n is None or not math.isfinite(n):
        return "n/a"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} TiB"
