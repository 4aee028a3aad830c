"""No stalls on hung requests: a time-to-first-byte budget and when to hedge, per endpoint.

A request that an endpoint silently holds (no response headers, ever) would otherwise keep
its episode waiting for the whole ``timeout_s`` (120 s by default), once per hang. Two
defences, both driven by the endpoint's own recent latencies (:class:`LatencyTracker`: the
last ``WINDOW`` successful requests' latency to the whole reply; for a non-streaming request
that is about its time to first byte, and never less, so budgets err on the long side):

- **TTFB budget** (:meth:`StallPolicy.ttfb_budget`): ``ttfb_k`` x p99 of those latencies,
  clamped to ``[ttfb_floor_s, ttfb_ceiling_s]`` (the ceiling defaults to ``timeout_s``); the
  ceiling until ``MIN_SAMPLES`` requests succeeded. A request with no first byte within it
  is abandoned as a :class:`~sweepbench.errors.FirstByteTimeout` and retried like any
  timeout. Each abandonment within one call doubles that call's next budget (past the
  ceiling; once it reaches ``timeout_s`` that alone applies), so a call that is merely slow
  is not abandoned forever. Once the first byte is
  in, only ``timeout_s`` bounds the rest (a trickling body). A watchdog checks the requests
  on the wire a few times per budget (every quarter of the shortest budget or hedge delay,
  20 ms to 1 s), so a request is abandoned up to that much late, and one sent before the
  endpoint's latency was known gets its budget as soon as it is.
- **When to hedge** (:meth:`StallPolicy.hedge_delay`): a request that has not answered after
  ``max(hedge_min_s, hedge_quantile latency, HEDGE_OVER_MEDIAN x median)`` is due a copy;
  at most ``HEDGE_SHARE`` of requests are hedged (plus a burst of ``HEDGE_BURST``,
  :meth:`StallPolicy.may_hedge`), so a slow endpoint is not sent twice the load. Off by
  default where the endpoint has prices (``Endpoint.hedge``, :func:`priced`) and where it
  is self-hosted (:func:`self_hosted`): there a copy cannot win, it queues behind the
  original on the same engine and spends its compute. The race
  between a request and its copies, and the ramp-down backups, are
  :mod:`sweepbench.client.hedging`: the watchdog only tells a hedgeable request its age.

**Self-hosted endpoints** (vLLM, SGLang, llama.cpp, Ollama on one machine) answer in turn:
a request queued behind another's long prefill has no first byte because it waits, not
because it hangs. So there the budget runs from the later of the request's send and the
endpoint's last answer (a server that answers is busy, not hung), only the oldest request
without a first byte (the one the server is on) can be abandoned, one at a time, and its
budget grows with its prompt against the median prompt answered (a long prefill takes
longer). A hung engine answers nothing, and its oldest request is abandoned as before.

``Flight`` is one request's progress: the client publishes it in :data:`FLIGHT` around
``Transport.post`` and the endpoint's watchdog (:class:`StallPolicy`) watches it, and stops
it through its ``asyncio.timeout`` (:meth:`Flight.stop`); a transport that can tell calls
:func:`first_byte` when the headers arrive, which takes the request out of the budget. A
transport that cannot tell (test doubles) has its whole request held to it. No timer per
request: a call that answers in time costs a set insertion and removal, and an
``asyncio.timeout`` without a deadline (which schedules nothing).
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
from collections import deque
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

__all__ = ["FLIGHT", "Flight", "HEDGE_BURST", "HEDGE_OVER_MEDIAN", "HEDGE_SHARE", "LatencyTracker",
           "MIN_SAMPLES", "Outrun", "StallPolicy", "WINDOW", "first_byte", "priced",
           "self_hosted"]

WINDOW = 512
"""Successful requests whose first-byte latency the budget is derived from."""
MIN_SAMPLES = 20
"""Below this many samples the TTFB budget is the ceiling and nothing is hedged."""
HEDGE_SHARE = 0.1
"""Hedged requests stay under this share of requests (plus ``HEDGE_BURST``)."""
HEDGE_BURST = 4
HEDGE_OVER_MEDIAN = 1.5
"""Never hedge a request before this many median latencies. A copy needs about a median to
answer, so hedging one that is only a little late duplicates a request about to answer: on an
endpoint with a tight latency spread, p99 is barely above the median and would hedge 1% of
healthy requests for nothing."""
_RESORT = 16  # samples added before the quantiles are recomputed


class LatencyTracker:
    """Recent latencies and their quantiles (recomputed every ``_RESORT`` samples: cheap)."""

    def __init__(self, window: int = WINDOW) -> None:
        self._recent: deque[float] = deque(maxlen=window)
        self._sorted: list[float] = []
        self._fresh = 0  # samples since the last sort

    def __len__(self) -> int:
        return len(self._recent)

    def add(self, seconds: float) -> None:
        if seconds >= 0 and math.isfinite(seconds):
            self._recent.append(seconds)
            self._fresh += 1

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile (nearest rank), or None below ``MIN_SAMPLES`` samples."""
        n = len(self._recent)
        if n < MIN_SAMPLES:
            return None
        if self._fresh >= _RESORT or not self._sorted:
            self._sorted = sorted(self._recent)
            self._fresh = 0
        values = self._sorted
        return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


class Flight:
    """One request on the wire: when it was sent, whether its first byte came, its call's
    earlier abandonments (``hung``), and for a first copy that may be hedged, its ``race``
    (anything with ``tick(age, delay)``).

    While the request is on the wire, ``deadline`` is the ``asyncio.timeout`` its sender
    awaits the transport under; :meth:`stop` makes it expire at once. Why is on the flight:
    ``abandoned`` (the watchdog: no first byte within that budget) or ``outrun`` (its race: a
    copy answered first). asyncio tells its own expiry from any other cancellation, so the
    sender gets a ``TimeoutError`` only for a stop, and a real cancel stays a cancel."""

    __slots__ = ("abandoned", "deadline", "got_first_byte", "hung", "outrun", "permit", "race",
                 "sent_at", "size")

    def __init__(self, race: Any = None) -> None:
        self.race = race
        self.hung = 0
        self.got_first_byte = False
        self.abandoned: float | None = None  # the budget it was abandoned at
        self.outrun = False
        self.sent_at = 0.0
        self.size = 0  # bytes of the request's body
        self.permit: Any = None
        self.deadline: asyncio.Timeout | None = None

    def leaving(self, permit: Any) -> None:
        """The request is about to be sent under ``permit`` (it passed the limits)."""
        self.permit = permit

    def stop(self) -> bool:
        """End the request now, if it is on the wire: its deadline expires at once. False:
        nothing to stop (not on the wire, or stopped already)."""
        deadline = self.deadline
        if deadline is None or deadline.expired():
            return False
        deadline.reschedule(asyncio.get_running_loop().time())
        return True


class Outrun(Exception):
    """A request stopped because a copy of it answered first (:class:`Flight` ``outrun``): no
    failure of the request, so not counted as one; the race takes the copy's answer."""


FLIGHT: ContextVar[Flight | None] = ContextVar("sweepbench_flight", default=None)


def first_byte() -> None:
    """Called by a transport when a response's headers arrive (the current request's): the
    first-byte budget no longer applies to it."""
    flight = FLIGHT.get()
    if flight is not None:
        flight.got_first_byte = True


class StallPolicy:
    """An endpoint's TTFB budget and hedge decisions, from its own observed latencies.

    ``endpoint`` (a config ``Endpoint``: its defaults are the only ones) supplies
    ``timeout_s``, ``ttfb_k``, ``ttfb_floor_s``, ``ttfb_ceiling_s``, ``hedge`` (None: on
    unless priced), ``hedge_quantile`` and ``hedge_min_s``.

    A watchdog, not a timer per request: requests on the wire are ``track``ed, and while any
    is, a check runs a few times per budget (``_check``): it abandons (stops) a request past
    its budget with no first byte, and tells a hedgeable one its age. Budgets are computed at
    each check, so a request sent before the endpoint's latency was known gets its budget as
    soon as it is.
    """

    def __init__(self, endpoint: Any) -> None:
        self.timeout_s: float = endpoint.timeout_s
        ceiling = endpoint.ttfb_ceiling_s
        self.ceiling = min(self.timeout_s, ceiling if ceiling is not None else self.timeout_s)
        self.floor = min(endpoint.ttfb_floor_s, self.ceiling)
        self.k: float = endpoint.ttfb_k
        hedge = endpoint.hedge
        self.self_hosted = self_hosted(endpoint)
        self.hedging: bool = ((not priced(endpoint) and not self.self_hosted) if hedge is None
                              else bool(hedge))
        self.hedge_quantile: float = endpoint.hedge_quantile
        self.hedge_min_s: float = endpoint.hedge_min_s
        self.latency = LatencyTracker()
        self.sizes = LatencyTracker()  # body bytes of the answered requests
        self.answered_at = 0.0  # loop time of the last answer (self-hosted budgets run from it)
        self.requests = 0  # first copies sent (hedges not included)
        self.hedges = 0
        # in the order sent (a dict keeps it): the watchdog stops at the first one too young
        self._flights: dict[Flight, None] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._check_at: asyncio.TimerHandle | None = None

    @property
    def primed(self) -> bool:
        """Enough latencies seen (``MIN_SAMPLES``): budgets and hedges have a basis."""
        return len(self.latency) >= MIN_SAMPLES

    def observe(self, ttfb_s: float, size: int = 0) -> None:
        """A successful request's time to first byte (here: to its whole reply, which for a
        non-streaming request is about the same, and never less); ``size``: its body's bytes."""
        self.latency.add(ttfb_s)
        if size:
            self.sizes.add(float(size))
        if self._loop is not None and not self._loop.is_closed():
            self.answered_at = self._loop.time()
        if len(self.latency) == MIN_SAMPLES and self._check_at is not None and self._loop:
            self._check_at.cancel()  # primed: budgets and hedge delays are short now
            self._check_at = self._loop.call_later(self._interval(), self._check)

    def track(self, flight: Flight) -> None:
        """``flight`` goes on the wire now."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new loop: the last one's check will never run
            self._loop = loop
            self._check_at = None
        flight.sent_at = loop.time()
        self._flights[flight] = None
        if self._check_at is None:
            self._check_at = loop.call_later(self._interval(), self._check)

    def untrack(self, flight: Flight) -> None:
        self._flights.pop(flight, None)

    def _interval(self) -> float:
        shortest = self.ttfb_budget() or self.timeout_s
        if self.hedging:
            shortest = min(shortest, self.hedge_delay() or shortest)
        return min(1.0, max(0.02, shortest / 4))

    def _check(self) -> None:
        self._check_at = None
        loop = self._loop
        if not self._flights or loop is None or loop.is_closed():
            return
        now = loop.time()
        hedge = self.hedge_delay() if self.hedging else None
        # Nothing younger than the shortest budget or the hedge delay needs a look, and the
        # flights are oldest first: a check costs the requests that are late, not all of them.
        budget = self.ttfb_budget()
        young = min(self.timeout_s if budget is None else budget,
                    self.timeout_s if hedge is None else hedge)
        due = []
        for flight in self._flights:
            if now - flight.sent_at < young:
                break
            due.append(flight)
        head = True  # self-hosted: only the oldest request waiting for a byte may be abandoned
        for flight in due:
            if flight.got_first_byte or flight.abandoned is not None:
                continue
            age = now - flight.sent_at
            budget = self.ttfb_budget(flight.hung)
            if self.self_hosted and budget is not None:
                waited = now - max(flight.sent_at, self.answered_at)
                budget = budget * self._prefill(flight) if head else None
                head = False
                if budget is not None and waited >= budget and flight.deadline is not None:
                    flight.abandoned = budget
                    flight.stop()
                    self.answered_at = now  # the next in line gets a budget of its own
                    continue
            elif budget is not None and age >= budget and flight.deadline is not None:
                flight.abandoned = budget
                flight.stop()  # the sender turns it into a FirstByteTimeout
                continue
            if flight.race is not None and hedge is not None:
                flight.race.tick(age, hedge)
        self._check_at = loop.call_later(self._interval(), self._check)

    def _prefill(self, flight: Flight) -> float:
        """How much longer than usual a request's prompt takes to read: its body against the
        median body answered (at least 1)."""
        median = self.sizes.quantile(0.5)
        return max(1.0, flight.size / median) if median and flight.size else 1.0

    def ttfb_budget(self, abandoned: int = 0) -> float | None:
        """Seconds a request may wait for its first byte (None: no budget under timeout_s);
        ``abandoned``: requests of this call already abandoned so (each doubles it)."""
        p99 = self.latency.quantile(0.99)
        budget = self.ceiling if p99 is None else min(self.ceiling, max(self.floor, self.k * p99))
        budget *= 2.0 ** abandoned
        return budget if budget < self.timeout_s else None

    def hedge_delay(self) -> float | None:
        """Seconds after its send after which to hedge a request, or None: not yet primed."""
        latency = self.latency
        q = latency.quantile(self.hedge_quantile)
        if q is None:
            return None
        return max(self.hedge_min_s, q, HEDGE_OVER_MEDIAN * latency.quantile(0.5))

    def may_hedge(self) -> bool:
        """Whether one more hedge fits the hedge share; counts it when it does."""
        if self.hedges >= HEDGE_SHARE * self.requests + HEDGE_BURST:
            return False
        self.hedges += 1
        return True


def self_hosted(endpoint: Any) -> bool:
    """Whether the endpoint is served by an engine of its own (``kind``; else its
    ``base_url``'s host is localhost or a loopback, private or link-local address)."""
    kind = getattr(endpoint, "kind", None)
    if kind is not None:
        return kind == "self-hosted"
    host = (urlsplit(getattr(endpoint, "base_url", "") or "").hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name: hosted unless declared (kind = "self-hosted")
    return address.is_loopback or address.is_private or address.is_link_local


def priced(endpoint: Any) -> bool:
    """Whether the endpoint costs money per token (any price set)."""
    return any(getattr(endpoint, name, 0.0) for name in (
        "price_input_per_mtok", "price_cached_input_per_mtok", "price_output_per_mtok"))
