"""The circuit breaker of one endpoint: once it looks down, callers wait for it instead of
spending their retries on it, and a single probe finds out when it is back.
"""

from __future__ import annotations

import asyncio
import math
from typing import Literal

from sweepbench.client.clock import WALL_CLOCK, Clock

__all__ = ["BreakerOpen", "CircuitBreaker"]


State = Literal["closed", "open", "half_open"]


class BreakerOpen(Exception):
    """The breaker stayed open longer than the caller was willing to wait; the message names
    the failure that opened it."""

    def __init__(self, waited_s: float, last_failure: str = "", failures: int = 0) -> None:
        why = f" after {failures} consecutive failures" if failures else ""
        last = f"; last: {last_failure}" if last_failure else ""
        super().__init__(f"endpoint unavailable: circuit breaker open for {waited_s:.1f}s"
                         f"{why}{last}")
        self.waited_s = waited_s
        self.last_failure = last_failure


class CircuitBreaker:
    """closed -> open after ``threshold`` consecutive failures -> half-open after ``cooldown_s``.

    While open, callers of :meth:`wait` wait (they spend no retries). Half-open lets exactly one
    probe through: its success closes the breaker and releases everyone, its failure opens it
    again with the cool-down doubled (up to ``max_cooldown_s``). Any response showing the
    endpoint alive (2xx, 4xx) counts as a success; only "down" failures (connection errors,
    timeouts, 5xx) count against it.
    """

    def __init__(self, *, threshold: int = 10, cooldown_s: float = 1.0,
                 max_cooldown_s: float = 30.0, clock: Clock = WALL_CLOCK) -> None:
        if threshold < 1:
            raise ValueError(f"breaker threshold must be >= 1, got {threshold}")
        self.threshold = threshold
        self.base_cooldown_s = cooldown_s
        self.max_cooldown_s = max(cooldown_s, max_cooldown_s)
        self.state: State = "closed"
        self.failures = 0
        self.opened = 0  # times it opened, for profiles
        self.last_failure = ""  # why the latest failure failed (named when callers give up)
        self._cooldown_s = cooldown_s
        self._open_until = 0.0
        self.down_since: float | None = None  # clock time it opened, until it closes again
        self._probing = False
        self._clock = clock
        self._changed = asyncio.Event()

    def _set(self, state: State) -> None:
        self.state = state
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait(self, max_wait_s: float | None = None) -> bool:
        """Return when a request may go; True when the caller is the half-open probe and
        must report its outcome. Raises :class:`BreakerOpen` after ``max_wait_s``."""
        start = self._clock.now()
        while True:
            if self.state == "closed":
                return False
            now = self._clock.now()
            if self.state == "open" and now >= self._open_until:
                self._set("half_open")
            if self.state == "half_open" and not self._probing:
                self._probing = True
                return True
            waited = now - start
            if max_wait_s is not None and waited >= max_wait_s:
                raise BreakerOpen(waited, self.last_failure, self.failures)
            timeout = self._open_until - now if self.state == "open" else math.inf
            if max_wait_s is not None:
                timeout = min(timeout, max_wait_s - waited)
            await self._wait_change(timeout)

    async def _wait_change(self, timeout: float) -> None:
        changed = asyncio.ensure_future(self._changed.wait())
        if math.isinf(timeout):
            await changed
            return
        sleep = asyncio.ensure_future(self._clock.sleep(max(0.0, timeout)))
        try:
            await asyncio.wait((changed, sleep), return_when=asyncio.FIRST_COMPLETED)
        finally:
            changed.cancel()
            sleep.cancel()

    def success(self, probe: bool = False) -> None:
        self.failures = 0
        if probe:
            self._probing = False
        if self.state != "closed" and (probe or self.state == "half_open"):
            self._cooldown_s = self.base_cooldown_s
            self.down_since = None
            self._set("closed")

    def failure(self, probe: bool = False, reason: str = "") -> None:
        self.failures += 1
        if reason:
            self.last_failure = reason
        if probe:
            self._probing = False
            self._cooldown_s = min(self.max_cooldown_s, self._cooldown_s * 2)
            self._open()
        elif self.state == "closed" and self.failures >= self.threshold:
            self._open()

    def abandon(self, probe: bool) -> None:
        """The probe left without an answer (cancelled, or a client-side error)."""
        if probe:
            self._probing = False
            self._changed.set()  # let another waiter probe
            self._changed = asyncio.Event()

    def probe_in(self, now: float) -> float:
        """Seconds until the next half-open probe may go (0: now, or one is in flight)."""
        return max(0.0, self._open_until - now) if self.state == "open" else 0.0

    def _open(self) -> None:
        if self.down_since is None:
            self.down_since = self._clock.now()
        self._open_until = self._clock.now() + self._cooldown_s
        self.opened += 1
        self._set("open")
