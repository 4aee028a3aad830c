"""Time for the limits: a :class:`Clock` is injected wherever limits wait, so their arithmetic is
testable without sleeping (tests pass a fake, such as
:class:`~sweepbench.client.transports.memory.VirtualClock`). :data:`WALL_CLOCK` is the default
wherever no clock is given.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["WALL_CLOCK", "Clock", "MonotonicClock"]


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class MonotonicClock:
    """Wall time: ``time.monotonic`` and ``asyncio.sleep``."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


WALL_CLOCK = MonotonicClock()
