"""The wall clock the limits use when no clock is given."""

from __future__ import annotations

from sweepbench.client.clock import MonotonicClock


async def test_the_wall_clock_sleeps_for_real() -> None:
    clock = MonotonicClock()
    t0 = clock.now()
    await clock.sleep(0.02)
    assert clock.now() - t0 >= 0.02
