"""Endpoint limits as configured: defaults, what an Endpoint's fields set, pauses at their
boundaries, and what each outcome report does to the breaker (fake clocks)."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest

from sweepbench.config import Endpoint
from sweepbench.client.breaker import BreakerOpen, CircuitBreaker
from sweepbench.client.limits import EndpointLimits, LimitsPool

from ..support import FakeClock


# ---- the breaker, through the limits ------------------------------------------------------------


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
