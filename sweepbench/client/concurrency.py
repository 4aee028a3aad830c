"""The adaptive in-flight cap of one endpoint: AIMD, so a sweep finds an endpoint's concurrency
limit from its 429s instead of being told it, and waiters are served first come first served.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque

from sweepbench.client.clock import WALL_CLOCK, Clock

__all__ = ["AdaptiveConcurrency"]


class AdaptiveConcurrency:
    """An in-flight cap that moves: AIMD between ``min_limit`` and ``max_limit``.

    ``on_overload(sent_at)`` multiplies the limit by ``decrease`` (a burst of 429s from requests
    sent before the last decrease counts once); ``on_success()`` adds ``1 / limit`` (about +1
    per limit's worth of successes, i.e. per round trip). Waiters are served first come first
    served.
    """

    def __init__(self, max_limit: int, *, min_limit: int = 1, initial: int | None = None,
                 decrease: float = 0.7, clock: Clock = WALL_CLOCK) -> None:
        if max_limit < 1 or not 1 <= min_limit <= max_limit:
            raise ValueError(f"need 1 <= min_limit <= max_limit, got {min_limit}, {max_limit}")
        if not 0 < decrease < 1:
            raise ValueError(f"decrease must be in (0, 1), got {decrease}")
        self.max_limit = max_limit
        self.min_limit = min_limit
        self.limit = float(max_limit if initial is None else min(max(initial, min_limit),
                                                                 max_limit))
        self.decrease = decrease
        self.in_flight = 0
        self.decreases = 0
        self._clock = clock
        self._last_decrease = -math.inf
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def cap(self) -> int:
        return max(self.min_limit, int(self.limit))

    def try_acquire(self) -> float | None:
        """A slot now if one is free and nobody waits: the time it was granted; else None."""
        if self.in_flight < self.cap and not self._waiters:
            self.in_flight += 1
            return self._clock.now()
        return None

    async def acquire(self) -> float:
        """Wait for a slot; returns the time it was granted (pass it to ``on_overload``)."""
        granted = self.try_acquire()
        if granted is not None:
            return granted
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut  # release() counted us in before waking us
        except BaseException:
            # Cancelled. A slot granted in the same breath is handed on; otherwise the waiter
            # leaves the queue, unless _wake() already dropped it as done: a cancelled future
            # is done at once, and a release() between the cancel and this line pops it.
            # (Removing it twice raised ValueError, which replaced the cancellation.)
            if fut.done() and not fut.cancelled():
                self.release()
            else:
                self._discard(fut)
            raise
        return self._clock.now()

    def _discard(self, fut: asyncio.Future[None]) -> None:
        try:
            self._waiters.remove(fut)
        except ValueError:
            pass  # already popped by _wake()

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.cap:
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    def on_success(self) -> None:
        if self.limit < self.max_limit:
            self.limit = min(float(self.max_limit), self.limit + 1.0 / self.limit)
            self._wake()

    def on_overload(self, sent_at: float) -> None:
        if sent_at < self._last_decrease:
            return  # this request was already in flight when we last backed off
        self.limit = max(float(self.min_limit), self.limit * self.decrease)
        self._last_decrease = self._clock.now()
        self.decreases += 1
