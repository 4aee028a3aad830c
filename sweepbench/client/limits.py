"""Per-endpoint limits: what keeps a sweep inside an endpoint's budget, and off it when it is down.

One :class:`EndpointLimits` holds everything one endpoint + account shares across every
client that talks to it (agent, user and judge calls to one account share one budget)::

    breaker     CircuitBreaker        closed -> open after N consecutive failures; callers wait
                                      (no retry budget spent) until a half-open probe succeeds
    pause       Retry-After           the whole endpoint waits when the server says so (a
                                      503's, or a 429's when 429s cluster)
    concurrency AdaptiveConcurrency   in-flight cap; AIMD: shrinks on clustered 429s, grows
                                      while healthy, never above max_concurrency
    outcomes    AnswerWindow          the last answers: whether 429s cluster (a real limit)
                                      or are isolated (then only the request that got one
                                      waits), and the share of failures (read by back-off)
    requests    TokenBucket (RPM)     one token per request
    tokens      TokenBucket (TPM)     estimated from the body size before the call, corrected
                                      from the response's usage after it

Each part is a module of its own (:mod:`~sweepbench.client.breaker`,
:mod:`~sweepbench.client.concurrency`, :mod:`~sweepbench.client.outcomes`,
:mod:`~sweepbench.client.buckets`); this one grants permits across them and takes each
attempt's outcome back to them.

Limits are plain objects passed in (``ModelClient(..., limits=...)``); a :class:`LimitsPool`
hands out one per key, so there is no process-global state. Time comes from an injectable
:class:`~sweepbench.client.clock.Clock` so the arithmetic is testable without sleeping.
"""

from __future__ import annotations

import asyncio

from sweepbench.client.breaker import CircuitBreaker
from sweepbench.client.buckets import TokenBucket, TokenEstimator
from sweepbench.client.clock import WALL_CLOCK, Clock
from sweepbench.client.concurrency import AdaptiveConcurrency
from sweepbench.client.outcomes import ANSWERED, FAILED, LIMITED, AnswerWindow

__all__ = ["EndpointLimits", "LimitsPool", "Permit"]


class Permit:
    """What :meth:`EndpointLimits.permit` granted one attempt; report its outcome on it."""

    __slots__ = ("estimate", "probe", "reported", "sent_at", "waited_s")

    def __init__(self, estimate: int, probe: bool, sent_at: float, waited_s: float) -> None:
        self.estimate = estimate
        self.probe = probe
        self.sent_at = sent_at
        self.waited_s = waited_s
        self.reported = False


class _Permitting:
    """One :meth:`EndpointLimits.permit`. A class rather than a generator-based context
    manager, and nothing awaited that would not wait: every request passes here (measured
    in-process, 4.2 -> 1.8 us per permit)."""

    __slots__ = ("_body_bytes", "_limits", "_permit")

    def __init__(self, limits: EndpointLimits, body_bytes: int) -> None:
        self._limits = limits
        self._body_bytes = body_bytes
        self._permit: Permit | None = None

    async def __aenter__(self) -> Permit:
        limits = self._limits
        limits._check_open()
        clock, breaker, concurrency = limits.clock, limits.breaker, limits.concurrency
        t0 = clock.now()
        probe = (False if breaker.state == "closed"
                 else await breaker.wait(limits.breaker_max_wait_s))
        try:
            # a pause that ended by t0 has ended now (the clock is monotonic): the clock is
            # asked again only while a pause may still run
            if limits.paused_until > t0 and limits.paused_until > clock.now():
                await limits._unpaused()
            sent_at = concurrency.try_acquire()
            if sent_at is None:
                sent_at = await concurrency.acquire()
            try:
                estimate = limits.estimator.estimate(self._body_bytes)
                if limits.requests is not None:
                    await limits.requests.acquire(1)
                if limits.tokens is not None:
                    await limits.tokens.acquire(estimate)
                if limits.paused_until > t0 and limits.paused_until > clock.now():
                    await limits._unpaused()  # a Retry-After arrived meanwhile
                limits._check_open()
            except BaseException:
                concurrency.release()
                raise
        except BaseException:
            if probe:
                breaker.abandon(True)
            raise
        permit = self._permit = Permit(estimate, probe, sent_at, clock.now() - t0)
        return permit

    async def __aexit__(self, *exc: object) -> None:
        limits, permit = self._limits, self._permit
        limits.concurrency.release()
        if permit is not None and permit.probe and not permit.reported:
            limits.breaker.abandon(True)


class EndpointLimits:
    """Everything one endpoint + account shares; see the module docstring.

    ``rpm`` / ``tpm`` of None mean no bucket. ``headroom`` scales both rates (aim a little
    under the limit); ``burst_s`` is the seconds of rate a bucket may bank. A 429 acts on the
    whole endpoint (in-flight cap x ``decrease``, Retry-After pause) only when at least
    ``rate_limit_min`` and ``rate_limit_share`` of the last ``rate_limit_window`` answers
    were 429s (:class:`AnswerWindow`).
    """

    def __init__(
        self,
        *,
        max_concurrency: int = 64,
        min_concurrency: int = 1,
        adaptive: bool = True,
        rpm: float | None = None,
        tpm: float | None = None,
        headroom: float = 0.97,
        burst_s: float = 1.0,
        breaker_threshold: int = 10,
        breaker_cooldown_s: float = 1.0,
        breaker_max_wait_s: float | None = 600.0,
        rate_limit_window: int = 50,
        rate_limit_share: float = 0.3,
        rate_limit_min: int = 3,
        clock: Clock = WALL_CLOCK,
    ) -> None:
        self.clock = clock
        self.outcomes = AnswerWindow(rate_limit_window, rate_limit_share, rate_limit_min)
        self.concurrency = AdaptiveConcurrency(
            max_concurrency, min_limit=min(min_concurrency, max_concurrency), clock=clock)
        self.adaptive = adaptive
        self.requests = (TokenBucket.per_minute(rpm, burst_s=burst_s, headroom=headroom,
                                                clock=clock) if rpm else None)
        self.tokens = (TokenBucket.per_minute(tpm, burst_s=burst_s, headroom=headroom,
                                              clock=clock) if tpm else None)
        self.estimator = TokenEstimator()
        self.breaker = CircuitBreaker(threshold=breaker_threshold, cooldown_s=breaker_cooldown_s,
                                      clock=clock)
        self.breaker_max_wait_s = breaker_max_wait_s
        self.paused_until = 0.0
        self.pauses = 0
        self.closed = False
        """Set when the sweep stops (a signal): no request may start after it."""
        self.answered = False
        """Whether the endpoint ever answered (any HTTP status): until it has, a refused
        connection means nothing is running there, and the client fails at once."""

    @classmethod
    def for_endpoint(cls, endpoint, *, clock: Clock = WALL_CLOCK) -> EndpointLimits:
        """Limits from an Endpoint's fields (the optional ones fall back to defaults)."""
        g = lambda name, default: getattr(endpoint, name, default)
        return cls(
            max_concurrency=endpoint.max_concurrency,
            min_concurrency=g("min_concurrency", 1),
            adaptive=g("adaptive_concurrency", True),
            rpm=g("rpm", None),
            tpm=g("tpm", None),
            headroom=g("rate_headroom", 0.97),
            breaker_threshold=g("breaker_threshold", 10),
            breaker_cooldown_s=g("breaker_cooldown_s", 1.0),
            breaker_max_wait_s=g("breaker_max_wait_s", 600.0),
            clock=clock,
        )

    # -- before the request ---------------------------------------------------------------

    def pause(self, seconds: float) -> None:
        """Hold every new request to this endpoint for ``seconds`` (Retry-After)."""
        until = self.clock.now() + max(0.0, seconds)
        if until > self.paused_until:
            self.paused_until = until
            self.pauses += 1

    async def _unpaused(self) -> float:
        waited = 0.0
        while (left := self.paused_until - self.clock.now()) > 0:
            await self.clock.sleep(left)
            waited += left
        return waited

    def permit(self, body_bytes: int) -> _Permitting:
        """``async with limits.permit(n) as permit``: wait for the breaker, a pause, a slot and
        the buckets; hold the slot inside.

        Once the limits are closed, every permit is cancelled instead of granted."""
        return _Permitting(self, body_bytes)

    @property
    def faulted_lately(self) -> bool:
        """Whether the last answers (the :class:`AnswerWindow`) hold isolated faults, a 429
        or a failed request, but no cluster of 429s: an endpoint answering everything needs
        no backups, and one at its rate limit must not be sent more."""
        outcomes = self.outcomes
        return bool(outcomes.limited or outcomes.failed) and not outcomes.limit_hit()

    def try_permit(self, body_bytes: int, *, keep: float = 0.0) -> Permit | None:
        """A permit granted now, or None where :meth:`permit` would wait (closed, breaker not
        closed, paused, no free slot or somebody queued for one) or where taking it would
        leave a bucket under ``keep`` of its capacity: for a request worth sending only on
        room nobody needs (a ramp-down backup keeps half of each bucket banked for the
        requests that must go). The caller releases its slot (``concurrency.release()``)
        when the request is done."""
        now = self.clock.now()
        if self.closed or self.breaker.state != "closed" or self.paused_until > now:
            return None
        sent_at = self.concurrency.try_acquire()
        if sent_at is None:
            return None
        estimate = self.estimator.estimate(body_bytes)
        requests, tokens = self.requests, self.tokens
        if ((requests is not None and requests.level - 1 < keep * requests.capacity)
                or (tokens is not None and tokens.level - estimate < keep * tokens.capacity)):
            self.concurrency.release()
            return None
        if requests is not None:
            requests.reserve(1)
        if tokens is not None:
            tokens.reserve(estimate)
        return Permit(estimate, False, sent_at, 0.0)

    def _check_open(self) -> None:
        if self.closed:
            raise asyncio.CancelledError("endpoint limits closed: the sweep is stopping")

    # -- after it -------------------------------------------------------------------------

    def succeeded(self, permit: Permit, body_bytes: int, prompt_tokens: int,
                  completion_tokens: int) -> None:
        permit.reported = True
        self.outcomes.add(ANSWERED)
        self.breaker.success(permit.probe)
        if self.adaptive:
            self.concurrency.on_success()
        if prompt_tokens or completion_tokens:
            self.estimator.observe(body_bytes, prompt_tokens, completion_tokens)
            if self.tokens is not None:
                self.tokens.adjust(permit.estimate - (prompt_tokens + completion_tokens))

    def rate_limited(self, permit: Permit, retry_after: float | None) -> None:
        """A 429: the endpoint is alive. When 429s cluster (a limit is being hit), the in-flight
        cap shrinks and a Retry-After holds every request; an isolated one changes nothing
        here (the client holds the request that got it for its Retry-After)."""
        permit.reported = True
        self.breaker.success(permit.probe)  # alive, just busy
        self.outcomes.add(LIMITED)
        if not self.outcomes.limit_hit():
            return
        if self.adaptive:
            self.concurrency.on_overload(permit.sent_at)
        if retry_after is not None:
            self.pause(retry_after)

    def failed(self, permit: Permit, *, down: bool | None, retry_after: float | None = None,
               reason: str = "") -> None:
        """A failed attempt; ``down``: the endpoint looks unavailable (5xx, no answer), False:
        it answered (alive), None: says nothing about it. ``reason`` is kept for errors."""
        permit.reported = True
        if down is not None:
            self.outcomes.add(FAILED if down else ANSWERED)
        if down:
            self.breaker.failure(permit.probe, reason)
        elif down is None:
            self.breaker.abandon(permit.probe)
        else:
            self.breaker.success(permit.probe)
        if retry_after is not None:
            self.pause(retry_after)


class LimitsPool:
    """One :class:`EndpointLimits` per key (endpoint + account); owned by whoever runs a sweep."""

    def __init__(self, *, clock: Clock = WALL_CLOCK) -> None:
        self._clock = clock
        self._limits: dict[str, EndpointLimits] = {}
        self.closed = False

    def get(self, key: str, endpoint) -> EndpointLimits:
        limits = self._limits.get(key)
        if limits is None:
            limits = self._limits[key] = EndpointLimits.for_endpoint(endpoint, clock=self._clock)
            limits.closed = self.closed
        return limits

    def close(self) -> None:
        """No request starts after this (safe to call from a signal handler)."""
        self.closed = True
        for limits in self._limits.values():
            limits.closed = True

    def __len__(self) -> int:
        return len(self._limits)
