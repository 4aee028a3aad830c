"""Endpoint limits with a fake clock: permits across the breaker, a pause, a slot and the
buckets; what clustered and isolated 429s do; outcome reports; the pool."""

from __future__ import annotations

import asyncio

import pytest

from sweepbench.client.breaker import BreakerOpen
from sweepbench.client.limits import EndpointLimits, LimitsPool

from ..support import FakeClock


async def test_permit_order_pause_and_token_correction() -> None:
    clock = FakeClock()
    lim = EndpointLimits(max_concurrency=4, rpm=600, tpm=6000, headroom=1.0, burst_s=1.0,
                         clock=clock)
    # tokens: 100/s, capacity 100; requests 10/s, capacity 10
    async with lim.permit(400) as p:  # estimate 100 tokens: the whole burst
        assert p.estimate == 100 and p.waited_s == 0.0
        lim.succeeded(p, 400, prompt_tokens=50, completion_tokens=0)  # used half
    assert lim.tokens.level == pytest.approx(50.0)
    lim.pause(3.0)
    t0 = clock.now()
    async with lim.permit(40) as p:
        lim.succeeded(p, 40, prompt_tokens=5, completion_tokens=5)
    assert clock.now() - t0 == pytest.approx(3.0)
    assert lim.concurrency.in_flight == 0


async def test_clustered_429s_pause_endpoint_and_shrink() -> None:
    clock = FakeClock()
    lim = EndpointLimits(max_concurrency=10, clock=clock)
    for _ in range(2):  # two 429s in a row: not yet a cluster (rate_limit_min 3)
        async with lim.permit(10) as p:
            lim.rate_limited(p, retry_after=2.0)
    assert (lim.concurrency.limit, lim.pauses, lim.paused_until) == (10.0, 0, 0.0)
    async with lim.permit(10) as p:  # the third: the endpoint is being limited
        lim.rate_limited(p, retry_after=2.0)
    assert lim.concurrency.limit == pytest.approx(7.0)
    assert lim.paused_until == pytest.approx(clock.now() + 2.0)
    lim.pause(1.0)  # a shorter pause does not cut a longer one short
    assert lim.paused_until == pytest.approx(clock.now() + 2.0)


async def test_an_isolated_429_leaves_the_endpoint_alone() -> None:
    clock = FakeClock()
    lim = EndpointLimits(max_concurrency=10, clock=clock)
    for i in range(100):  # one 429 in ten answers, as a provider's random ones
        async with lim.permit(10) as p:
            if i % 10 == 9:
                lim.rate_limited(p, retry_after=2.0)
            else:
                lim.succeeded(p, 10, 0, 0)
    assert lim.outcomes.limited == 5  # the last 50 answers' 429s
    assert (lim.concurrency.limit, lim.concurrency.decreases) == (10.0, 0)
    assert (lim.pauses, lim.paused_until) == (0, 0.0)


@pytest.mark.parametrize(("ok", "limited", "hit"), [(35, 15, True), (36, 15, True),
                                                    (36, 14, False), (0, 2, False)])
async def test_default_cluster_is_30_percent_of_the_last_50_answers(ok, limited, hit) -> None:
    clock = FakeClock()
    lim = EndpointLimits(max_concurrency=10, clock=clock)
    for _ in range(ok):
        async with lim.permit(10) as p:
            lim.succeeded(p, 10, 0, 0)
    for _ in range(limited):
        async with lim.permit(10) as p:
            lim.rate_limited(p, retry_after=1.0)
    assert (lim.pauses, lim.concurrency.decreases) == ((1, 1) if hit else (0, 0))
    assert len(lim.outcomes) == min(50, ok + limited)


async def test_failures_feed_the_window_but_a_refused_first_connection_does_not() -> None:
    lim = EndpointLimits(clock=FakeClock())
    for down in (True, False, None):
        async with lim.permit(10) as p:
            lim.failed(p, down=down)
    assert (lim.outcomes.failed, len(lim.outcomes)) == (1, 2)
    assert lim.outcomes.failing_share == 0.5


async def test_probe_permit_abandoned_on_exception() -> None:
    lim = EndpointLimits(breaker_threshold=1, breaker_cooldown_s=0.0)
    async with lim.permit(10) as p:
        lim.failed(p, down=True)
    assert lim.breaker.state == "open"
    with pytest.raises(RuntimeError):
        async with lim.permit(10) as p:
            assert p.probe
            raise RuntimeError("client-side bug")
    assert lim.breaker._probing is False
    async with lim.permit(10) as p:
        assert p.probe
        lim.succeeded(p, 10, 0, 0)
    assert lim.breaker.state == "closed"


async def test_a_permit_refused_on_the_way_in_gives_back_its_slot_and_its_probe() -> None:
    # a half-open probe holds a slot and waits on the request bucket; the limits close
    # meanwhile (the sweep stops): the permit is refused, and neither the slot nor the
    # probe stays taken
    clock = FakeClock()
    lim = EndpointLimits(max_concurrency=2, breaker_threshold=1, breaker_cooldown_s=0.0,
                         rpm=60, headroom=1.0, burst_s=1.0, clock=clock)
    async with lim.permit(10) as p:  # the bucket's one request, and a failure: open
        lim.failed(p, down=True)
    entering = asyncio.ensure_future(lim.permit(10).__aenter__())
    await asyncio.sleep(0)  # holding a slot, asleep on the bucket
    assert lim.concurrency.in_flight == 1 and lim.breaker._probing
    lim.closed = True
    with pytest.raises(asyncio.CancelledError):
        await entering
    assert lim.concurrency.in_flight == 0 and not lim.breaker._probing


async def test_a_retry_after_that_comes_while_a_permit_waits_on_a_bucket_holds_it() -> None:
    clock = FakeClock()
    lim = EndpointLimits(rpm=60, headroom=1.0, burst_s=1.0, clock=clock)
    async with lim.permit(10):  # the bucket's one request
        pass
    entering = asyncio.ensure_future(lim.permit(10).__aenter__())
    await asyncio.sleep(0)  # asleep on the bucket
    lim.pause(30.0)
    until = lim.paused_until
    await entering
    assert clock.now() >= until


def test_pool_keys_limits() -> None:
    from sweepbench.config import Endpoint

    pool = LimitsPool()
    ep = Endpoint(name="m", base_url="http://x/v1", max_concurrency=7)
    a = pool.get("k1", ep)
    assert pool.get("k1", ep) is a and pool.get("k2", ep) is not a and len(pool) == 2
    assert a.concurrency.max_limit == 7


async def test_breaker_gives_up_naming_the_failure_that_opened_it() -> None:
    clock = FakeClock()
    lim = EndpointLimits(breaker_threshold=2, breaker_cooldown_s=100.0, breaker_max_wait_s=5.0,
                         clock=clock)
    for reason in ("HTTP 500: first", "HTTP 500: upstream exploded"):
        async with lim.permit(10) as p:
            lim.failed(p, down=True, reason=reason)
    with pytest.raises(BreakerOpen) as info:
        async with lim.permit(10):
            pass
    assert str(info.value) == ("endpoint unavailable: circuit breaker open for 5.0s after 2 "
                               "consecutive failures; last: HTTP 500: upstream exploded")


async def test_a_failure_that_says_nothing_about_the_endpoint_leaves_the_breaker_alone() -> None:
    lim = EndpointLimits(breaker_threshold=1, breaker_cooldown_s=0.0)
    async with lim.permit(10) as p:
        lim.failed(p, down=None)  # e.g. nothing listening yet: no breaker to open
    assert lim.breaker.state == "closed" and lim.breaker.failures == 0
    async with lim.permit(10) as p:
        lim.failed(p, down=True, reason="x")
    assert lim.breaker.state == "open"
    async with lim.permit(10) as p:  # the half-open probe, abandoned: another may probe
        assert p.probe
        lim.failed(p, down=None)
    assert lim.breaker.state == "half_open" and lim.breaker._probing is False


async def test_a_429_is_a_sign_of_life_not_of_an_endpoint_down() -> None:
    lim = EndpointLimits(breaker_threshold=2, breaker_cooldown_s=5.0, clock=FakeClock())
    for _ in range(5):
        async with lim.permit(10) as p:
            lim.rate_limited(p, retry_after=None)
    assert lim.breaker.state == "closed" and lim.breaker.failures == 0
    async with lim.permit(10) as p:
        lim.failed(p, down=True)
    async with lim.permit(10) as p:
        lim.rate_limited(p, retry_after=None)  # resets the run of consecutive failures
    async with lim.permit(10) as p:
        lim.failed(p, down=True)
    assert lim.breaker.state == "closed"
    async with lim.permit(10) as p:
        lim.failed(p, down=True)
    assert lim.breaker.state == "open"
    async with lim.permit(10) as p:  # the half-open probe answered 429: the endpoint is up
        assert p.probe
        lim.rate_limited(p, retry_after=None)
    assert lim.breaker.state == "closed"


async def test_a_permit_left_unreported_gives_up_the_probe_only_if_it_was_the_probe() -> None:
    lim = EndpointLimits(breaker_threshold=1, breaker_cooldown_s=0.0, clock=FakeClock())
    older = lim.permit(10)
    await older.__aenter__()  # sent while the breaker was closed
    async with lim.permit(10) as p:
        lim.failed(p, down=True)
    async with lim.permit(10) as probe:
        assert probe.probe and lim.breaker._probing
        await older.__aexit__(RuntimeError, RuntimeError("client-side bug"), None)  # unreported
        assert lim.breaker._probing is True  # the probe in flight is still the only one
        lim.succeeded(probe, 10, 0, 0)
    assert lim.breaker.state == "closed" and lim.concurrency.in_flight == 0


# ---- a permit granted now or not at all (ramp-down backups) ---------------------------------


def test_try_permit_grants_now_and_takes_from_both_buckets() -> None:
    lim = EndpointLimits(max_concurrency=4, rpm=600, tpm=6000, headroom=1.0, burst_s=1.0,
                         clock=FakeClock(t=5.0))  # requests: 10 banked; tokens: 100 banked
    p = lim.try_permit(400)  # estimate 100 tokens: the whole bank, and keep is 0
    assert (p.estimate, p.probe, p.sent_at, p.waited_s, p.reported) == (100, False, 5.0, 0.0, False)
    assert (lim.concurrency.in_flight, lim.requests.level, lim.tokens.level) == (1, 9.0, 0.0)
    bare = EndpointLimits(clock=FakeClock())
    assert bare.try_permit(40).estimate == 10 and bare.concurrency.in_flight == 1


def test_try_permit_refuses_where_permit_would_wait_and_takes_nothing() -> None:
    def untouched(lim: EndpointLimits) -> tuple:
        return lim.concurrency.in_flight, lim.requests.level, lim.tokens.level

    def limits(**kw) -> EndpointLimits:
        return EndpointLimits(rpm=600, tpm=6000, headroom=1.0, clock=FakeClock(), **kw)

    closed = limits()
    closed.closed = True
    broken = limits(breaker_threshold=1)
    broken.breaker.failure()
    paused = limits()
    paused.pause(0.5)
    full = limits(max_concurrency=1)
    full.concurrency.try_acquire()
    for lim, in_flight in ((closed, 0), (broken, 0), (paused, 0), (full, 1)):
        assert lim.try_permit(10) is None
        assert untouched(lim) == (in_flight, 10.0, 100.0)
    ended = limits()
    ended.pause(0.0)  # a pause ending now holds nothing
    assert ended.try_permit(10) is not None


def test_try_permit_keeps_its_share_of_the_request_bucket_to_the_token() -> None:
    lim = EndpointLimits(rpm=600, headroom=1.0, clock=FakeClock())  # 10 banked
    lim.requests.reserve(4)
    assert lim.try_permit(10, keep=0.5) is not None  # 6 -> 5: exactly half is left
    assert lim.try_permit(10, keep=0.5) is None  # 5 -> 4 would dip into the half kept
    assert (lim.concurrency.in_flight, lim.requests.level) == (1, 5.0)


def test_try_permit_keeps_its_share_of_the_token_bucket_to_the_token() -> None:
    lim = EndpointLimits(tpm=6000, headroom=1.0, clock=FakeClock())  # 100 banked
    lim.tokens.reserve(40)
    assert lim.try_permit(40, keep=0.5).estimate == 10  # 60 -> 50: exactly half is left
    assert lim.try_permit(40, keep=0.5) is None  # 50 -> 40 would dip into the half kept
    assert (lim.concurrency.in_flight, lim.tokens.level) == (1, 50.0)


async def test_a_permit_that_waited_for_its_slot_is_dated_when_it_got_it() -> None:
    """A request that queued for a slot counts from when it got one: a cluster of 429s it
    answers backs the in-flight cap off (one sent before the last back-off would not)."""
    clock = FakeClock()
    lim = EndpointLimits(max_concurrency=2, clock=clock)
    for _ in range(2):
        async with lim.permit(10) as p:
            lim.rate_limited(p, retry_after=None)
    first = lim.permit(10)
    p1 = await first.__aenter__()
    second = lim.permit(10)
    p2 = await second.__aenter__()  # both slots taken
    queued = asyncio.ensure_future(lim.permit(10).__aenter__())
    await asyncio.sleep(0)
    assert not queued.done()
    t0 = clock.now()
    clock.advance(5.0)
    lim.succeeded(p1, 10, 0, 0)
    await first.__aexit__(None, None, None)
    p3 = await queued
    assert p3.sent_at == t0 + 5.0
    lim.rate_limited(p3, retry_after=None)  # the third of three: a cluster
    assert (lim.concurrency.decreases, lim.concurrency.limit) == (1, pytest.approx(1.4))
    lim.succeeded(p2, 10, 0, 0)
    await second.__aexit__(None, None, None)
