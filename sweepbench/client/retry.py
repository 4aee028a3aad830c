"""When a failed request is sent again, and how long the call waits before it does.

A failure is retried when its error is a ``RetryableError`` (the decision
:mod:`sweepbench.client.classify` made), or a refused connection to an endpoint that has
answered before (one that never answered is not running: that fails at once). A call sends at
most ``max_retries + 1`` requests.

The wait before a retry honours the server's Retry-After (capped at ``retry_after_max_s``,
plus a little jitter); otherwise it is full jitter over an exponential back-off whose base
depends on how the endpoint is doing: half its recent median latency while it mostly answers
(its faults are isolated, a retry soon most likely succeeds), ``backoff_base_s`` when it does
not (an endpoint in trouble is given time). While the faults are isolated, an episode's sleep
lends its sweep slot to another episode (:data:`~sweepbench.client.lending.LEASE`).

The loop is :meth:`RetryPolicy.run`, entered only once a call's first attempt has failed (the
common case never pays for it). It is a plain loop: every decision in it (what is retried, how
long to wait, how to sleep) is this module's own, so a retry library would only count to
``max_retries``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sweepbench.client.lending import LEASE
from sweepbench.client.limits import EndpointLimits
from sweepbench.client.results import CallLedger
from sweepbench.client.stalls import LatencyTracker
from sweepbench.errors import ConnectionRefused, ModelError, RetryableError

__all__ = ["BACKOFF_FLOOR_S", "BACKOFF_LATENCY_K", "HEALTHY_FAILING_SHARE", "RetryHook",
           "RetryPolicy"]

log = logging.getLogger(__name__)
T = TypeVar("T")

RetryHook = Callable[[RetryableError, float], None]
BACKOFF_LATENCY_K = 0.5
"""The quick back-off's base: this many of the endpoint's recent median latencies ..."""
BACKOFF_FLOOR_S = 0.02
"""... but at least this (however fast the endpoint), at most ``backoff_base_s``."""
HEALTHY_FAILING_SHARE = 0.5
"""Failed retries back off quickly while under this share of the endpoint's recent requests
failed (and its breaker is closed)."""


class RetryPolicy:
    """One endpoint's retry decisions and waits (see the module docstring).

    ``limits``: the endpoint's shared limits (breaker, recent outcomes, pause, clock);
    ``latency``: its recent latencies (the quick back-off's base). ``backoff_base_s`` /
    ``backoff_max_s`` shape the back-off: a random wait in ``[0, min(max, base *
    2**(retry-1))]``; ``retry_after_max_s`` caps how long a Retry-After may hold a call;
    ``on_retry(error, wait_s)`` is called before each back-off wait.
    """

    def __init__(self, *, name: str, limits: EndpointLimits, latency: LatencyTracker,
                 max_retries: int, backoff_base_s: float, backoff_max_s: float,
                 retry_after_max_s: float, on_retry: RetryHook | None) -> None:
        self._name = name
        self.max_retries = max_retries
        self.limits = limits
        self.latency = latency
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.retry_after_max_s = retry_after_max_s
        self._on_retry = on_retry

    async def run(self, attempt: Callable[[], Awaitable[T]], failed: ModelError,
                  call: CallLedger) -> T:
        """The rest of a call whose first attempt failed with ``failed``: wait and ``attempt()``
        again while the error is worth retrying, ``max_retries`` times at most; the last
        error is raised as it came. Back-off sleeps are counted on ``call``."""
        made = 1
        while made <= self.max_retries and self.worth_retrying(failed):
            wait = self.wait(failed, made)
            self.before_sleep(call, failed, made, wait)
            await self.sleep(wait)
            made += 1
            try:
                return await attempt()
            except ModelError as err:
                failed = err
        raise failed

    def worth_retrying(self, err: BaseException) -> bool:
        if isinstance(err, ConnectionRefused):  # nothing ever answered there: not running
            return self.limits.answered
        return isinstance(err, RetryableError)

    def wait(self, err: BaseException, made: int) -> float:
        """The wait after ``made`` attempts, the last of which failed with ``err``."""
        retry_after = getattr(err, "retry_after", None)
        if retry_after is not None:
            # Honour the server, plus a little jitter (a quarter of it, at most the quick
            # back-off) so that callers told the same time spread out.
            retry_after = min(retry_after, self.retry_after_max_s)
            return retry_after + random.uniform(
                0, min(self.quick_backoff_s(), max(BACKOFF_FLOOR_S, retry_after / 4)))
        return self.backoff(made)

    def backoff(self, made: int) -> float:
        """Full jitter: a random wait in ``[0, min(backoff_max_s, base * 2**(retry-1))]``.
        ``base`` is the quick back-off (half a median latency) while the endpoint mostly
        answers (breaker closed, under ``HEALTHY_FAILING_SHARE`` of its recent requests
        failed): its faults are isolated, a retry soon most likely succeeds. Otherwise it is
        ``backoff_base_s``: an endpoint in trouble is given time."""
        base = self.quick_backoff_s() if self.mostly_answering() else self.backoff_base_s
        return random.uniform(0, min(self.backoff_max_s,
                                     base * 2.0 ** (made - 1)))

    def quick_backoff_s(self) -> float:
        """``BACKOFF_LATENCY_K`` x the endpoint's recent median latency, clamped to
        ``[BACKOFF_FLOOR_S, backoff_base_s]``; ``backoff_base_s`` until that is known."""
        median = self.latency.quantile(0.5)
        base = self.backoff_base_s
        if median is None:
            return base
        return min(base, max(BACKOFF_FLOOR_S, BACKOFF_LATENCY_K * median))

    async def sleep(self, seconds: float) -> None:
        """The sleep before a retry. An episode's task (:data:`LEASE`) lends its sweep slot
        for it while the endpoint's faults are isolated (the same test as the quick
        back-off's, and the endpoint neither paused nor at its rate limit): then another
        episode may run meanwhile; an endpoint in trouble is sent no more work."""
        lease = LEASE.get()
        clock = self.limits.clock
        if lease is None or not self.isolated_faults():
            await clock.sleep(seconds)
            return
        await lease.sleep(seconds, clock.sleep)

    def mostly_answering(self) -> bool:
        """Breaker closed and under ``HEALTHY_FAILING_SHARE`` of recent requests failed: the
        endpoint's failures are isolated ones (the quick back-off's test)."""
        limits = self.limits
        return (limits.breaker.state == "closed"
                and limits.outcomes.failing_share < HEALTHY_FAILING_SHARE)

    def isolated_faults(self) -> bool:
        limits = self.limits
        return (self.mostly_answering() and not limits.outcomes.limit_hit()
                and limits.paused_until <= limits.clock.now())

    def before_sleep(self, call: CallLedger, err: ModelError, made: int, wait: float) -> None:
        call.backoff += wait
        if isinstance(err, RetryableError):
            log.debug("%s: attempt %d failed (%s), retrying in %.3fs", self._name,
                      made, type(err).__name__, wait)
            if self._on_retry is not None:
                self._on_retry(err, wait)
