"""core/timing: the helpers every benchmark figure goes through."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from core import timing

ROOT = Path(__file__).resolve().parents[2]


def test_loglog_slope_recovers_exact_power_laws():
    n = np.array([256, 512, 1024, 2048, 4096])
    for power in (1.0, 2.0):
        slope, intercept = timing.fit_loglog_slope(n, 3e-6 * n**power)
        assert slope == pytest.approx(power, abs=1e-9)
        assert math.exp(intercept) == pytest.approx(3e-6, rel=1e-6)


def test_loglog_slope_drops_small_sizes_and_needs_two_points():
    n = np.array([8, 16, 1024, 2048])
    t = np.array([1.0, 1.0, 1024.0**2, 2048.0**2])  # flat overhead below 1024
    assert timing.fit_loglog_slope(n, t, min_size=1024)[0] == pytest.approx(2.0)
    with pytest.raises(ValueError):
        timing.fit_loglog_slope([1024], [1.0])


SMALL_BLOCKS = """
import json, sys, torch
sys.path.insert(0, {root!r})
from core import timing
def many_small_blocks():
    blocks = [torch.ones(25_000) for _ in range(400)]      # 400 x 100 kB; ones() writes every page
    return sum(float(b[-1]) for b in blocks)
print(json.dumps([timing.peak_rss_delta(many_small_blocks)[1] for _ in range(3)]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc and glibc")
def test_peak_rss_counts_allocations_that_reuse_freed_heap():
    """With glibc told to keep freed memory (the thresholds it otherwise raises by itself as a program runs),
    the blocks freed by the first call stay resident and the next calls reuse them. Without the trim inside
    peak_rss_delta, those calls measured 1 MiB and 0 of the 40 MB they hold. A subprocess keeps the malloc
    settings out of the test process."""
    env = {**os.environ, "MALLOC_TRIM_THRESHOLD_": str(2**30), "MALLOC_MMAP_THRESHOLD_": str(2**25)}
    out = subprocess.run(
        [sys.executable, "-c", SMALL_BLOCKS.format(root=str(ROOT))],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    peaks = json.loads(out.strip().splitlines()[-1])
    assert all(p is not None and p >= 0.8 * 400 * 100_000 for p in peaks), peaks


HELD_BLOCK = """
import ctypes, json, sys, torch
sys.path.insert(0, {root!r})
from core import timing
class Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2
set_ = {set_}
if set_:
    set_ = timing.map_large_blocks()
torch.ones(2**22)  # a 16 MiB block mapped and freed: by default glibc raises its threshold to 16 MiB
before = libc.mallinfo2().hblkhd
scores = torch.ones(2**20)  # 4 MiB, as one layer's (4, 512, 512) scores
print(json.dumps([set_, libc.mallinfo2().hblkhd - before]))
"""


def mapped_bytes_of_a_held_block(set_: bool) -> tuple[bool, int]:
    out = subprocess.run(
        [sys.executable, "-c", HELD_BLOCK.format(root=str(ROOT), set_=set_)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    return tuple(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs glibc")
def test_after_map_large_blocks_a_large_block_is_mapped_on_its_own():
    """Once map_large_blocks has run, a 4 MiB tensor made after a 16 MiB one was freed has a mapping of its own,
    handed back when freed (by default glibc's self-raised threshold puts it in the heap, where what it leaves stays
    resident: without the call this fails). A subprocess keeps the setting out of the test process (about 3 s)."""
    done, mapped = mapped_bytes_of_a_held_block(True)
    assert done and mapped >= 4 * 2**20


def test_time_ms_respects_budget():
    calls = []

    def slow():
        calls.append(1)
        torch.ones(1)

    timing.time_ms(slow, reps=1000, warmup=1, budget_s=0.0)
    assert len(calls) == 2  # one warm-up, then one timed call before the budget stops it


def test_a_measured_run_header_names_its_command_machine_load_and_seconds():
    run = timing.MeasuredRun("python scripts/x.py", ["--steps", "3"])
    sum(range(10_000))  # some work
    header = run.header()
    assert header["command"] == "python scripts/x.py --steps 3"
    assert header["cpu_count"] == os.cpu_count() and header["device"] == "cpu"
    assert header["seconds_wall"] >= 0 and header["seconds_cpu"] >= 0
    assert {"loadavg_1min_before", "loadavg_1min_after", "date", "torch"} <= set(header)
