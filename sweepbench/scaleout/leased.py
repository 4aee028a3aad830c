"""A worker's side of the endpoints' limits: the same :class:`EndpointLimits` the client always
uses, with its RPM and TPM buckets and its in-flight cap fed by leases from the driver
(:mod:`sweepbench.scaleout.ledger`) instead of by the clock.

A worker never asks per request. Each bucket holds what was leased to it and is spent
locally; when it runs low (or a request waits on it) the worker says so in its next report and
the driver leases a batch. A TPM bucket's estimate is corrected from the response's usage as
always, and a correction past what it holds is debt the next lease repays. The in-flight cap
is the share of the account's cap the driver gave this worker. 429s and successes are counted
and reported: the driver's own adaptive cap moves on every worker's answers. A Retry-After is
reported too, and the driver passes it to every worker. The breaker stays per worker.
"""

from __future__ import annotations

import asyncio
import math

from sweepbench.client.concurrency import AdaptiveConcurrency
from sweepbench.client.limits import EndpointLimits, LimitsPool
from sweepbench.scaleout.messages import Grant, LimitsInfo, Want

__all__ = ["LeaseLimitsPool", "LeasedBucket", "LeasedConcurrency", "LeasedLimits"]

LEASE_S = 0.25
"""Seconds of a worker's recent use it asks for at once: enough to outlast an exchange
round trip many times over, small enough that a worker that dies takes little with it."""


class LeasedBucket:
    """The part of a :class:`~sweepbench.client.buckets.TokenBucket` the client uses
    (``reserve``, ``adjust``, ``acquire``, ``level``, ``capacity``), spending leased tokens.

    ``wake`` is called when a caller waits for tokens (the worker's next report goes at once).
    """

    def __init__(self, wake=lambda: None) -> None:
        self._level = 0.0
        self.capacity = 1.0  # grows with the leases: what the hedging's ``keep`` compares to
        self.used = 0.0  # since the last want
        self.waiting = 0.0  # tokens callers wait for
        self._wake = wake
        self._granted = asyncio.Event()

    @property
    def level(self) -> float:
        return self._level

    def reserve(self, n: float) -> float:
        """Take ``n`` now (into debt if need be); the client waits in :meth:`acquire`."""
        self._level -= n
        self.used += n
        return 0.0 if self._level >= 0 else math.inf

    def adjust(self, delta: float) -> None:
        self._level += delta
        self.used -= delta

    async def acquire(self, n: float = 1.0) -> float:
        if self._level >= n and not self.waiting:
            self._level -= n
            self.used += n
            return 0.0
        self.waiting += n
        self._wake()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        try:
            while self._level < n:
                self._granted.clear()
                await self._granted.wait()
        finally:
            self.waiting -= n
        self._level -= n
        self.used += n
        return loop.time() - t0

    def give(self, n: float) -> None:
        """A lease arrived."""
        if n > 0:
            self._level += n
            self.capacity = max(self.capacity, n)
            self._granted.set()

    def want(self, dt: float) -> float:
        """Tokens to ask for: ``LEASE_S`` of the use seen over the last ``dt`` seconds, what
        callers wait for, and any debt, less what is held."""
        rate = self.used / dt if dt > 0 else 0.0
        self.used = 0.0
        target = max(1.0, rate * LEASE_S) + self.waiting
        return max(0.0, target - self._level)


class LeasedConcurrency(AdaptiveConcurrency):
    """An in-flight cap set by the driver (0 until the first lease); successes and clustered
    429s are counted for it, not acted on here."""

    def __init__(self, wake=lambda: None) -> None:
        super().__init__(1)
        self.granted = 0
        self.successes = 0
        self.overloads: list[float] = []  # when each clustered 429's request was sent
        self._wake_driver = wake

    @property
    def cap(self) -> int:
        return self.granted

    def set_grant(self, n: int) -> None:
        self.granted = max(0, n)
        self._wake()

    async def acquire(self) -> float:
        granted = self.try_acquire()
        if granted is not None:
            return granted
        self._wake_driver()  # a request waits for a slot: the driver may grant more
        return await super().acquire()

    def on_success(self) -> None:
        self.successes += 1

    def on_overload(self, sent_at: float) -> None:
        self.overloads.append(sent_at)

    @property
    def demand(self) -> int:
        return self.in_flight + len(self._waiters)


class LeasedLimits(EndpointLimits):
    """:class:`EndpointLimits` on leases; ``pause`` is also told to the driver."""

    def __init__(self, info: LimitsInfo, wake) -> None:
        super().__init__(max_concurrency=info.max_concurrency, min_concurrency=1,
                         adaptive=info.adaptive, rpm=None, tpm=None)
        self.concurrency = LeasedConcurrency(wake)
        self.adaptive = True  # successes and 429s are counted, the driver decides
        self.requests = LeasedBucket(wake) if info.rpm else None
        self.tokens = LeasedBucket(wake) if info.tpm else None
        self.told_pause = 0.0  # a Retry-After to pass on (clock time it ends)

    def pause(self, seconds: float) -> None:
        super().pause(seconds)
        self.told_pause = max(self.told_pause, self.paused_until)

    def want(self, dt: float) -> Want:
        c = self.concurrency
        now = self.clock.now()
        want = Want(requests=self.requests.want(dt) if self.requests else 0.0,
                    tokens=self.tokens.want(dt) if self.tokens else 0.0,
                    demand=c.demand, in_flight=c.in_flight, successes=c.successes,
                    overload_ages=[now - t for t in c.overloads],
                    pause_s=max(0.0, self.told_pause - now))
        c.successes, c.overloads, self.told_pause = 0, [], 0.0
        return want

    def apply(self, grant: Grant) -> None:
        if self.requests is not None:
            self.requests.give(grant.requests)
        if self.tokens is not None:
            self.tokens.give(grant.tokens)
        if grant.pause_s > 0:
            EndpointLimits.pause(self, grant.pause_s)  # not told back
        self.concurrency.set_grant(grant.concurrency)

    @property
    def starved(self) -> bool:
        """Whether a request waits on a lease (a bucket, or a slot under the cap)."""
        return bool((self.requests is not None and self.requests.waiting)
                    or (self.tokens is not None and self.tokens.waiting)
                    or self.concurrency._waiters)


class LeaseLimitsPool(LimitsPool):
    """A :class:`LimitsPool` of :class:`LeasedLimits`; ``wake`` asks for the next report."""

    def __init__(self, wake=lambda: None) -> None:
        super().__init__()
        self._wake = wake
        self.new: dict[str, LimitsInfo] = {}  # accounts not yet reported to the driver

    def get(self, key: str, endpoint) -> EndpointLimits:
        limits = self._limits.get(key)
        if limits is None:
            info = limits_info(endpoint)
            limits = self._limits[key] = LeasedLimits(info, self._wake)
            limits.closed = self.closed
            self.new[key] = info
        return limits

    def wants(self, dt: float) -> dict[str, Want]:
        return {key: limits.want(dt) for key, limits in self._limits.items()}

    def apply(self, grants: dict[str, Grant]) -> None:
        for key, grant in grants.items():
            limits = self._limits.get(key)
            if limits is not None:
                limits.apply(grant)

    @property
    def starved(self) -> bool:
        return any(limits.starved for limits in self._limits.values())


def limits_info(endpoint) -> LimitsInfo:
    g = lambda name, default: getattr(endpoint, name, default)
    return LimitsInfo(max_concurrency=endpoint.max_concurrency,
                      min_concurrency=g("min_concurrency", 1),
                      adaptive=g("adaptive_concurrency", True), rpm=g("rpm", None),
                      tpm=g("tpm", None), headroom=g("rate_headroom", 0.97))
