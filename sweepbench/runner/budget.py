"""The spending cap of a sweep: ``--max-cost USD`` and per-endpoint ``max_cost_usd``.

Spend is counted over the sweep's *selection*: what the store already holds for the selected
episodes (every journaled call, judges included, at its run's stored prices) plus every live
call made now (at this run's prices). So a sweep stopped by its cap and run again with the
same cap starts nothing, and with a higher cap continues where it stopped.

Each episode in flight has a :class:`Tab` (the sweep opens it when the episode starts and
puts it in :data:`TAB` for the episode's task, so its calls are charged to it). The estimate
of one episode's cost is the spend of the finished episodes (their calls, and every call made
outside an episode: the judges') over their number; before any has finished, a prior (the
plan's estimate from the store's history or the benchmark's defaults). An episode in flight
is expected to cost what is left of that estimate beyond what it has spent already
(``committed``): its spend so far is counted once, not again on top of a whole estimate. An
episode may start when the spend, plus what is committed, plus its own estimate, stays
within every cap that applies (the sweep's, and each of its endpoints'). When it would not,
the sweep *waits* while episodes are in flight (each one that ends makes the estimate
better, and frees what it had committed); it *stops* only with none in flight, so it stops
within about one episode of the cap; episodes started on an estimate too low can pass it by
at most what was in flight.
"""

from __future__ import annotations

from collections import defaultdict
from contextvars import ContextVar
from typing import Mapping

from sweepbench.results.cost import Spend
from sweepbench.results.profile import Prices, usage_cost
from sweepbench.wire import Usage

__all__ = ["TAB", "Budget", "Tab"]


class Tab:
    """What one episode in flight has spent so far, in total and by endpoint."""

    __slots__ = ("by_endpoint", "total")

    def __init__(self) -> None:
        self.total = 0.0
        self.by_endpoint: dict[str, float] = defaultdict(float)


TAB: ContextVar[Tab | None] = ContextVar("sweepbench_budget_tab", default=None)
"""The tab of the episode whose task makes the call (None: a call outside any episode)."""


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
        self.open: dict[Tab, None] = {}  # the tabs of the episodes in flight
        self.stopped: str | None = None

    @property
    def active(self) -> bool:
        return self.cap is not None or bool(self.endpoint_caps)

    @property
    def spent(self) -> float:
        return self.stored_total + self.live_total

    def spent_on(self, endpoint: str) -> float:
        return self.stored_by_endpoint.get(endpoint, 0.0) + self.live_by_endpoint[endpoint]

    def charge(self, endpoint: str, usage: Usage, attempts: int = 1,
               tab: Tab | None = None) -> None:
        """A live call to ``endpoint`` with ``usage`` was made (0 attempts: from the cache),
        by the episode of ``tab`` (None: outside any episode, e.g. a judge's)."""
        p = self.prices.get(endpoint)
        if p is not None and attempts:
            cost = usage_cost(usage, p)
            self.live_total += cost
            self.live_by_endpoint[endpoint] += cost
            if tab is not None:
                tab.total += cost
                tab.by_endpoint[endpoint] += cost

    def episode_started(self) -> Tab:
        """An episode starts: its tab, to charge its calls to."""
        tab = Tab()
        self.open[tab] = None
        return tab

    def episode_done(self, tab: Tab | None = None) -> None:
        """An episode (of ``tab``) ended: its spend counts as a finished episode's."""
        self.finished += 1
        if tab is not None:
            self.open.pop(tab, None)

    def per_episode(self, endpoint: str | None = None) -> float:
        """Expected dollars one more episode costs (on ``endpoint``, or in total): the
        finished episodes' spend over their number (the prior until one finished)."""
        if self.finished:
            if endpoint is None:
                settled = self.live_total - sum(t.total for t in self.open)
            else:
                settled = (self.live_by_endpoint[endpoint]
                           - sum(t.by_endpoint.get(endpoint, 0.0) for t in self.open))
            return max(0.0, settled) / self.finished
        if endpoint is None:
            return sum(self.prior.values())
        return self.prior.get(endpoint, 0.0)

    def committed(self, in_flight: int, endpoint: str | None = None) -> float:
        """What the ``in_flight`` episodes are still expected to cost: per episode, what is
        left of the estimate beyond its spend so far (an episode without a tab: all of it)."""
        each = self.per_episode(endpoint)
        spent = [t.total if endpoint is None else t.by_endpoint.get(endpoint, 0.0)
                 for t in self.open]
        untracked = max(0, in_flight - len(spent))
        return sum(max(0.0, each - s) for s in spent) + untracked * each

    def may_start(self, in_flight: int, endpoints: set[str]) -> bool:
        """Whether an episode using ``endpoints`` may start now with ``in_flight`` running.
        False with ``stopped`` None: wait for one in flight to end and ask again; False with
        ``stopped`` set: nothing starts any more (it says why)."""
        if self.stopped is not None:
            return False
        if not self.active:
            return True
        checks = [(None, self.cap, self.spent)] if self.cap is not None else []
        checks += [(name, self.endpoint_caps[name], self.spent_on(name))
                   for name in sorted(endpoints) if name in self.endpoint_caps]
        for endpoint, cap, spent in checks:
            each = self.per_episode(endpoint)
            if spent + self.committed(in_flight, endpoint) + each <= cap:
                continue
            if in_flight:
                return False  # wait: an episode that ends makes the estimate better
            what = ("spend cap" if endpoint is None
                    else f"endpoint {endpoint!r} budget")
            self.stopped = (f"{what} ${cap:,.4f} reached: ${spent:,.4f} spent on "
                            f"{'it for ' if endpoint else ''}this selection, and one more "
                            f"episode would cost ~${each:,.4f}")
            return False
        return True
