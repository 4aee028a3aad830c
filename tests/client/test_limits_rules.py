"""Endpoint-limit rules at their edges: a slot granted to a waiter that is cancelled in the same
breath, first come first served against newcomers, what may close an open breaker, a 429 as a
sign of life."""

from __future__ import annotations

import asyncio

from sweepbench.client.limits import AdaptiveConcurrency, CircuitBreaker, EndpointLimits


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += max(0.0, seconds)
        await asyncio.sleep(0)


async def test_a_slot_granted_to_a_waiter_cancelled_at_once_is_handed_on() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    granted = asyncio.create_task(c.acquire())
    behind = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    c.release()  # grants `granted` (counted in) ...
    granted.cancel()  # ... which is cancelled before it runs again
    await asyncio.gather(granted, return_exceptions=True)
    assert granted.cancelled()
    await asyncio.wait_for(behind, 1.0)  # the slot went on to the next waiter
    assert c.in_flight == 1
    c.release()
    assert c.in_flight == 0 and c.cap == 1
    await asyncio.wait_for(c.acquire(), 1.0)  # the cap did not shrink for good


async def test_a_slot_granted_and_cancelled_with_nobody_behind_is_free_again() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    granted = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    c.release()
    granted.cancel()
    await asyncio.gather(granted, return_exceptions=True)
    assert c.in_flight == 0 and not c._waiters


async def test_a_newcomer_queues_behind_a_waiter_already_granted() -> None:
    c = AdaptiveConcurrency(1)
    await c.acquire()
    order: list[str] = []

    async def take(name: str) -> None:
        await c.acquire()
        order.append(name)

    first = asyncio.create_task(take("first"))
    await asyncio.sleep(0)
    c.release()  # the slot is the first waiter's, though it has not run yet
    newcomer = asyncio.create_task(take("newcomer"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert order == ["first"] and not newcomer.done() and c.in_flight == 1
    c.release()
    await asyncio.wait_for(newcomer, 1.0)
    assert order == ["first", "newcomer"]


async def test_a_newcomer_waits_while_others_queue_even_under_the_cap() -> None:
    """Waiters queued at a shrunk cap are served before a caller that arrives later, even once
    the cap grows back."""
    clock = FakeClock()
    c = AdaptiveConcurrency(2, decrease=0.5, clock=clock)
    sent = [await c.acquire() for _ in range(2)]
    c.on_overload(sent[0])
    assert c.cap == 1
    waiter = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    c.release()  # 1 in flight, at the cap: the waiter still waits
    await asyncio.sleep(0)
    assert not waiter.done()
    c.limit = 2.0  # as on_success would, without its wake-up: a free slot and a queue
    late = asyncio.create_task(c.acquire())
    await asyncio.sleep(0)
    assert not late.done()
    c.release()
    await asyncio.wait_for(waiter, 1.0)
    await asyncio.wait_for(late, 1.0)
    assert c.in_flight == 2


async def test_a_stale_success_does_not_close_an_open_breaker() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=5.0, clock=clock)
    br.failure()
    assert br.state == "open"
    br.success()  # a request sent before the breaker opened, answered late
    assert br.state == "open"
    t0 = clock.now()
    assert await br.wait() is True  # still the full cool-down, then a probe
    assert clock.now() - t0 == 5.0


async def test_any_answer_while_half_open_closes_the_breaker() -> None:
    clock = FakeClock()
    br = CircuitBreaker(threshold=1, cooldown_s=5.0, clock=clock)
    br.failure()
    assert await br.wait() is True and br.state == "half_open"
    br.success()  # an older request answering shows the endpoint alive too
    assert br.state == "closed"
    assert await br.wait() is False


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
