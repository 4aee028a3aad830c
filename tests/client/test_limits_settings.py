"""Endpoint limits as configured: defaults, what an Endpoint's fields set, argument checks, the
arithmetic at boundaries, and what each outcome report does to the breaker (fake clocks)."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest

from sweepbench.config import Endpoint
from sweepbench.client.limits import (
    AdaptiveConcurrency,
    BreakerOpen,
    CircuitBreaker,
    EndpointLimits,
    LimitsPool,
    MonotonicClock,
    TokenBucket,
    TokenEstimator,
)

from ..support import FakeClock


class ManualClock:
    """Time moves only when the test says so; sleepers wake when their time has come."""

    def __init__(self) -> None:
        self.t = 0.0
        self.sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        fut = asyncio.get_running_loop().create_future()
        self.sleepers.append((self.t + seconds, fut))
        await fut

    async def advance(self, seconds: float) -> None:
        self.t += seconds
        for at, fut in list(self.sleepers):
            if at <= self.t and not fut.done():
                fut.set_result(None)
        for _ in range(5):
            await asyncio.sleep(0)


# ---- argument checks --------------------------------------------------------------------------


@pytest.mark.parametrize("rate, capacity", [(0, 5), (5, 0), (-1, 5), (5, -1)])
def test_a_bucket_needs_a_positive_rate_and_capacity(rate, capacity) -> None:
    with pytest.raises(ValueError, match=f"bucket rate and capacity must be > 0, got {rate}, {capacity}"):
        TokenBucket(rate, capacity)


@pytest.mark.parametrize("kw, message", [
    ({"max_limit": 0}, "need 1 <= min_limit <= max_limit, got 1, 0"),
    ({"max_limit": 4, "min_limit": 0}, "need 1 <= min_limit <= max_limit, got 0, 4"),
    ({"max_limit": 4, "min_limit": 5}, "need 1 <= min_limit <= max_limit, got 5, 4"),
    ({"max_limit": 4, "decrease": 0.0}, r"decrease must be in \(0, 1\), got 0.0"),
    ({"max_limit": 4, "decrease": 1.0}, r"decrease must be in \(0, 1\), got 1.0"),
    ({"max_limit": 4, "decrease": 1.5}, r"decrease must be in \(0, 1\), got 1.5"),
])
def test_concurrency_bounds_and_decrease_are_checked(kw, message) -> None:
    with pytest.raises(ValueError, match=message):
        AdaptiveConcurrency(**kw)


def test_a_breaker_needs_a_threshold_of_at_least_one() -> None:
    with pytest.raises(ValueError, match="breaker threshold must be >= 1, got 0"):
        CircuitBreaker(threshold=0)
    assert CircuitBreaker(threshold=1).threshold == 1


# ---- buckets ----------------------------------------------------------------------------------


def test_a_bucket_may_start_below_capacity_never_above() -> None:
    clock = FakeClock()
    assert TokenBucket(2.0, 10.0, initial=4.0, clock=clock).level == 4.0
    assert TokenBucket(2.0, 10.0, initial=40.0, clock=clock).level == 10.0
    assert TokenBucket(2.0, 10.0, clock=clock).level == 10.0


def test_debt_is_capped_at_the_window_the_limit_is_stated_over() -> None:
    clock = FakeClock()
    bucket = TokenBucket(2.0, 10.0, clock=clock)
    assert bucket.reserve(1e9) == 60.0  # a minute of rate, at most
    assert TokenBucket(2.0, 10.0, clock=clock, window_s=5.0).reserve(1e9) == 5.0


def test_a_partly_used_bucket_lets_the_caller_go_at_once() -> None:
    clock = FakeClock()
    bucket = TokenBucket(10.0, 1.0, clock=clock)
    assert bucket.reserve(0.5) == 0.0 and bucket.level == 0.5
    assert bucket.reserve(0.5) == 0.0
    assert bucket.reserve(1.0) == pytest.approx(0.1)


def test_per_minute_buckets_take_rate_burst_and_headroom() -> None:
    clock = FakeClock()
    b = TokenBucket.per_minute(600, clock=clock)
    assert (b.rate, b.capacity) == (10.0, 10.0)
    b = TokenBucket.per_minute(600, burst_s=3.0, headroom=0.5, clock=clock)
    assert (b.rate, b.capacity) == (5.0, 15.0)
    assert TokenBucket.per_minute(6, clock=clock).capacity == 1.0  # one request at least


async def test_acquire_takes_one_token_unless_told_otherwise() -> None:
    bucket = TokenBucket(1.0, 5.0, clock=FakeClock())
    assert await bucket.acquire() == 0.0
    assert bucket.level == 4.0


async def test_the_wall_clock_sleeps_for_real() -> None:
    clock = MonotonicClock()
    t0 = clock.now()
    await clock.sleep(0.02)
    assert clock.now() - t0 >= 0.02


# ---- the estimator ----------------------------------------------------------------------------


def test_the_estimator_starts_at_four_bytes_a_token_and_at_least_one() -> None:
    est = TokenEstimator()
    assert est.estimate(4000) == 1000 and est.estimate(0) == 1 and est.estimate(2) == 1


def test_the_estimator_takes_its_first_observation_whole_then_moves_a_fifth() -> None:
    est = TokenEstimator()
    est.observe(1000, prompt_tokens=500, completion_tokens=100)
    assert (est.tokens_per_byte, est.completion) == (0.5, 100)
    est.observe(1000, prompt_tokens=1000, completion_tokens=200)
    assert est.tokens_per_byte == pytest.approx(0.6) and est.completion == pytest.approx(120)


@pytest.mark.parametrize("body, prompt", [(0, 10), (-5, 10), (10, 0), (10, -3)])
def test_the_estimator_ignores_reports_it_cannot_learn_from(body, prompt) -> None:
    est = TokenEstimator()
    est.observe(body, prompt_tokens=prompt, completion_tokens=50)
    assert (est.tokens_per_byte, est.completion) == (0.25, 0.0)


def test_the_estimator_learns_from_the_smallest_real_reports() -> None:
    est = TokenEstimator()
    est.observe(1, prompt_tokens=1, completion_tokens=0)
    assert est.tokens_per_byte == 1.0
    est = TokenEstimator()
    est.observe(8, prompt_tokens=1, completion_tokens=0)
    assert est.tokens_per_byte == 0.125


# ---- concurrency ------------------------------------------------------------------------------


async def test_a_cancelled_waiter_leaves_the_queue_at_once() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    waiter = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    assert len(c._waiters) == 1
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert len(c._waiters) == 0 and c.in_flight == 1


async def test_a_429_of_a_request_sent_at_the_decrease_counts_again() -> None:
    clock = FakeClock()
    c = AdaptiveConcurrency(16, decrease=0.5, clock=clock)
    c.on_overload(await c.acquire())
    c.on_overload(await c.acquire())  # sent after the decrease (same clock reading)
    assert (c.limit, c.decreases) == (4.0, 2)


# ---- breaker ----------------------------------------------------------------------------------


async def test_the_default_breaker_opens_after_ten_failures_and_cools_down_from_one_second() -> None:
    clock = FakeClock()
    br = CircuitBreaker(clock=clock)
    for _ in range(9):
        br.failure()
    assert br.state == "closed"
    br.failure()
    assert br.state == "open"
    waits = []
    for _ in range(7):
        t0 = clock.now()
        assert await br.wait() is True
        waits.append(clock.now() - t0)
        br.failure(probe=True)
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


async def test_a_short_cool_down_is_not_rounded_up() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=0.25, clock=clock)
    br.failure()
    t0 = clock.now()
    assert await br.wait() is True
    assert clock.now() - t0 == 0.25


async def test_waiting_behind_a_probe_costs_no_polling() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=1.0, clock=clock)
    br.failure()
    assert await br.wait() is True  # the probe
    slept = len(clock.slept)
    behind = asyncio.create_task(br.wait())
    for _ in range(20):
        await asyncio.sleep(0)
    assert not behind.done() and len(clock.slept) == slept  # asleep until the probe reports
    br.success(probe=True)
    assert await asyncio.wait_for(behind, 1.0) is False


async def test_max_wait_counts_from_when_the_caller_started_waiting() -> None:
    clock = ManualClock()
    br = CircuitBreaker(threshold=1, cooldown_s=1.0, clock=clock)
    br.failure()
    probe = asyncio.create_task(br.wait())
    behind = asyncio.create_task(br.wait(max_wait_s=30.0))
    await clock.advance(0)
    await clock.advance(1.0)  # half-open: the first takes the probe, the other waits on
    assert probe.done() and probe.result() is True and not behind.done()
    await clock.advance(28.9)
    assert not behind.done()
    await clock.advance(0.1)
    with pytest.raises(BreakerOpen) as info:
        await asyncio.wait_for(behind, 1.0)
    assert info.value.waited_s == pytest.approx(30.0)


def test_breaker_open_says_what_it_knows() -> None:
    bare = BreakerOpen(2.0)
    assert str(bare) == "endpoint unavailable: circuit breaker open for 2.0s"
    assert bare.last_failure == "" and bare.waited_s == 2.0
    full = BreakerOpen(3.25, "HTTP 503: busy", 4)
    assert str(full) == ("endpoint unavailable: circuit breaker open for 3.2s after 4 "
                         "consecutive failures; last: HTTP 503: busy")
    assert full.last_failure == "HTTP 503: busy"


async def test_failures_without_a_reason_give_up_without_naming_one() -> None:
    clock = FakeClock()
    lim = EndpointLimits(breaker_threshold=1, breaker_cooldown_s=100.0, breaker_max_wait_s=5.0,
                         clock=clock)
    async with lim.permit(10) as p:
        lim.failed(p, down=True)
    assert lim.breaker.last_failure == ""
    with pytest.raises(BreakerOpen) as info:
        async with lim.permit(10):
            pass
    assert str(info.value) == ("endpoint unavailable: circuit breaker open for 5.0s after 1 "
                               "consecutive failures")
    br = CircuitBreaker(threshold=2, clock=clock)
    br.failure(reason="x")
    br.failure()
    assert br.last_failure == "x"  # kept from the last failure that said why


# ---- one endpoint's limits ----------------------------------------------------------------------


def test_endpoint_limits_defaults() -> None:
    clock = FakeClock()
    lim = EndpointLimits(clock=clock, rpm=600, tpm=60_000)
    assert (lim.concurrency.max_limit, lim.concurrency.min_limit, lim.adaptive) == (64, 1, True)
    assert lim.requests.rate == pytest.approx(600 * 0.97 / 60) and lim.requests.capacity == lim.requests.rate
    assert lim.tokens.rate == pytest.approx(60_000 * 0.97 / 60) and lim.tokens.capacity == lim.tokens.rate
    assert (lim.breaker.threshold, lim.breaker.base_cooldown_s, lim.breaker_max_wait_s) == (10, 1.0, 600.0)
    assert (lim.paused_until, lim.pauses, lim.closed, lim.answered) == (0.0, 0, False, False)
    bare = EndpointLimits(clock=clock)
    assert bare.requests is None and bare.tokens is None


def test_endpoint_limits_pass_every_setting_on() -> None:
    clock = FakeClock()
    lim = EndpointLimits(max_concurrency=8, min_concurrency=3, adaptive=False, rpm=120, tpm=6000,
                         headroom=0.5, burst_s=4.0, breaker_threshold=2, breaker_cooldown_s=7.0,
                         breaker_max_wait_s=None, clock=clock)
    assert (lim.concurrency.max_limit, lim.concurrency.min_limit, lim.adaptive) == (8, 3, False)
    assert (lim.requests.rate, lim.requests.capacity) == (1.0, 4.0)
    assert (lim.tokens.rate, lim.tokens.capacity) == (50.0, 200.0)
    assert (lim.breaker.threshold, lim.breaker.base_cooldown_s, lim.breaker_max_wait_s) == (2, 7.0, None)
    assert EndpointLimits(max_concurrency=2, min_concurrency=5, clock=clock).concurrency.min_limit == 2


def test_limits_from_an_endpoints_fields() -> None:
    ep = Endpoint(name="m", base_url="http://x/v1", max_concurrency=9, min_concurrency=2,
                  adaptive_concurrency=False, rpm=60, tpm=600, rate_headroom=0.5,
                  breaker_threshold=3, breaker_cooldown_s=4.0, breaker_max_wait_s=50.0)
    clock = FakeClock()
    lim = EndpointLimits.for_endpoint(ep, clock=clock)
    assert (lim.concurrency.max_limit, lim.concurrency.min_limit, lim.adaptive) == (9, 2, False)
    assert lim.requests.rate == 0.5 and lim.tokens.rate == 5.0
    assert (lim.breaker.threshold, lim.breaker.base_cooldown_s, lim.breaker_max_wait_s) == (3, 4.0, 50.0)
    assert lim.clock is clock and lim.breaker._clock is clock and lim.concurrency._clock is clock


def test_limits_from_an_endpoint_without_the_optional_fields_use_defaults() -> None:
    lim = EndpointLimits.for_endpoint(SimpleNamespace(max_concurrency=5), clock=FakeClock())
    assert (lim.concurrency.max_limit, lim.concurrency.min_limit, lim.adaptive) == (5, 1, True)
    assert lim.requests is None and lim.tokens is None
    assert (lim.breaker.threshold, lim.breaker.base_cooldown_s, lim.breaker_max_wait_s) == (10, 1.0, 600.0)
    lim = EndpointLimits.for_endpoint(SimpleNamespace(max_concurrency=5, rpm=60), clock=FakeClock())
    assert lim.requests.rate == pytest.approx(0.97)


async def test_the_permits_clock_is_the_limits_clock() -> None:
    clock = FakeClock(t=5.0)
    lim = EndpointLimits(breaker_threshold=1, breaker_cooldown_s=3.0, clock=clock)
    async with lim.permit(10) as p:
        assert p.sent_at == 5.0 and p.waited_s == 0.0  # not held by a pause it was never given
        lim.failed(p, down=True)
    async with lim.permit(10) as p:
        assert p.probe and clock.now() == 8.0


async def test_pauses_are_counted_once_and_never_negative() -> None:
    clock = FakeClock()
    lim = EndpointLimits(clock=clock)
    lim.pause(2.0)
    lim.pause(2.0)  # the same pause again
    lim.pause(1.0)
    assert lim.pauses == 1
    lim.pause(3.0)
    assert lim.pauses == 2 and lim.paused_until == clock.now() + 3.0
    other = EndpointLimits(clock=clock)
    other.pause(-5.0)
    assert other.paused_until == clock.now()
    async with other.permit(10) as p:
        assert p.waited_s == 0.0


async def test_a_short_pause_is_waited_out_in_full() -> None:
    clock = FakeClock()
    lim = EndpointLimits(clock=clock)
    lim.pause(0.5)
    async with lim.permit(10) as p:
        assert p.waited_s == 0.5


async def test_closed_limits_refuse_new_permits_saying_why() -> None:
    lim = EndpointLimits(clock=FakeClock())
    lim.closed = True
    with pytest.raises(asyncio.CancelledError, match="^endpoint limits closed: the sweep is stopping$"):
        async with lim.permit(10):
            pass


async def test_true_usage_corrects_the_token_bucket() -> None:
    clock = FakeClock()
    lim = EndpointLimits(tpm=6000, headroom=1.0, clock=clock)  # 100 tokens/s, 100 banked
    async with lim.permit(200) as p:  # estimated 50
        lim.succeeded(p, 200, prompt_tokens=30, completion_tokens=10)
    assert lim.tokens.level == pytest.approx(60.0)


@pytest.mark.parametrize("report", ["succeeded", "rate_limited", "failed_down", "failed_alive",
                                    "failed_unknown"])
async def test_every_report_marks_the_permit_reported(report) -> None:
    lim = EndpointLimits(clock=FakeClock())
    async with lim.permit(10) as p:
        assert p.reported is False
        {"succeeded": lambda: lim.succeeded(p, 10, 1, 1),
         "rate_limited": lambda: lim.rate_limited(p, None),
         "failed_down": lambda: lim.failed(p, down=True),
         "failed_alive": lambda: lim.failed(p, down=False),
         "failed_unknown": lambda: lim.failed(p, down=None)}[report]()
        assert p.reported is True


@pytest.mark.parametrize("answer", ["succeeded", "rate_limited", "failed_alive"])
async def test_a_probe_that_got_an_answer_lets_a_later_probe_through(answer) -> None:
    clock = FakeClock()
    lim = EndpointLimits(breaker_threshold=1, breaker_cooldown_s=1.0, clock=clock)
    for _ in range(2):  # open, probe, answered: closed; and again
        async with lim.permit(10) as p:
            lim.failed(p, down=True)
        assert lim.breaker.state == "open"
        async with lim.permit(10) as p:
            assert p.probe
            {"succeeded": lambda: lim.succeeded(p, 10, 0, 0),
             "rate_limited": lambda: lim.rate_limited(p, None),
             "failed_alive": lambda: lim.failed(p, down=False)}[answer]()
        assert lim.breaker.state == "closed" and lim.breaker._probing is False


async def test_a_probe_that_finds_the_endpoint_down_doubles_the_cool_down() -> None:
    clock = FakeClock()
    lim = EndpointLimits(breaker_threshold=1, breaker_cooldown_s=1.0, clock=clock)
    async with lim.permit(10) as p:
        lim.failed(p, down=True)
    t0 = clock.now()
    async with lim.permit(10) as p:
        assert p.probe and clock.now() - t0 == 1.0
        lim.failed(p, down=True, retry_after=0.5)
    t1 = clock.now()
    async with lim.permit(10) as p:
        assert p.probe and clock.now() - t1 == 2.0
    assert lim.pauses == 1


async def test_a_failure_with_retry_after_pauses_the_endpoint() -> None:
    clock = FakeClock()
    lim = EndpointLimits(clock=clock)
    async with lim.permit(10) as p:
        lim.failed(p, down=True, retry_after=3.0)
    assert lim.paused_until == clock.now() + 3.0
    t0 = clock.now()
    async with lim.permit(10):
        assert clock.now() - t0 == 3.0


# ---- the pool ---------------------------------------------------------------------------------


async def test_the_pool_hands_out_limits_on_its_clock_and_closes_them_all() -> None:
    clock = FakeClock()
    pool = LimitsPool(clock=clock)
    ep = Endpoint(name="m", base_url="http://x/v1")
    a = pool.get("a", ep)
    assert a.clock is clock and pool.closed is False and a.closed is False
    pool.close()
    assert pool.closed and a.closed
    b = pool.get("b", ep)
    assert b.closed is True
    for limits in (a, b):
        with pytest.raises(asyncio.CancelledError):
            async with limits.permit(10):
                pass


def test_a_wall_clock_is_used_when_none_is_given() -> None:
    t0 = time.monotonic()
    now = EndpointLimits().clock.now()
    assert t0 <= now <= time.monotonic()


async def test_the_request_bucket_runs_on_the_limits_clock() -> None:
    clock = FakeClock()
    lim = EndpointLimits(rpm=60, headroom=1.0, clock=clock)  # one request a second, one banked
    for _ in range(3):
        async with lim.permit(10) as p:
            lim.succeeded(p, 10, 0, 0)
    assert clock.now() == 1002.0 and clock.slept == [1.0, 1.0]
