"""The spending cap of a sweep: ``--max-cost USD`` and per-endpoint ``max_cost_usd``.

Spend is counted over the sweep's *selection*: what the store already holds for the selected
episodes (every journaled call, judges included, at its run's stored prices) plus every live
call made now (at this run's prices). So a sweep stopped by its cap and run again with the
same cap starts nothing, and with a higher cap continues where it stopped.

Before an episode starts, the spend so far plus an estimate of what the episodes in flight
and this one will still cost must stay within every cap that applies (the sweep's, and each
of its endpoints'). The estimate per episode is the mean spend of the episodes finished in
this sweep, and before any has finished, a prior (the plan's estimate from the store's
history or the benchmark's defaults). Episodes in flight when a cap is reached run to their
end (and are judged): the cap can be passed by at most what was in flight.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Mapping

from sweepbench.results.cost import Spend
from sweepbench.results.profile import Prices, usage_cost
from sweepbench.wire import Usage

__all__ = ["Budget"]


class Budget:
    """Decides whether the next episode may start; told about every live call."""

    def __init__(self, *, cap: float | None, endpoint_caps: Mapping[str, float],
                 prices: Mapping[str, Prices], stored: Spend | None = None,
                 prior: Mapping[str, float] | None = None) -> None:
        self.cap = cap
        self.endpoint_caps = dict(endpoint_caps)
        self.prices = dict(prices)
        self.stored_total = stored.total if stored else 0.0
        self.stored_by_endpoint = dict(stored.by_endpoint) if stored else {}
        self.live_total = 0.0
        self.live_by_endpoint: dict[str, float] = defaultdict(float)
        self.prior = dict(prior or {})  # endpoint -> expected dollars per episode
        self.finished = 0
        self.stopped: str | None = None

    @property
    def active(self) -> bool:
        return self.cap is not None or bool(self.endpoint_caps)

    @property
    def spent(self) -> float:
        return self.stored_total + self.live_total

    def spent_on(self, endpoint: str) -> float:
        return self.stored_by_endpoint.get(endpoint, 0.0) + self.live_by_endpoint[endpoint]

    def charge(self, endpoint: str, usage: Usage, attempts: int = 1) -> None:
        """A live call to ``endpoint`` with ``usage`` was made (0 attempts: from the cache)."""
        p = self.prices.get(endpoint)
        if p is not None and attempts:
            cost = usage_cost(usage, p)
            self.live_total += cost
            self.live_by_endpoint[endpoint] += cost

    def episode_done(self) -> None:
        self.finished += 1

    def per_episode(self, endpoint: str | None = None) -> float:
        """Expected dollars one more episode costs (on ``endpoint``, or in total)."""
        if self.finished:
            spent = self.live_total if endpoint is None else self.live_by_endpoint[endpoint]
            return spent / self.finished
        if endpoint is None:
            return sum(self.prior.values())
        return self.prior.get(endpoint, 0.0)

    def may_start(self, in_flight: int, endpoints: set[str]) -> bool:
        """Whether an episode using ``endpoints`` may start with ``in_flight`` running."""
        if self.stopped is not None:
            return False
        if not self.active:
            return True
        ahead = in_flight + 1
        if self.cap is not None and self.spent + ahead * self.per_episode() > self.cap:
            self.stopped = (f"spend cap ${self.cap:,.4f} reached: ${self.spent:,.4f} spent on "
                            f"this selection, ~${self.per_episode():,.4f} per episode")
            return False
        for name in sorted(endpoints):
            cap = self.endpoint_caps.get(name)
            if cap is not None and self.spent_on(name) + ahead * self.per_episode(name) > cap:
                self.stopped = (f"endpoint {name!r} budget ${cap:,.4f} reached: "
                                f"${self.spent_on(name):,.4f} spent on it for this selection")
                return False
        return True
