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

Limits are plain objects passed in (``ModelClient(..., limits=...)``); a :class:`LimitsPool`
hands out one per key, so there is no process-global state. Time comes from an injectable
:class:`Clock` so the arithmetic is testable without sleeping.

Buckets are *reservation* buckets (GCRA): ``reserve(n)`` takes ``n`` at once, possibly into
debt, and returns how long the caller must wait for the debt to be repaid. Callers are thereby
served in arrival order, no lock or polling is needed, and a request larger than the burst
capacity still goes (after a proportionally longer wait) instead of starving.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from typing import Literal, Protocol

__all__ = [
    "AdaptiveConcurrency",
    "BreakerOpen",
    "CircuitBreaker",
    "Clock",
    "EndpointLimits",
    "LimitsPool",
    "MonotonicClock",
    "Permit",
    "AnswerWindow",
    "TokenBucket",
    "TokenEstimator",
]


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class MonotonicClock:
    """Wall time: ``time.monotonic`` and ``asyncio.sleep``."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


_CLOCK = MonotonicClock()


# ---- buckets ------------------------------------------------------------------------------


class TokenBucket:
    """``rate`` tokens per second, at most ``capacity`` banked; callers may go into debt.

    The bucket starts with ``initial`` tokens (default: ``capacity``). Debt is capped at
    ``window_s`` seconds of rate (a per-minute limit's minute): one absurd reservation or
    usage report never makes a caller wait longer than the window the limit is stated over.
    """

    def __init__(self, rate: float, capacity: float, *, initial: float | None = None,
                 clock: Clock = _CLOCK, window_s: float = 60.0) -> None:
        if rate <= 0 or capacity <= 0:
            raise ValueError(f"bucket rate and capacity must be > 0, got {rate}, {capacity}")
        self.rate = rate
        self.capacity = capacity
        self._floor = -rate * window_s
        self._clock = clock
        self._level = capacity if initial is None else min(initial, capacity)
        self._at = clock.now()

    @classmethod
    def per_minute(cls, limit: float, *, burst_s: float = 1.0, headroom: float = 1.0,
                   clock: Clock = _CLOCK) -> TokenBucket:
        """A bucket for a per-minute limit: ``headroom`` of the rate, ``burst_s`` of it banked."""
        rate = limit * headroom / 60.0
        return cls(rate, max(1.0, rate * burst_s), clock=clock)

    def _refill(self) -> None:
        now = self._clock.now()
        if now > self._at:
            self._level = min(self.capacity, self._level + (now - self._at) * self.rate)
            self._at = now

    @property
    def level(self) -> float:
        """Tokens available now (negative: debt still to be repaid)."""
        self._refill()
        return self._level

    def reserve(self, n: float) -> float:
        """Take ``n`` tokens now; return the seconds to wait before using them (0: go)."""
        self._refill()
        self._level = max(self._floor, self._level - n)
        return 0.0 if self._level >= 0 else -self._level / self.rate

    def adjust(self, delta: float) -> None:
        """Give back (``delta`` > 0) or take more (< 0), e.g. once true usage is known."""
        self._refill()
        self._level = max(self._floor, min(self.capacity, self._level + delta))

    async def acquire(self, n: float = 1.0) -> float:
        """Reserve ``n`` and sleep until they are ours; returns the seconds waited."""
        wait = self.reserve(n)
        if wait > 0:
            try:
                await self._clock.sleep(wait)
            except BaseException:  # cancelled while waiting: the tokens were never used
                self.adjust(n)
                raise
        return wait


class TokenEstimator:
    """Tokens a request will cost, guessed before the call from its body size.

    Starts at four bytes per prompt token (what the reference server counts) and learns the
    ratio and the mean completion length from each response's usage (moving averages).
    """

    def __init__(self, *, bytes_per_token: float = 4.0, alpha: float = 0.2) -> None:
        self.tokens_per_byte = 1.0 / bytes_per_token
        self.completion = 0.0
        self._alpha = alpha
        self._seen = False

    def estimate(self, body_bytes: int) -> int:
        return max(1, math.ceil(body_bytes * self.tokens_per_byte + self.completion))

    def observe(self, body_bytes: int, prompt_tokens: int, completion_tokens: int) -> None:
        if body_bytes <= 0 or prompt_tokens <= 0:
            return
        ratio = prompt_tokens / body_bytes
        if not self._seen:
            self.tokens_per_byte, self.completion, self._seen = ratio, completion_tokens, True
            return
        a = self._alpha
        self.tokens_per_byte += a * (ratio - self.tokens_per_byte)
        self.completion += a * (completion_tokens - self.completion)


# ---- adaptive concurrency -----------------------------------------------------------------


class AdaptiveConcurrency:
    """An in-flight cap that moves: AIMD between ``min_limit`` and ``max_limit``.

    ``on_overload(sent_at)`` multiplies the limit by ``decrease`` (a burst of 429s from requests
    sent before the last decrease counts once); ``on_success()`` adds ``1 / limit`` (about +1
    per limit's worth of successes, i.e. per round trip). Waiters are served first come first
    served.
    """

    def __init__(self, max_limit: int, *, min_limit: int = 1, initial: int | None = None,
                 decrease: float = 0.7, clock: Clock = _CLOCK) -> None:
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


ANSWERED, LIMITED, FAILED = 0, 1, 2
"""Outcomes of a request as :class:`AnswerWindow` counts them."""


class AnswerWindow:
    """The endpoint's last ``size`` request outcomes: answered, 429 (``LIMITED``), or failed
    as if down (``FAILED``: 5xx, no answer, an unreadable body). It tells isolated faults
    from an endpoint in trouble:

    - :meth:`limit_hit`: 429s cluster, at least ``min_count`` of them and at least ``share``
      of the window. A provider's random, isolated 429 says nothing about the endpoint's load
      (the request that got it waits out its Retry-After, nobody else); a real limit answers
      429 to most of what is sent, and only then do the in-flight cap and a Retry-After act
      on the whole endpoint.
    - :attr:`failing_share`: the share of failures, which the client's back-off reads (an
      endpoint that mostly answers gets its failed requests retried soon).
    """

    def __init__(self, size: int, share: float, min_count: int) -> None:
        if size < 1 or min_count < 1 or not 0 <= share <= 1:
            raise ValueError(f"need size >= 1, min_count >= 1, share in [0, 1]; got "
                             f"{size}, {min_count}, {share}")
        self.share = share
        self.min_count = min_count
        self.counts = [0, 0, 0]  # of each outcome in the window
        self._recent: deque[int] = deque(maxlen=size)

    def __len__(self) -> int:
        return len(self._recent)

    @property
    def limited(self) -> int:
        return self.counts[LIMITED]

    @property
    def failed(self) -> int:
        return self.counts[FAILED]

    def add(self, outcome: int) -> None:
        recent = self._recent
        if len(recent) == recent.maxlen:  # the oldest is about to drop out
            self.counts[recent[0]] -= 1
        recent.append(outcome)
        self.counts[outcome] += 1

    def limit_hit(self) -> bool:
        """Whether the window's 429s cluster (see the class docstring)."""
        limited = self.counts[LIMITED]
        return limited >= self.min_count and limited >= self.share * sum(self.counts)

    @property
    def failing_share(self) -> float:
        n = sum(self.counts)
        return self.counts[FAILED] / n if n else 0.0


# ---- circuit breaker ----------------------------------------------------------------------

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
                 max_cooldown_s: float = 30.0, clock: Clock = _CLOCK) -> None:
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

    def _open(self) -> None:
        self._open_until = self._clock.now() + self._cooldown_s
        self.opened += 1
        self._set("open")


# ---- one endpoint's limits ----------------------------------------------------------------


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
        clock: Clock = _CLOCK,
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
    def for_endpoint(cls, endpoint, *, clock: Clock = _CLOCK) -> EndpointLimits:
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

    def __init__(self, *, clock: Clock = _CLOCK) -> None:
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
