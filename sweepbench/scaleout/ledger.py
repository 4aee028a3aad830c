"""The driver's side of the endpoints' limits: each account's RPM and TPM buckets, its adaptive
in-flight cap and its Retry-After pause, for the whole cluster, leased to workers in batches.

- **Buckets**: the account's own :class:`~sweepbench.client.buckets.TokenBucket` (headroom and
  a second of burst, as in one process). A worker asks for what it used over the last
  exchange's ``LEASE_S`` (see :mod:`sweepbench.scaleout.leased`) plus what its callers wait
  for; it gets what the bucket holds, up to that, never into debt. What a worker holds unused
  is at most a quarter-second of its rate, so the account's rate over any window is the
  bucket's plus that.
- **In-flight cap**: an :class:`~sweepbench.client.concurrency.AdaptiveConcurrency` moved by
  every worker's successes and clustered 429s (the age of each 429's request puts a burst of
  them from one round trip into one decrease, as in one process). It is split between the
  workers by their demand (requests in flight or waiting): all of it when the demand fits,
  else in proportion. A worker's share shrinks only down to what it has in flight, and what a
  worker gives up counts as held until its next report shows it applied the smaller share:
  the workers' shares never add up to more than the cap.
- **Pause**: a Retry-After any worker is told holds every worker (each is told once).
- **A dead worker**: :meth:`Ledger.reclaim` takes its share back; its unspent bucket tokens
  are lost (a quarter-second of its rate at most), never re-issued.
"""

from __future__ import annotations

import math
from collections.abc import Hashable

from sweepbench.client.buckets import TokenBucket
from sweepbench.client.clock import WALL_CLOCK, Clock
from sweepbench.client.concurrency import AdaptiveConcurrency
from sweepbench.scaleout.messages import Grant, LimitsInfo, Want

__all__ = ["Account", "Ledger"]


class Account:
    """One endpoint + account's limits for the cluster."""

    def __init__(self, info: LimitsInfo, *, clock: Clock = WALL_CLOCK) -> None:
        self.info = info
        self.clock = clock
        per_minute = lambda limit: TokenBucket.per_minute(
            limit, burst_s=1.0, headroom=info.headroom, clock=clock)
        self.requests = per_minute(info.rpm) if info.rpm else None
        self.tokens = per_minute(info.tpm) if info.tpm else None
        self.concurrency = AdaptiveConcurrency(
            info.max_concurrency, min_limit=min(info.min_concurrency, info.max_concurrency),
            clock=clock)
        self.held: dict[Hashable, int] = {}  # worker -> in-flight share counted against the cap
        self.granted: dict[Hashable, int] = {}  # worker -> share last granted
        self.demand: dict[Hashable, int] = {}
        self.paused_until = 0.0
        self._told: dict[Hashable, float] = {}  # worker -> end of the last pause it was told

    def grant(self, worker: Hashable, want: Want) -> Grant:
        now = self.clock.now()
        c = self.concurrency
        if self.info.adaptive:
            for _ in range(want.successes):
                c.on_success()
            for age in want.overload_ages:
                c.on_overload(now - age)
        if want.pause_s > 0:
            self.paused_until = max(self.paused_until, now + want.pause_s)
            self._told[worker] = self.paused_until  # it knows
        return Grant(requests=_take(self.requests, want.requests),
                     tokens=_take(self.tokens, want.tokens),
                     concurrency=self._share(worker, want), pause_s=self._pause(worker, now))

    def _share(self, worker: Hashable, want: Want) -> int:
        # the worker has applied its last grant: it holds that, or more while it drains
        old = self.granted.get(worker, 0)
        self.held[worker] = max(old, want.in_flight)
        self.demand[worker] = want.demand
        cap = self.concurrency.cap
        total = sum(self.demand.values())
        if total <= cap:  # everyone's demand fits: the spare is split evenly
            target = want.demand + (cap - total) // max(1, len(self.demand))
        else:
            target = max(1 if want.demand else 0, math.floor(cap * want.demand / total))
        others = sum(v for w, v in self.held.items() if w != worker)
        new = min(target, max(0, cap - others))
        new = max(new, min(want.in_flight, old))  # what it has in flight stays its own
        self.granted[worker] = new
        self.held[worker] = max(new, old)  # given up only once it applied the smaller share
        return new

    def _pause(self, worker: Hashable, now: float) -> float:
        if self.paused_until > now and self._told.get(worker, 0.0) < self.paused_until:
            self._told[worker] = self.paused_until
            return self.paused_until - now
        return 0.0

    def reclaim(self, worker: Hashable) -> None:
        for table in (self.held, self.granted, self.demand, self._told):
            table.pop(worker, None)


def _take(bucket: TokenBucket | None, wanted: float) -> float:
    """Up to ``wanted`` of what ``bucket`` holds now (whole tokens, never into debt)."""
    if bucket is None or wanted <= 0:
        return 0.0
    n = min(float(math.ceil(wanted)), math.floor(max(0.0, bucket.level)))
    if n > 0:
        bucket.reserve(n)
    return n


class Ledger:
    """Every account's :class:`Account`, keyed as the workers' limits are
    (:func:`~sweepbench.client.facade.limits_key`)."""

    def __init__(self, *, clock: Clock = WALL_CLOCK) -> None:
        self.clock = clock
        self.accounts: dict[str, Account] = {}

    def register(self, limits: dict[str, LimitsInfo]) -> None:
        for key, info in limits.items():
            if key not in self.accounts:
                self.accounts[key] = Account(info, clock=self.clock)

    def grant(self, worker: Hashable, wants: dict[str, Want]) -> dict[str, Grant]:
        return {key: self.accounts[key].grant(worker, want)
                for key, want in wants.items() if key in self.accounts}

    def reclaim(self, worker: Hashable) -> None:
        for account in self.accounts.values():
            account.reclaim(worker)

    def shares(self) -> dict[str, dict[Hashable, int]]:
        """Each account's in-flight shares by worker (the progress display, tests)."""
        return {key: dict(a.held) for key, a in self.accounts.items()}
