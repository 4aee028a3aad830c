"""Endpoint limits with a fake clock: buckets, adaptive concurrency, the circuit breaker."""

from __future__ import annotations

import asyncio

import pytest

from sweepbench.client.limits import (
    ANSWERED,
    FAILED,
    LIMITED,
    AdaptiveConcurrency,
    AnswerWindow,
    BreakerOpen,
    CircuitBreaker,
    EndpointLimits,
    LimitsPool,
    TokenBucket,
    TokenEstimator,
)

from ..support import FakeClock

# ---- token bucket -------------------------------------------------------------------------


def test_bucket_reserves_into_debt_and_refills_at_rate() -> None:
    clock = FakeClock()
    b = TokenBucket(rate=10.0, capacity=5.0, clock=clock)
    assert [b.reserve(1) for _ in range(5)] == [0.0] * 5  # the burst
    assert b.reserve(1) == pytest.approx(0.1)  # 1 token of debt at 10/s
    assert b.reserve(1) == pytest.approx(0.2)  # served in arrival order
    clock.advance(0.2)
    assert b.level == pytest.approx(0.0)
    clock.advance(10.0)
    assert b.level == 5.0  # never more than capacity


def test_bucket_larger_than_capacity_still_goes() -> None:
    clock = FakeClock()
    b = TokenBucket(rate=100.0, capacity=50.0, clock=clock)
    assert b.reserve(250) == pytest.approx(2.0)  # no starvation, just a longer wait


def test_bucket_adjust_corrects_estimates() -> None:
    clock = FakeClock()
    b = TokenBucket(rate=1.0, capacity=100.0, clock=clock)
    b.reserve(80)
    b.adjust(30)  # the call used 50, not 80
    assert b.level == pytest.approx(50.0)
    b.adjust(-70)  # or it used more
    assert b.level == pytest.approx(-20.0)
    assert b.reserve(0) == pytest.approx(20.0)
    b.adjust(1000)
    assert b.level == 100.0


def test_per_minute_bucket() -> None:
    clock = FakeClock()
    b = TokenBucket.per_minute(600, burst_s=1.0, headroom=0.5, clock=clock)
    assert b.rate == pytest.approx(5.0) and b.capacity == pytest.approx(5.0)
    tiny = TokenBucket.per_minute(6, clock=clock)
    assert tiny.capacity == 1.0  # at least one whole request


async def test_bucket_acquire_sleeps_and_refunds_on_cancel() -> None:
    clock = FakeClock()
    b = TokenBucket(rate=2.0, capacity=1.0, clock=clock)
    assert await b.acquire(1) == 0.0
    assert await b.acquire(1) == pytest.approx(0.5)
    assert clock.slept == [pytest.approx(0.5)]

    class Stuck(FakeClock):
        async def sleep(self, seconds: float) -> None:
            await asyncio.Event().wait()

    stuck = Stuck()
    b2 = TokenBucket(rate=1.0, capacity=1.0, clock=stuck)
    b2.reserve(1)
    task = asyncio.create_task(b2.acquire(3))
    await asyncio.sleep(0)
    assert b2.level == pytest.approx(-3.0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert b2.level == pytest.approx(0.0)


def test_token_estimator_learns_ratio_and_completion() -> None:
    est = TokenEstimator()
    assert est.estimate(400) == 100  # four bytes per token before any usage is seen
    est.observe(400, prompt_tokens=200, completion_tokens=40)
    assert est.estimate(400) == 240
    for _ in range(50):
        est.observe(1000, prompt_tokens=250, completion_tokens=10)
    assert est.estimate(1000) == pytest.approx(260, abs=2)


# ---- adaptive concurrency -----------------------------------------------------------------


async def test_concurrency_caps_and_serves_fifo() -> None:
    c = AdaptiveConcurrency(2)
    await c.acquire()
    await c.acquire()
    order: list[int] = []

    async def waiter(i: int) -> None:
        await c.acquire()
        order.append(i)

    tasks = [asyncio.create_task(waiter(i)) for i in range(3)]
    await asyncio.sleep(0)
    assert order == [] and c.in_flight == 2
    c.release()
    await asyncio.sleep(0)
    assert order == [0]
    c.release()
    c.release()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2] and c.in_flight == 2


async def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    task = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    c.release()
    assert c.in_flight == 0
    await c.acquire()
    assert c.in_flight == 1


async def test_waiter_cancelled_then_popped_by_a_release_stays_cancelled() -> None:
    """The Ctrl-C case: the waiter is cancelled, and before it runs again a release() pops
    its (done) future; leaving must neither raise ValueError (removed twice, which replaced
    the CancelledError) nor take or leak a slot."""
    c = AdaptiveConcurrency(1)
    await c.acquire()
    cancelled = asyncio.create_task(c.acquire())
    behind = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    cancelled.cancel()
    c.release()  # pops the cancelled waiter (done), grants the one behind it
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    await behind
    assert c.in_flight == 1 and not c._waiters
    c.release()
    assert c.in_flight == 0


async def test_aimd_shrinks_on_overload_once_per_window_and_grows_back() -> None:
    clock = FakeClock()
    c = AdaptiveConcurrency(20, min_limit=2, decrease=0.5, clock=clock)
    sent = [await c.acquire() for _ in range(10)]
    clock.advance(1)
    for s in sent:  # a burst of 429s from requests in flight together: one decrease
        c.on_overload(s)
    assert c.limit == 10.0 and c.decreases == 1
    clock.advance(1)
    c.on_overload(clock.now())  # a request sent after the decrease: decrease again
    assert c.limit == 5.0
    for _ in range(10):
        clock.advance(1)
        c.on_overload(clock.now())
    assert c.limit == 2.0 and c.cap == 2  # bounded below
    for _ in range(2000):
        c.on_success()
    assert c.limit == 20.0  # grew back, bounded by max_concurrency
    # roughly +1 per `limit` successes
    c2 = AdaptiveConcurrency(100, initial=10)
    for _ in range(10):
        c2.on_success()
    assert 10.9 < c2.limit < 11.1


async def test_shrunk_limit_holds_new_callers_until_in_flight_drains() -> None:
    clock = FakeClock()
    c = AdaptiveConcurrency(4, decrease=0.5, clock=clock)
    sent = [await c.acquire() for _ in range(4)]
    c.on_overload(sent[0])
    assert c.cap == 2
    task = asyncio.create_task(c.acquire())
    for _ in range(2):
        c.release()
        await asyncio.sleep(0)
        assert not task.done()  # 3, then 2 in flight: still at the cap
    c.release()
    await asyncio.sleep(0)
    assert task.done() and c.in_flight == 2


# ---- circuit breaker ----------------------------------------------------------------------


async def test_breaker_state_machine() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=3, cooldown_s=5.0, max_cooldown_s=15.0, clock=clock)
    assert await br.wait() is False
    br.failure()
    br.failure()
    br.success()  # a success resets the count
    br.failure()
    br.failure()
    assert br.state == "closed"
    br.failure()
    assert br.state == "open" and br.opened == 1

    # open: a caller waits out the cool-down, then is the half-open probe
    t0 = clock.now()
    assert await br.wait() is True
    assert br.state == "half_open" and clock.now() - t0 == pytest.approx(5.0)

    # probe fails: open again, cool-down doubled
    br.failure(probe=True)
    assert br.state == "open" and br.opened == 2
    t1 = clock.now()
    assert await br.wait() is True
    assert clock.now() - t1 == pytest.approx(10.0)
    br.failure(probe=True)
    t2 = clock.now()
    assert await br.wait() is True
    assert clock.now() - t2 == pytest.approx(15.0)  # capped

    # probe succeeds: closed, cool-down reset
    br.success(probe=True)
    assert br.state == "closed" and br.failures == 0
    assert await br.wait() is False
    for _ in range(3):
        br.failure()
    t3 = clock.now()
    assert await br.wait() is True
    assert clock.now() - t3 == pytest.approx(5.0)


async def test_half_open_lets_one_probe_through_and_releases_the_rest() -> None:
    br = CircuitBreaker(threshold=1, cooldown_s=0.01)
    br.failure()
    results = await asyncio.wait_for(asyncio.gather(
        *(br.wait() for _ in range(5)), _succeed_probe_soon(br)), 2.0)
    assert sorted(results[:5]) == [False, False, False, False, True]
    assert br.state == "closed"


async def _succeed_probe_soon(br: CircuitBreaker) -> None:
    while br.state != "half_open":
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.01)
    br.success(probe=True)


async def test_abandoned_probe_hands_probing_to_another_waiter() -> None:
    br = CircuitBreaker(threshold=1, cooldown_s=0.0)
    br.failure()
    assert await br.wait() is True
    other = asyncio.create_task(br.wait())
    await asyncio.sleep(0.01)
    assert not other.done()
    br.abandon(True)
    assert await asyncio.wait_for(other, 1.0) is True


async def test_breaker_gives_up_after_max_wait() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=100.0, clock=clock)
    br.failure()
    with pytest.raises(BreakerOpen) as info:
        await br.wait(max_wait_s=30.0)
    assert info.value.waited_s == pytest.approx(30.0)


# ---- endpoint limits ----------------------------------------------------------------------


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


def test_answer_window_counts_its_last_answers_only() -> None:
    w = AnswerWindow(size=4, share=0.5, min_count=2)
    w.add(LIMITED)
    assert not w.limit_hit()  # one 429: under min_count
    w.add(FAILED)
    w.add(LIMITED)
    assert w.limit_hit() and (w.limited, w.failed, len(w)) == (2, 1, 3)
    for _ in range(3):
        w.add(ANSWERED)  # full at four: the first LIMITED and the FAILED drop out
    assert (w.limited, w.failed, len(w)) == (1, 0, 4)
    w.add(ANSWERED)
    assert (w.limited, w.failed, len(w)) == (0, 0, 4)
    w.add(LIMITED)
    w.add(LIMITED)
    assert w.limit_hit()  # 2 of 4: at the share
    w.add(ANSWERED)
    w.add(ANSWERED)
    assert w.limit_hit()  # still 2 of 4
    w.add(ANSWERED)
    assert not w.limit_hit() and w.limited == 1  # the first of the two dropped out
    assert w.failing_share == 0.0 and AnswerWindow(50, 0.3, 3).failing_share == 0.0


def test_answer_window_share_needs_both_count_and_share() -> None:
    w = AnswerWindow(size=10, share=0.3, min_count=3)
    for outcome in (LIMITED, LIMITED, LIMITED):
        w.add(outcome)
    assert w.limit_hit()  # 3 of 3
    for _ in range(7):
        w.add(ANSWERED)
    assert w.limit_hit()  # 3 of 10: at the share
    w.add(FAILED)  # a LIMITED drops out: 2 of 10
    assert not w.limit_hit() and w.failing_share == pytest.approx(0.1)
    for size, share, min_count in ((0, 0.3, 3), (10, 1.5, 3), (10, -0.1, 3), (10, 0.3, 0)):
        with pytest.raises(ValueError, match=rf"share in \[0, 1\]; got {size}, {min_count}, "):
            AnswerWindow(size, share, min_count)
    one = AnswerWindow(1, 1.0, 1)  # the smallest window; every answer a 429 at share 1
    one.add(FAILED)
    assert one.failing_share == 1.0 and not one.limit_hit()
    one.add(LIMITED)
    assert one.limit_hit() and one.failing_share == 0.0 and (one.limited, one.failed) == (1, 0)


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
