"""core/stats.py against hand-worked and published values."""

import pytest

from core.stats import wilson_interval


def test_wilson_interval_matches_the_published_worked_example():
    # Newcombe (1998), Table I: 81 of 263 -> 0.2553 to 0.3662
    lo, hi = wilson_interval(81, 263)
    assert lo == pytest.approx(0.2553, abs=5e-4) and hi == pytest.approx(0.3662, abs=5e-4)


def test_wilson_interval_is_sound_at_the_edges():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-3)  # 0/10: z²/(n + z²)
    lo, hi = wilson_interval(10, 10)
    assert hi == pytest.approx(1.0) and lo == pytest.approx(1 - 0.2775, abs=1e-3)  # mirror of 0/10
